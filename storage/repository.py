"""Reminder queries (chats' own rows are `storage.chat_rows`, the delivery queue
`storage.deliveries`). Every function runs inside the caller's transaction."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast
from zoneinfo import ZoneInfo

from sqlalchemy import (
    Table,
    bindparam,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.orm import Session

from groupmate.storage.chat_rows import ensure_chat
from groupmate.storage.dialect import rowcount
from groupmate.storage.models import (
    REMINDER_ACTIVE,
    REMINDER_CANCELLED,
    REMINDER_PAUSED,
    Chat,
    Reminder,
)
from groupmate.storage.reach import Reach, within
from groupmate.storage.reminder_moves import next_fire_values
from groupmate.storage.reminder_rows import (
    NewReminder,
    ReminderView,
    reminder_view,
    schedule_columns,
    schedule_of,
)
from groupmate.storage.vocabulary import ChatType

_chats = cast(Table, Chat.__table__)
_reminders = cast(Table, Reminder.__table__)


# --- chats ---------------------------------------------------------------------------


def set_chat_timezone(
    session: Session, chat_id: str, chat_type: ChatType, timezone: str, now: datetime
) -> list[ReminderView]:
    """Store the chat's zone and move the chat's active reminders into it.

    Repeating reminders keep their wall time in the new zone. One-time reminders keep
    their moment, re-expressed in the new zone. An occurrence already due stays due for
    the dispatcher. Returns the moved reminders.
    """
    ensure_chat(session, chat_id, chat_type, now)
    session.execute(
        update(_chats).where(_chats.c.chat_id == chat_id).values(timezone=timezone, updated_at=now)
    )
    rows = session.execute(
        select(_reminders)
        .where(_reminders.c.chat_id == chat_id, _reminders.c.status == REMINDER_ACTIVE)
        .with_for_update()
    ).all()
    zone = ZoneInfo(timezone)
    for row in rows:
        values: dict[str, Any] = {"timezone": timezone, "updated_at": now}
        due = row.next_fire_at is not None and row.next_fire_at <= now
        if row.kind == "once":
            if row.next_fire_at is not None:
                local = row.next_fire_at.astimezone(zone)
                values.update(
                    local_date=local.date(), local_time=local.time(), local_fold=bool(local.fold)
                )
        elif not due:
            schedule = schedule_of(row).with_timezone(timezone)
            values |= next_fire_values(schedule.first_after(now))
        session.execute(
            update(_reminders)
            .where(_reminders.c.id == row.id)
            .values(version=_reminders.c.version + 1, **values)
        )
    return by_next_fire(get_reminder(session, row.id) for row in rows)


def by_next_fire(views: Iterable[ReminderView]) -> list[ReminderView]:
    """Soonest first; reminders with no next occurrence last."""
    return sorted(views, key=lambda r: (r.next_fire_at is None, r.next_fire_at, r.short_id))


# --- reminders -----------------------------------------------------------------------


def create_reminder(session: Session, new: NewReminder, now: datetime) -> ReminderView:
    ensure_chat(session, new.chat_id, new.chat_type, now)
    if new.snooze_of is not None:
        # A snooze is its reminder put off: it shows the reminder's number, takes none.
        short_id: int = session.execute(
            select(_reminders.c.short_id).where(_reminders.c.id == new.snooze_of)
        ).scalar_one()
    else:
        short_id = next_short_id(session, new.chat_id)
    schedule = new.schedule
    reminder = Reminder(
        id=uuid.uuid4().hex,
        short_id=short_id,
        chat_id=new.chat_id,
        chat_type=new.chat_type,
        created_by=new.created_by,
        created_by_name=new.created_by_name,
        content=new.content,
        **schedule_columns(schedule),
        snooze_of=new.snooze_of,
        action=new.action.columns() if new.action is not None else None,
        **new.audience.columns(),
        ack=new.ack,
        me_too=new.me_too,
        status=REMINDER_ACTIVE,
        next_fire_at=new.first_fire_at,
        version=1,
        created_at=now,
        updated_at=now,
    )
    session.add(reminder)
    session.flush()
    return reminder_view(reminder)


def next_short_id(session: Session, chat_id: str) -> int:
    """Take the chat's next short id; the row lock (PostgreSQL) or the write lock
    (SQLite) serializes concurrent takers, so ids are never handed out twice."""
    short_id: int = session.execute(
        update(_chats)
        .where(_chats.c.chat_id == chat_id)
        .values(last_short_id=_chats.c.last_short_id + 1)
        .returning(_chats.c.last_short_id)
    ).scalar_one()
    return short_id


def get_reminder(session: Session, reminder_id: str) -> ReminderView:
    row = session.execute(select(_reminders).where(_reminders.c.id == reminder_id)).one()
    return reminder_view(row)


# `list_active` runs for every "what reminders do we have": built once, bound per call.
_ACTIVE = (
    select(_reminders, func.count().over().label("total"))
    .where(
        _reminders.c.chat_id == bindparam("the_chat"),
        # Not IN (...): its list is re-rendered into the SQL on every run (10% of a
        # database thread's time under load, measured).
        or_(_reminders.c.status == REMINDER_ACTIVE, _reminders.c.status == REMINDER_PAUSED),
    )
    .order_by(_reminders.c.next_fire_at.asc().nulls_last(), _reminders.c.short_id)
    .limit(bindparam("limit"))
)
_ACTIVE_BY = _ACTIVE.where(_reminders.c.created_by == bindparam("creator"))


def list_active(
    session: Session, chat_id: str, *, created_by: str | None = None, limit: int = 50
) -> tuple[list[ReminderView], int]:
    """Active and paused reminders of one chat, soonest first (paused last), and how many
    there are in all."""
    params: dict[str, Any] = {"the_chat": chat_id, "limit": limit}
    if created_by is None:
        rows = session.execute(_ACTIVE, params).all()
    else:
        rows = session.execute(_ACTIVE_BY, {**params, "creator": created_by}).all()
    total = rows[0].total if rows else 0
    return [reminder_view(row) for row in rows], total


def parse_reference(reference: str) -> int | str | None:
    """'#3', '3' or a full id; None when it is neither."""
    text = reference.strip().lstrip("#").strip()
    if text.isdigit() and len(text) <= 9:
        return int(text)
    normalized = text.replace("-", "").lower()
    if len(normalized) == 32 and all(c in "0123456789abcdef" for c in normalized):
        return normalized
    return None


def find_reminder(
    session: Session, chat_id: str, reference: str, *, for_update: bool = False
) -> ReminderView | None:
    """An active reminder of this chat by short or full id; other chats' ids never match."""
    key = parse_reference(reference)
    if key is None:
        return None
    column = _reminders.c.short_id if isinstance(key, int) else _reminders.c.id
    query = select(_reminders).where(
        _reminders.c.chat_id == chat_id,
        column == key,
        _reminders.c.status == REMINDER_ACTIVE,
    )
    query = query.order_by(*REMINDER_FIRST)
    row = session.execute(query.with_for_update() if for_update else query).first()
    return None if row is None else reminder_view(row)


