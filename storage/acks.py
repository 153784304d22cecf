"""Acknowledgements ("done") and "remind me too": who said done to which occurrence of a
reminder, whether that completes an "until done" reminder's rule, and adding or taking
off a member of a group reminder's people. Every function runs inside the caller's
transaction; the reminder's row is locked first, so two people saying done at once, or
a done and a claim, are serialized.

An acknowledgement is recorded on the reminder itself (a snooze's done is its
reminder's), per occurrence. For an "until done" reminder (`ack` set) every
acknowledgement since it was set counts towards its rule: when the rule is complete the
reminder ends as done in the same transaction, so no claim fires it again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Row, Table, or_, select, update
from sqlalchemy.orm import Session

from groupmate.storage import changes, targets
from groupmate.storage.changes import LIVE, Requester
from groupmate.storage.dialect import insert_ignoring_conflicts, rowcount
from groupmate.storage.errors import (
    AckNotNeededError,
    MeTooError,
    ReminderNotFoundError,
    ReminderPermissionError,
    ReminderStateError,
)
from groupmate.storage.models import (
    REMINDER_DONE,
    Acknowledgement,
    Delivery,
    Reminder,
)
from groupmate.storage.outgoing import Member
from groupmate.storage.reminder_rows import Audience, ReminderView, reminder_view
from groupmate.storage.repository import get_reminder
from groupmate.storage.vocabulary import AckRule, AckVia, MeTooProblem

_reminders = cast(Table, Reminder.__table__)
_deliveries = cast(Table, Delivery.__table__)
_acks = cast(Table, Acknowledgement.__table__)


@dataclass(frozen=True, slots=True)
class Acked:
    """One person's done to one occurrence."""

    member: Member
    occurrence: datetime
    at: datetime
    via: AckVia


@dataclass(frozen=True, slots=True)
class AckResult:
    """What a done did. `new`: False when this person had said done to this occurrence
    already (nothing changed). `complete`: the reminder's rule is met (a reminder without
    one: someone said done); `ended`: this done ended an "until done" reminder.
    `acked` and `waiting`: who has and who hasn't said done (for an "until done"
    reminder, since it was set; else to this occurrence)."""

    reminder: ReminderView  # as it now is (done, if this ended it)
    occurrence: datetime
    new: bool
    complete: bool
    ended: bool
    acked: tuple[Member, ...]
    waiting: tuple[Member, ...]


@dataclass(frozen=True, slots=True)
class MeTooResult:
    """What "remind me too" did: `on` whether the person is now among the reminder's
    people; `changed` False when they already were (or weren't)."""

    reminder: ReminderView
    on: bool
    changed: bool


def must_ack(rule: AckRule | None, audience: Audience, creator: Member) -> tuple[Member, ...]:
    """Whose done the rule waits for: the asker; each person mentioned (the asker too
    when mentioned, or alone when no one else is); for "anyone" (and a reminder for
    everyone, whose people can't be listed), no one in particular."""
    if rule is None or rule == "anyone" or audience.everyone:
        return ()
    if rule == "asker":
        return (creator,)
    people = list(audience.mentions)
    if audience.creator or not people:
        people.insert(0, creator)
    return tuple(dict.fromkeys(people))


def acked_by(session: Session, reminder_ids: Iterable[str]) -> dict[str, tuple[Member, ...]]:
    """Who said done to each of the reminders (any occurrence), first first: the
    scheduler reads it for "until done" reminders only, to say who it still waits for."""
    rows = session.execute(
        select(_acks.c.reminder_id, _acks.c.user_id, _acks.c.name)
        .where(_acks.c.reminder_id.in_(list(reminder_ids)))
        .order_by(_acks.c.at, _acks.c.id)
    ).all()
    found: dict[str, list[Member]] = {}
    for row in rows:
        found.setdefault(row.reminder_id, []).append(Member(row.user_id, row.name))
    return {key: tuple(dict.fromkeys(members)) for key, members in found.items()}


def ended_by_ack(session: Session, reminder: Row[Any]) -> bool:
    """Whether this reminder row (its columns, perhaps among others) is an "until done"
    reminder whose rule its acknowledgements met, i.e. it ended because people said
    done, not because it reached its limit: a retry or a takeover of one of its
    deliveries would tell people who are done that they are still waited for. Others
    (the common case) are told apart without a query."""
    if reminder.status != REMINDER_DONE or reminder.ack is None:
        return False
    view = reminder_view(reminder)
    waiting_for = must_ack(view.ack, view.audience, Member(view.created_by, view.created_by_name))
    acked = acked_by(session, [view.id]).get(view.id, ())
    done_ids = {member.user_id for member in acked}
    return bool(acked) and all(member.user_id in done_ids for member in waiting_for)


