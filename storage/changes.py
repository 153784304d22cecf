"""Changing reminders after the fact: edit, pause, resume, snooze, and the delivery history.

Each function runs inside the caller's transaction, on a row the caller locked with
`locate(..., for_update=True)`, so a change and a firing of the same reminder are
serialized: the claim either sees the new time or has already moved the reminder on.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, func, or_, select, update
from sqlalchemy.orm import Session

from groupmate.storage.errors import ReminderNotFoundError, ReminderPermissionError
from groupmate.storage.models import (
    DELIVERED,
    OUTCOME_PENDING,
    REMINDER_ACTIVE,
    REMINDER_CANCELLED,
    REMINDER_DONE,
    REMINDER_PAUSED,
    Chat,
    Delivery,
    Reminder,
)
from groupmate.storage.recurrence import Schedule
from groupmate.storage.reminder_rows import (
    Audience,
    NewReminder,
    ReminderView,
    ScheduledAction,
    reminder_view,
    schedule_columns,
)
from groupmate.storage.repository import (
    REMINDER_FIRST,
    create_reminder,
    get_reminder,
    parse_reference,
)
from groupmate.storage.vocabulary import HistoryOutcome, ReminderAction

_chats = cast(Table, Chat.__table__)
_reminders = cast(Table, Reminder.__table__)
_deliveries = cast(Table, Delivery.__table__)

LIVE = (REMINDER_ACTIVE, REMINDER_PAUSED)


@dataclass(frozen=True, slots=True)
class Requester:
    """Who asks for a change: from the message context, never from arguments."""

    user_id: str
    is_admin: bool = False
    private: bool = False
    # Only what they created, even a reminder meant for them (the tools policy's
    # `who: creator_or_admin`).
    owner_only: bool = False


@dataclass(frozen=True, slots=True)
class ReminderChange:
    """What an edit sets; None leaves that part as it is."""

    content: str | None = None
    schedule: Schedule | None = None
    first_fire_at: datetime | None = None
    audience: Audience | None = None
    # With new content: the action it names, or None for a plain text (the handler
    # reads the new words; an edit of the text alone never keeps a stale action).
    action: ScheduledAction | None = None


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One line of a chat's reminder history."""

    at: datetime
    short_id: int
    content: str
    outcome: HistoryOutcome  # a finished delivery's, or "snoozed"
    late: bool = False
    detail: str | None = None  # the error of a failed send
    # A snooze's new time, on the chat's wall clock (naive: the reminder's own zone).
    until: datetime | None = None


def locate(
    session: Session,
    chat_id: str,
    reference: str,
    requester: Requester,
    *,
    for_update: bool = True,
    may: ReminderAction = "change",
) -> ReminderView:
    """A live (active or paused) reminder of this chat the requester may `may`; to snooze,
    also one that is done (a one-time reminder or a snooze that went off)."""
    key = parse_reference(reference)
    found = None
    if key is not None:
        column = _reminders.c.short_id if isinstance(key, int) else _reminders.c.id
        statuses = (*LIVE, REMINDER_DONE) if may == "snooze" else LIVE
        query = select(_reminders).where(
            _reminders.c.chat_id == chat_id, column == key, _reminders.c.status.in_(statuses)
        )
        query = query.order_by(*REMINDER_FIRST)
        row = session.execute(query.with_for_update() if for_update else query).first()
        found = None if row is None else reminder_view(row)
    if found is None or (requester.private and found.created_by != requester.user_id):
        # A full id is internal (a reply to a reminder's message resolves to one): don't
        # give it back; the number a user typed is.
        if isinstance(key, int):
            raise ReminderNotFoundError(key)
        shown = None if isinstance(key, str) else reference.strip()
        raise ReminderNotFoundError(None, reference=shown)
    allowed = (
        found.created_by == requester.user_id
        or requester.is_admin
        or (may == "snooze" and not requester.owner_only and _is_for(found, requester.user_id))
    )
    if not allowed:
        raise ReminderPermissionError(found.short_id, found.created_by_name, may)
    return found


def _is_for(reminder: ReminderView, user_id: str) -> bool:
    audience = reminder.audience
    return audience.everyone or any(m.user_id == user_id for m in audience.mentions)


def apply_change(
    session: Session, reminder: ReminderView, change: ReminderChange, now: datetime
) -> ReminderView:
    """Write an edit; a paused reminder stays paused (its next time waits for resume)."""
    values: dict[str, Any] = {
        "updated_at": now,
        "version": _reminders.c.version + 1,
        **_message_columns(change),
    }
    if change.schedule is not None:
        schedule = change.schedule
        values.update(schedule_columns(schedule))
        if reminder.status == REMINDER_ACTIVE:
            values["next_fire_at"] = change.first_fire_at
    session.execute(update(_reminders).where(_reminders.c.id == reminder.id).values(**values))
    _follow_in_snoozes(session, reminder, change, now)
    return get_reminder(session, reminder.id)