# A number names a reminder and its snoozes: the reminder itself first, else its pending
# snooze (a one-time reminder that went off and was put off is the snooze alone).
REMINDER_FIRST = (_reminders.c.snooze_of.is_not(None), _reminders.c.next_fire_at.desc())


def cancel_reminder(session: Session, reminder: ReminderView, now: datetime) -> bool:
    """Cancel if still active; False if it finished or was deleted meanwhile."""
    result = session.execute(
        update(_reminders)
        .where(
            _reminders.c.id == reminder.id,
            _reminders.c.status.in_((REMINDER_ACTIVE, REMINDER_PAUSED)),
        )
        .values(
            status=REMINDER_CANCELLED,
            next_fire_at=None,
            version=_reminders.c.version + 1,
            updated_at=now,
        )
    )
    return rowcount(result) == 1


def due_before(
    session: Session, until: datetime, reach: Reach | None = None
) -> list[tuple[str, datetime]]:
    """(id, next_fire_at) of active reminders due before `until` in chats `reach` covers
    (None: any), for the timer."""
    rows = session.execute(
        select(_reminders.c.id, _reminders.c.next_fire_at)
        .where(
            _reminders.c.status == REMINDER_ACTIVE,
            _reminders.c.next_fire_at < until,
            within(reach, _reminders.c.chat_id),
        )
        .order_by(_reminders.c.next_fire_at)
    ).all()
    return [(row.id, row.next_fire_at) for row in rows]
