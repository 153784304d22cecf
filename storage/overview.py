"""Read-side summaries for the dashboard, and the two writes it makes: logging a model
turn (bounded) and taking a failed delivery back for a retry. `Session -> T` units, as
in `storage.repository`."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, delete, func, select, update
from sqlalchemy.orm import Session

from groupmate.storage.acks import acks_of
from groupmate.storage.database import Database
from groupmate.storage.deliveries import Claim, claim_of
from groupmate.storage.exceptions import GroupmateError
from groupmate.storage.models import (
    DELIVERED,
    OUTCOME_FAILED,
    OUTCOME_PENDING,
    REMINDER_ACTIVE,
    REMINDER_CANCELLED,
    REMINDER_DONE,
    Chat,
    ChatMessage,
    Delivery,
    LLMTurn,
    LLMUsage,
    Reminder,
)
from groupmate.storage.reminder_rows import ReminderView, reminder_view
from groupmate.storage.vocabulary import (
    ChatType,
    DeliveryOutcome,
    FinishedOutcome,
    stored_chat_type,
)

_chats = cast(Table, Chat.__table__)
_messages = cast(Table, ChatMessage.__table__)
_reminders = cast(Table, Reminder.__table__)
_deliveries = cast(Table, Delivery.__table__)
_turns = cast(Table, LLMTurn.__table__)
_usage = cast(Table, LLMUsage.__table__)


@dataclass(frozen=True, slots=True)
class ChatSummary:
    chat_id: str
    chat_type: ChatType | None
    timezone: str | None
    messages: int
    last_activity: datetime | None
    reminders: int


def chat_summaries(session: Session) -> list[ChatSummary]:
    """Every chat the bot knows, from its settings, its log or its reminders."""
    known = {row.chat_id: row for row in session.execute(select(_chats)).all()}
    logged: dict[str, tuple[int, datetime | None]] = {}
    per_chat = select(
        _messages.c.chat_id, func.count().label("n"), func.max(_messages.c.created_at).label("last")
    ).group_by(_messages.c.chat_id)
    for chat_id, count, last in session.execute(per_chat):
        logged[chat_id] = (int(count), last)
    reminders: dict[str, int] = {}
    open_reminders = (
        select(_reminders.c.chat_id, func.count())
        .where(_reminders.c.status != REMINDER_CANCELLED)
        .group_by(_reminders.c.chat_id)
    )
    for chat_id, count in session.execute(open_reminders):
        reminders[chat_id] = int(count)
    summaries = []
    for chat_id in sorted(set(known) | set(logged) | set(reminders)):
        row = known.get(chat_id)
        count, last = logged.get(chat_id, (0, None))
        summaries.append(
            ChatSummary(
                chat_id=chat_id,
                chat_type=stored_chat_type(row.chat_type) if row is not None else None,
                timezone=row.timezone if row is not None else None,
                messages=count,
                last_activity=last,
                reminders=reminders.get(chat_id, 0),
            )
        )
    return summaries


@dataclass(frozen=True, slots=True)
class DeliveryRecord:
    id: int
    chat_id: str
    reminder_id: str
    short_id: int
    content: str
    occurrence: datetime
    outcome: DeliveryOutcome
    attempts: int
    late: bool
    last_error: str | None
    finished_at: datetime | None
    # Who said done to this occurrence (a snooze's: to its reminder's), first first.
    done_by: tuple[str, ...] = ()


def delivery_records(
    session: Session, *, chat_id: str | None, outcome: DeliveryOutcome | None, limit: int
) -> list[DeliveryRecord]:
    """The newest deliveries first, optionally of one chat or one outcome."""
    query = select(
        _deliveries,
        _reminders.c.chat_id,
        _reminders.c.short_id,
        _reminders.c.content,
        _reminders.c.snooze_of,
    ).join(_reminders, _reminders.c.id == _deliveries.c.reminder_id)
    if chat_id is not None:
        query = query.where(_reminders.c.chat_id == chat_id)
    if outcome is not None:
        query = query.where(_deliveries.c.outcome == outcome)
    rows = session.execute(query.order_by(_deliveries.c.id.desc()).limit(limit)).all()
    done = _done_by(session, {row.snooze_of or row.reminder_id for row in rows})
    return [
        DeliveryRecord(
            id=row.id,
            chat_id=row.chat_id,
            reminder_id=row.reminder_id,
            short_id=row.short_id,
            content=row.content,
            occurrence=row.occurrence,
            outcome=row.outcome,
            attempts=row.attempts,
            late=row.late,
            last_error=row.last_error,
            finished_at=row.finished_at,
            done_by=done.get((row.snooze_of or row.reminder_id, row.occurrence), ()),
        )
        for row in rows
    ]


def _done_by(
    session: Session, reminder_ids: set[str]
) -> dict[tuple[str, datetime], tuple[str, ...]]:
    """Who said done, by (reminder, occurrence)."""
    found: dict[tuple[str, datetime], tuple[str, ...]] = {}
    for reminder_id, said in acks_of(session, reminder_ids).items():
        for ack in said:
            key = (reminder_id, ack.occurrence)
            found[key] = (*found.get(key, ()), ack.member.name or ack.member.user_id)
    return found


class NotRetryableError(GroupmateError, LookupError):
    """The delivery cannot be sent again from here. `elsewhere` False: no such delivery,
    or it did not fail (only a failed one is sent again); True: its chat is on a
    platform this process does not deliver to."""

    def __init__(self, delivery_id: int, *, elsewhere: bool = False) -> None:
        super().__init__(delivery_id)
        self.delivery_id = delivery_id
        self.elsewhere = elsewhere


def delivery_chat(session: Session, delivery_id: int) -> str | None:
    """The chat a delivery belongs to (None: no such delivery)."""
    return session.scalar(
        select(_reminders.c.chat_id)
        .join(_deliveries, _deliveries.c.reminder_id == _reminders.c.id)
        .where(_deliveries.c.id == delivery_id)
    )


def claim_failed_delivery(
    session: Session,
    delivery_id: int,
    chat_id: str,
    now: datetime,
    lease_until: datetime,
    late_after: timedelta,
) -> Claim:
    """Take a failed delivery of the chat's back as pending, leased to the caller, to
    send it again."""
    row = session.execute(
        select(
            _deliveries.c.id.label("delivery_id"),
            _deliveries.c.occurrence,
            _deliveries.c.attempts,
            _deliveries.c.outcome,
            _reminders,
        )
        .join(_reminders, _reminders.c.id == _deliveries.c.reminder_id)
        .where(_deliveries.c.id == delivery_id, _reminders.c.chat_id == chat_id)
        .with_for_update(of=_deliveries)
    ).first()
    if row is None or row.outcome != OUTCOME_FAILED or row.status == REMINDER_CANCELLED:
        raise NotRetryableError(delivery_id)
    session.execute(
        update(_deliveries)
        .where(_deliveries.c.id == delivery_id, _deliveries.c.outcome == OUTCOME_FAILED)
        .values(outcome=OUTCOME_PENDING, lease_until=lease_until, finished_at=None)
    )
    late = now - row.occurrence > late_after
    return claim_of(row.delivery_id, row, row.occurrence, 0, late=late)


def record_turn(session: Session, values: dict[str, Any], keep: int) -> None:
    """Log one model turn; past `keep` turns, the oldest go (checked every 50 inserts)."""
    result = session.execute(_turns.insert(), values)
    newest = result.inserted_primary_key  # type: ignore[attr-defined]
    if newest is not None and newest[0] % 50 == 0:
        session.execute(delete(_turns).where(_turns.c.id <= newest[0] - keep))


def recent_turns(session: Session, *, chat_id: str | None, limit: int) -> list[Any]:
    query = select(_turns)
    if chat_id is not None:
        query = query.where(_turns.c.chat_id == chat_id)
    return list(session.execute(query.order_by(_turns.c.id.desc()).limit(limit)).all())


def usage_rows(session: Session, since: Any) -> list[Any]:
    """Tokens per chat and UTC day since `since`, the newest day first."""
    query = select(_usage).where(_usage.c.day >= since)
    return list(session.execute(query.order_by(_usage.c.day.desc())).all())


class TurnLog:
    """The newest model turns (at most `keep`), for the dashboard's model activity."""

    def __init__(self, database: Database, *, keep: int = 1000) -> None:
        self._database = database
        self.keep = keep

    async def record(self, **values: Any) -> None:
        """Queued in the group commit, not awaited: the dashboard's log may lag a batch."""
        await self._database.batches.write_soon(
            functools.partial(record_turn, values=values, keep=self.keep),
            what="model turn",
            urgent=True,
        )

    async def recent(self, *, chat_id: str | None = None, limit: int = 50) -> list[Any]:
        return await self._database.read(
            functools.partial(recent_turns, chat_id=chat_id, limit=limit)
        )

    async def usage(self, since: date) -> list[Any]:
        return await self._database.read(functools.partial(usage_rows, since=since))