def _message_columns(change: ReminderChange) -> dict[str, Any]:
    """The columns of what the message says and whom it mentions."""
    values: dict[str, Any] = {}
    if change.content is not None:
        values["content"] = change.content
        values["action"] = change.action.columns() if change.action is not None else None
    if change.audience is not None:
        values.update(change.audience.columns())
    return values


def _follow_in_snoozes(
    session: Session, reminder: ReminderView, change: ReminderChange, now: datetime
) -> None:
    """A pending snooze repeats its reminder: new words or people reach it too."""
    values = _message_columns(change)
    if values:
        session.execute(
            update(_reminders)
            .where(_reminders.c.snooze_of == reminder.id, _reminders.c.status.in_(LIVE))
            .values(**values, version=_reminders.c.version + 1, updated_at=now)
        )


def set_paused(
    session: Session, reminder: ReminderView, paused: bool, now: datetime
) -> ReminderView:
    """Pause (no next time, and no pending snooze) or resume (the rule's next time). A
    repeat whose limit ("until Friday", "5 times") passed while it was paused has no next
    time: resuming ends it as done, as it would have ended running (kept in history)."""
    if paused:
        values: dict[str, Any] = {"status": REMINDER_PAUSED, "next_fire_at": None}
        cancel_snoozes(session, reminder.id, now)  # paused means quiet, snoozes included
    else:
        next_fire = reminder.schedule.first_after(now)
        if next_fire is not None:
            values = {"status": REMINDER_ACTIVE, "next_fire_at": next_fire}
        elif reminder.schedule.limited:
            values = {"status": REMINDER_DONE, "next_fire_at": None}
        else:
            raise ReminderNotFoundError(reminder.short_id, "past_due")
    session.execute(
        update(_reminders)
        .where(_reminders.c.id == reminder.id)
        .values(updated_at=now, version=_reminders.c.version + 1, **values)
    )
    return get_reminder(session, reminder.id)


def cancel_snoozes(session: Session, reminder_id: str, now: datetime) -> None:
    """A cancelled reminder takes its pending snoozes with it."""
    session.execute(
        update(_reminders)
        .where(_reminders.c.snooze_of == reminder_id, _reminders.c.status.in_(LIVE))
        .values(
            status=REMINDER_CANCELLED,
            next_fire_at=None,
            version=_reminders.c.version + 1,
            updated_at=now,
        )
    )


def delivered_in(session: Session, reminder: ReminderView) -> datetime | None:
    """The latest occurrence of `reminder` (or of its snoozes) that reached the chat."""
    ids = select(_reminders.c.id).where(
        or_(_reminders.c.id == reminder.id, _reminders.c.snooze_of == reminder.id)
    )
    latest: datetime | None = session.scalar(
        select(func.max(_deliveries.c.occurrence)).where(
            _deliveries.c.reminder_id.in_(ids),
            _deliveries.c.outcome.in_(DELIVERED),
        )
    )
    return latest


def by_message(session: Session, chat_id: str, message_id: str) -> list[ReminderView]:
    """The reminders whose deliveries the platform knows as `message_id` in this chat,
    one per reminder (a snooze going off counts as its reminder), newest first.

    Usually one. More than one only where a platform gives no id of its own to what a bot
    sends (DingTalk: the adapter names a message by its text), so two reminders with the
    same words share one: the caller must ask which, never pick."""
    rows = session.execute(
        select(_reminders)
        .join(_deliveries, _deliveries.c.reminder_id == _reminders.c.id)
        .where(_reminders.c.chat_id == chat_id, _deliveries.c.message_id == message_id)
        .order_by(_deliveries.c.occurrence.desc())
    ).all()
    roots = list(dict.fromkeys(row.snooze_of or row.id for row in rows))
    if len(roots) < 2:  # the one the delivery was (its root is located by the caller)
        return [reminder_view(row) for row in rows[:1]]
    by_id = {
        row.id: reminder_view(row)
        for row in session.execute(select(_reminders).where(_reminders.c.id.in_(roots))).all()
    }
    return [by_id[root] for root in roots if root in by_id]


