"""Which delivered reminder a snooze or a "done" means when the person names none: the
one whose message they replied to (or pressed under, or reacted to), else the one that
went off lately. Every function runs inside the caller's transaction."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import Table, select
from sqlalchemy.orm import Session

from groupmate.storage import changes
from groupmate.storage.changes import Requester
from groupmate.storage.errors import SnoozeTargetError
from groupmate.storage.models import REMINDER_ACTIVE, Delivery, Reminder
from groupmate.storage.reminder_rows import ReminderView, reminder_view
from groupmate.storage.vocabulary import ReminderAction

_reminders = cast(Table, Reminder.__table__)
_deliveries = cast(Table, Delivery.__table__)


def by_message(session: Session, chat_id: str, message_id: str) -> list[ReminderView]:
    """The reminders a platform message of this chat was: a delivery of one (see
    `changes.by_message`), else the bot's confirmation of one."""
    found = changes.by_message(session, chat_id, message_id)
    if found:
        return found
    rows = session.execute(
        select(_reminders).where(
            _reminders.c.chat_id == chat_id, _reminders.c.confirmed_as == message_id
        )
    ).all()
    return [reminder_view(row) for row in rows]


def named_target(
    session: Session,
    chat_id: str,
    requester: Requester,
    reference: str | None,
    message_id: str | None,
    *,
    may: ReminderAction,
) -> ReminderView | None:
    """The reminder `reference` names, else the one `message_id` was; None when neither
    is given. SnoozeTargetError for a message that is no reminder's, or several's."""
    if reference is not None:
        # A done or a "me too" is checked against its reminder's rule (storage.acks), not
        # a snooze's: found as an admin finds it (a private chat's stays its owner's).
        finder = requester if may == "snooze" else replace(requester, is_admin=True)
        return changes.locate(session, chat_id, reference, finder, may="snooze")
    if message_id is None:
        return None
    found = by_message(session, chat_id, message_id)
    if not found:
        raise SnoozeTargetError("not_a_reminder", action=may)
    if len(found) > 1:
        raise SnoozeTargetError("several_match", labels=tuple(r.label for r in found), action=may)
    return found[0]


def only_recent(
    session: Session,
    chat_id: str,
    requester: Requester,
    since: datetime,
    recent: timedelta,
    *,
    may: ReminderAction,
) -> ReminderView:
    """The one reminder that went off in this chat since `since` (in a private chat, of
    the requester's); refused when none or several did."""
    delivered = changes.recently_delivered(session, chat_id, since)
    if requester.private:
        delivered = [r for r in delivered if r.created_by == requester.user_id]
    if not delivered:
        raise SnoozeTargetError("none_recent", window=recent, action=may)
    if len(delivered) > 1:
        labels = tuple(r.label for r in delivered)
        raise SnoozeTargetError("several_recent", labels=labels, window=recent, action=may)
    return delivered[0]


def delivered_target(
    session: Session,
    chat_id: str,
    requester: Requester,
    now: datetime,
    *,
    reference: str | None,
    message_id: str | None,
    recent: timedelta,
    may: ReminderAction,
) -> ReminderView:
    """By reference; else the replied-to message's; else the only recent one."""
    target = named_target(session, chat_id, requester, reference, message_id, may=may)
    if target is None:
        target = only_recent(session, chat_id, requester, now - recent, recent, may=may)
    return target


def in_chat(session: Session, chat_id: str, reminder_id: str) -> ReminderView | None:
    """The reminder a button names, if it is this chat's (any status): a press carries
    its id as untrusted data, so another chat's id finds nothing."""
    row = session.execute(
        select(_reminders).where(_reminders.c.id == reminder_id, _reminders.c.chat_id == chat_id)
    ).first()
    return None if row is None else reminder_view(row)


def pending_snooze(session: Session, root_id: str) -> ReminderView | None:
    """The reminder's snooze that has yet to go off, if any."""
    row = session.execute(
        select(_reminders).where(
            _reminders.c.snooze_of == root_id, _reminders.c.status == REMINDER_ACTIVE
        )
    ).first()
    return None if row is None else reminder_view(row)


def on_message(
    session: Session, chat_id: str, message_id: str
) -> tuple[ReminderView, datetime | None] | None:
    """The reminder a platform message of this chat is, and which occurrence (None: its
    confirmation); None when it is none, or could be several (no guessing)."""
    rows = session.execute(
        select(_reminders, _deliveries.c.occurrence.label("delivered"))
        .join(_deliveries, _deliveries.c.reminder_id == _reminders.c.id)
        .where(_reminders.c.chat_id == chat_id, _deliveries.c.message_id == message_id)
    ).all()
    if len(rows) == 1:
        return reminder_view(rows[0]), rows[0].delivered
    if rows:
        return None
    confirmed = by_message(session, chat_id, message_id)
    return (confirmed[0], None) if len(confirmed) == 1 else None


def created_since(session: Session, chat_id: str, created_by: str, since: datetime) -> list[str]:
    """Ids of the reminders (not snoozes) this person set in this chat since `since`."""
    return list(
        session.scalars(
            select(_reminders.c.id).where(
                _reminders.c.chat_id == chat_id,
                _reminders.c.created_by == created_by,
                _reminders.c.created_at >= since,
                _reminders.c.snooze_of.is_(None),
            )
        )
    )