def scheduler_counts(session: Session, now: datetime) -> dict[str, Any]:
    """What the status page shows of the reminder engine, read from the database."""
    active = _reminders.c.status == REMINDER_ACTIVE
    next_fire = session.scalar(select(func.min(_reminders.c.next_fire_at)).where(active))
    overdue = session.scalar(
        select(func.count()).where(active, _reminders.c.next_fire_at < now - timedelta(minutes=1))
    )
    pending = session.scalar(select(func.count()).where(_deliveries.c.outcome == OUTCOME_PENDING))
    failed = session.scalar(select(func.count()).where(_deliveries.c.outcome == OUTCOME_FAILED))
    return {
        "next_fire_at": next_fire,
        "overdue_reminders": overdue or 0,
        "pending_deliveries": pending or 0,
        "failed_deliveries": failed or 0,
    }


def last_run(session: Session, reminder_id: str, before: datetime) -> datetime | None:
    """When the reminder last went off before `before` (its occurrence): what a scheduled
    digest covers starts there."""
    found: datetime | None = session.scalar(
        select(func.max(_deliveries.c.occurrence)).where(
            _deliveries.c.reminder_id == reminder_id,
            _deliveries.c.outcome.in_(DELIVERED),
            _deliveries.c.occurrence < before,
        )
    )
    return found