def recently_delivered(session: Session, chat_id: str, since: datetime) -> list[ReminderView]:
    """Reminders of this chat delivered since `since`, newest first, one entry each; a
    snooze going off is its reminder going off again. Deleted ones are left out."""
    root_id = func.coalesce(_reminders.c.snooze_of, _reminders.c.id)
    latest = (
        select(root_id.label("root_id"), func.max(_deliveries.c.occurrence).label("last"))
        .select_from(_reminders)
        .join(_deliveries, _deliveries.c.reminder_id == _reminders.c.id)
        .where(
            _reminders.c.chat_id == chat_id,
            _deliveries.c.outcome.in_(DELIVERED),
            _deliveries.c.finished_at >= since,
        )
        .group_by(root_id)
        .subquery()
    )
    rows = session.execute(
        select(_reminders)
        .join(latest, latest.c.root_id == _reminders.c.id)
        .where(_reminders.c.status != REMINDER_CANCELLED)
        .order_by(latest.c.last.desc())
    ).all()
    return [reminder_view(row) for row in rows]


def snooze(
    session: Session, root: ReminderView, until: datetime, now: datetime, requester: Requester
) -> ReminderView:
    """Fire `root`'s content again at `until`: a one-time reminder of its own.

    One pending snooze per reminder: snoozing again moves it rather than adding another.
    A reminder for everyone, snoozed by a member who neither set it nor administers the
    chat, comes back without pinging everyone: else any member could ping the whole
    chat every minute.
    """
    audience = root.audience
    if audience.everyone and not (requester.is_admin or requester.user_id == root.created_by):
        audience = replace(audience, everyone=False)
    pending = session.execute(
        select(_reminders)
        .where(_reminders.c.snooze_of == root.id, _reminders.c.status == REMINDER_ACTIVE)
        .with_for_update()
    ).first()
    schedule = Schedule.once_at(until, root.schedule.timezone)
    if pending is not None:
        session.execute(
            update(_reminders)
            .where(_reminders.c.id == pending.id)
            .values(
                local_time=schedule.wall_time,
                local_fold=bool(schedule.wall_time.fold),
                local_date=schedule.on_date,
                next_fire_at=until,
                version=_reminders.c.version + 1,
                updated_at=now,
                **({} if audience.everyone else {"everyone": False}),
            )
        )
        return get_reminder(session, pending.id)
    new = NewReminder(
        chat_id=root.chat_id,
        chat_type=root.chat_type,
        # The creator's reminder still: it mentions who the original mentions.
        created_by=root.created_by,
        created_by_name=root.created_by_name,
        content=root.content,
        schedule=schedule,
        first_fire_at=until,
        audience=audience,
        snooze_of=root.id,
        action=root.action,  # a snoozed "/summary" runs again later
        me_too=root.me_too,
    )
    return create_reminder(session, new, now)


def history(
    session: Session, chat_id: str, *, limit: int, created_by: str | None = None
) -> list[HistoryEntry]:
    """The chat's latest deliveries and snoozes, newest first."""
    conditions = [_reminders.c.chat_id == chat_id, _deliveries.c.outcome != OUTCOME_PENDING]
    if created_by is not None:
        conditions.append(_reminders.c.created_by == created_by)
    root = _reminders.alias("root")
    label = func.coalesce(root.c.short_id, _reminders.c.short_id)
    deliveries = session.execute(
        select(
            _deliveries.c.occurrence,
            _deliveries.c.finished_at,
            _deliveries.c.outcome,
            _deliveries.c.late,
            _deliveries.c.last_error,
            _reminders.c.content,
            label.label("label"),
        )
        .join(_reminders, _reminders.c.id == _deliveries.c.reminder_id)
        .outerjoin(root, root.c.id == _reminders.c.snooze_of)
        .where(*conditions)
        .order_by(_deliveries.c.occurrence.desc())
        .limit(limit)
    ).all()
    entries = [
        # When it happened: sent (or given up) is what "did it go out?" asks about.
        HistoryEntry(
            row.finished_at or row.occurrence,
            row.label,
            row.content,
            row.outcome,
            row.late,
            row.last_error,
        )
        for row in deliveries
    ]
    snooze_conditions = [_reminders.c.chat_id == chat_id, _reminders.c.snooze_of.is_not(None)]
    if created_by is not None:
        snooze_conditions.append(_reminders.c.created_by == created_by)
    snoozes = session.execute(
        select(
            _reminders.c.created_at,
            _reminders.c.content,
            _reminders.c.next_fire_at,
            _reminders.c.local_date,
            _reminders.c.local_time,
            root.c.short_id,
        )
        .join(root, root.c.id == _reminders.c.snooze_of)
        .where(*snooze_conditions)
        .order_by(_reminders.c.created_at.desc())
        .limit(limit)
    ).all()
    entries += [
        HistoryEntry(
            row.created_at,
            row.short_id,
            row.content,
            "snoozed",
            until=datetime.combine(row.local_date, row.local_time),
        )
        for row in snoozes
    ]
    entries.sort(key=lambda entry: entry.at, reverse=True)
    return entries[:limit]