def acks_of(session: Session, reminder_ids: Iterable[str]) -> dict[str, list[Acked]]:
    """Every done said to the reminders, by reminder, in order: for /history."""
    rows = session.execute(
        select(_acks)
        .where(_acks.c.reminder_id.in_(list(reminder_ids)))
        .order_by(_acks.c.at, _acks.c.id)
    ).all()
    found: dict[str, list[Acked]] = {}
    for row in rows:
        member = Member(row.user_id, row.name)
        found.setdefault(row.reminder_id, []).append(
            Acked(member, row.occurrence, row.at, cast(AckVia, row.via))
        )
    return found


def _root(session: Session, chat_id: str, target: ReminderView) -> ReminderView:
    """The reminder itself, its row locked: a snooze's is the reminder it snoozes."""
    root_id = target.snooze_of or target.id
    row = session.execute(
        select(_reminders)
        .where(_reminders.c.id == root_id, _reminders.c.chat_id == chat_id)
        .with_for_update()
    ).first()
    if row is None or row.status not in (*LIVE, REMINDER_DONE):
        raise ReminderNotFoundError(target.short_id, "finished")
    return reminder_view(row)


def _occurrence(session: Session, root: ReminderView, occurrence: datetime | None) -> datetime:
    """The occurrence said done to: the one given (a button names it), which must be
    one that went out of this reminder or its snoozes; else the latest that did."""
    if occurrence is None:
        latest = changes.delivered_in(session, root)
        if latest is None:
            raise ReminderStateError(root.short_id, "not_delivered")
        return latest
    ids = select(_reminders.c.id).where(
        or_(_reminders.c.id == root.id, _reminders.c.snooze_of == root.id)
    )
    # Any delivery row: a press can come before the send's outcome is written.
    found = session.scalar(
        select(_deliveries.c.occurrence).where(
            _deliveries.c.reminder_id.in_(ids), _deliveries.c.occurrence == occurrence
        )
    )
    if found is None:
        raise ReminderStateError(root.short_id, "not_delivered")
    return occurrence


def _check_may_ack(
    root: ReminderView, requester: Requester, waiting_for: tuple[Member, ...]
) -> None:
    """Without a rule: its setter, an admin, or someone it is for (as for a snooze).
    With one: "anyone", anyone in the chat; else whom the rule waits for."""
    if requester.private and root.created_by != requester.user_id:
        raise ReminderNotFoundError(root.short_id)
    if root.ack == "anyone" or (root.ack is not None and root.audience.everyone):
        return
    if root.ack is not None:
        if not any(m.user_id == requester.user_id for m in waiting_for):
            raise AckNotNeededError(root.short_id, tuple(m.name for m in waiting_for))
        return
    audience = root.audience
    is_for = audience.everyone or any(m.user_id == requester.user_id for m in audience.mentions)
    if not (
        root.created_by == requester.user_id
        or requester.is_admin
        or (is_for and not requester.owner_only)
    ):
        raise ReminderPermissionError(root.short_id, root.created_by_name, "done")


def acknowledge(
    session: Session,
    chat_id: str,
    requester: Requester,
    name: str,
    via: AckVia,
    now: datetime,
    *,
    reference: str | None = None,
    message_id: str | None = None,
    occurrence: datetime | None = None,
    recent: timedelta = timedelta(hours=1),
) -> AckResult:
    """Record that `requester` (shown as `name`) is done with a delivered reminder: by
    `reference`, else the one the platform message `message_id` was, else the one that
    went off within `recent`. An "until done" reminder whose rule this completes ends as
    done; any pending snooze of it is cancelled, since no one needs it any more."""
    target = targets.delivered_target(
        session,
        chat_id,
        requester,
        now,
        reference=reference,
        message_id=message_id,
        recent=recent,
        may="done",
    )
    root = _root(session, chat_id, target)
    creator = Member(root.created_by, root.created_by_name)
    waiting_for = must_ack(root.ack, root.audience, creator)
    _check_may_ack(root, requester, waiting_for)
    when = _occurrence(session, root, occurrence)
    # An "until done" reminder counts a person's done once, whichever occurrence it was
    # said to; another reminder, once per occurrence.
    scope = [_acks.c.reminder_id == root.id]
    if root.ack is None:
        scope.append(_acks.c.occurrence == when)
    said = session.scalar(
        select(_acks.c.id).where(*scope, _acks.c.user_id == requester.user_id).limit(1)
    )
    new = False
    if said is None:
        inserted = session.execute(
            insert_ignoring_conflicts(session, _acks)
            .values(
                reminder_id=root.id,
                occurrence=when,
                user_id=requester.user_id,
                name=name,
                at=now,
                via=via,
            )
            .returning(_acks.c.id)
        )
        new = inserted.scalar() is not None
    rows = session.execute(
        select(_acks.c.user_id, _acks.c.name).where(*scope).order_by(_acks.c.at, _acks.c.id)
    ).all()
    acked = tuple(dict.fromkeys(Member(row.user_id, row.name) for row in rows))
    done_ids = {m.user_id for m in acked}
    waiting = tuple(m for m in waiting_for if m.user_id not in done_ids)
    complete = not waiting and bool(acked)
    ended = False
    if new:
        changes.cancel_snoozes(session, root.id, now)
        if root.ack is not None and complete and root.status in LIVE:
            ended = _end(session, root.id, now)
    return AckResult(get_reminder(session, root.id), when, new, complete, ended, acked, waiting)