def finished_reminders(session: Session, chat_id: str, limit: int) -> list[ReminderView]:
    """A chat's done and cancelled reminders, the latest changed first: the dashboard's
    "Any status" shows them beside the live ones."""
    rows = session.execute(
        select(_reminders)
        .where(
            _reminders.c.chat_id == chat_id,
            _reminders.c.status.in_((REMINDER_DONE, REMINDER_CANCELLED)),
        )
        .order_by(_reminders.c.updated_at.desc())
        .limit(limit)
    ).all()
    return [reminder_view(row) for row in rows]


def last_outcomes(
    session: Session, reminder_ids: Sequence[str]
) -> dict[str, tuple[datetime, FinishedOutcome]]:
    """Each reminder's latest finished occurrence and its outcome (a scheduled action's
    last result, as /reminders and the dashboard show it)."""
    if not reminder_ids:
        return {}
    latest = (
        select(_deliveries.c.reminder_id, func.max(_deliveries.c.occurrence).label("last"))
        .where(
            _deliveries.c.reminder_id.in_(reminder_ids),
            _deliveries.c.outcome != OUTCOME_PENDING,
        )
        .group_by(_deliveries.c.reminder_id)
        .subquery()
    )
    rows = session.execute(
        select(_deliveries.c.reminder_id, _deliveries.c.occurrence, _deliveries.c.outcome).join(
            latest,
            (latest.c.reminder_id == _deliveries.c.reminder_id)
            & (latest.c.last == _deliveries.c.occurrence),
        )
    ).all()
    return {row.reminder_id: (row.occurrence, cast(FinishedOutcome, row.outcome)) for row in rows}