def _end(session: Session, reminder_id: str, now: datetime) -> bool:
    """An "until done" reminder whose rule is met: done, with no next time."""
    result = session.execute(
        update(_reminders)
        .where(_reminders.c.id == reminder_id, _reminders.c.status.in_(LIVE))
        .values(
            status=REMINDER_DONE,
            next_fire_at=None,
            version=_reminders.c.version + 1,
            updated_at=now,
        )
    )
    return rowcount(result) == 1


def me_too(
    session: Session,
    chat_id: str,
    requester: Requester,
    name: str,
    on: bool | None,
    now: datetime,
    *,
    rules_allow: bool,
    reference: str | None = None,
    message_id: str | None = None,
) -> MeTooResult:
    """Add `requester` to a group reminder's people (on), take them off (off), or
    toggle (None): they are mentioned from its next occurrence on. `rules_allow`: the
    chat's rules let this member add people to reminders (read above storage)."""
    target = targets.named_target(session, chat_id, requester, reference, message_id, may="change")
    if target is None:
        raise ReminderNotFoundError(None)
    root = _root(session, chat_id, target)
    if root.status not in LIVE:
        raise ReminderNotFoundError(root.short_id, "finished")
    audience = root.audience
    mentioned = any(m.user_id == requester.user_id for m in audience.mentions)
    wanted = (not mentioned) if on is None else on
    problem: MeTooProblem | None = None
    if root.chat_type == "private":
        problem = "private"
    elif root.created_by == requester.user_id:
        problem = "own"
    elif audience.everyone:
        problem = "everyone"
    elif wanted and not mentioned and not root.me_too:
        problem = "off"
    elif wanted and not mentioned and not rules_allow:
        problem = "rules"
    if problem is not None:
        raise MeTooError(root.short_id, problem)
    if wanted == mentioned:
        return MeTooResult(root, wanted, False)
    people = [m for m in audience.mentions if m.user_id != requester.user_id]
    if wanted:
        people.append(Member(requester.user_id, name))
    # The last one named taken off: the reminder mentions its asker again.
    changed = Audience(tuple(people), audience.creator or not people, audience.everyone)
    values: dict[str, Any] = {
        **changed.columns(),
        "version": _reminders.c.version + 1,
        "updated_at": now,
    }
    session.execute(
        update(_reminders)
        .where(or_(_reminders.c.id == root.id, _reminders.c.snooze_of == root.id))
        .where(_reminders.c.status.in_(LIVE))
        .values(**values)
    )
    return MeTooResult(get_reminder(session, root.id), wanted, True)


def allow_me_too(
    session: Session,
    chat_id: str,
    reference: str,
    requester: Requester,
    allowed: bool,
    now: datetime,
) -> ReminderView:
    """The asker's (or an admin's) switch: may members add themselves to the reminder
    (and to its pending snooze)?"""
    reminder = changes.locate(session, chat_id, reference, requester)
    session.execute(
        update(_reminders)
        .where(or_(_reminders.c.id == reminder.id, _reminders.c.snooze_of == reminder.id))
        .values(me_too=allowed, version=_reminders.c.version + 1, updated_at=now)
    )
    return get_reminder(session, reminder.id)


def set_confirmed_as(session: Session, chat_id: str, reminder_id: str, message_id: str) -> None:
    """The platform's id of the message that confirmed a reminder, for a 👍 on it."""
    session.execute(
        update(_reminders)
        .where(_reminders.c.id == reminder_id, _reminders.c.chat_id == chat_id)
        .values(confirmed_as=message_id)
    )
