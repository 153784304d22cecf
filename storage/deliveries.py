"""The delivery queue: claiming due occurrences (SKIP LOCKED), leases, retries and the
deliveries rows that record each send. Every function runs inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from itertools import islice
from typing import Any, cast

from sqlalchemy import Row, Table, bindparam, select, text, update
from sqlalchemy.orm import Session

from groupmate.storage.acks import acked_by, ended_by_ack
from groupmate.storage.dialect import insert_ignoring_conflicts, is_postgres, rowcount
from groupmate.storage.exceptions import GroupmateError
from groupmate.storage.models import (
    OUTCOME_CANCELLED,
    OUTCOME_PENDING,
    OUTCOME_SKIPPED_MISSED,
    REMINDER_ACTIVE,
    REMINDER_CANCELLED,
    REMINDER_DONE,
    Delivery,
    Reminder,
)
from groupmate.storage.outgoing import Member
from groupmate.storage.policy import DeliveryPolicy
from groupmate.storage.reach import Reach, within
from groupmate.storage.recurrence import Kind, Schedule
from groupmate.storage.reminder_rows import Audience, ScheduledAction, ack_rule, schedule_of
from groupmate.storage.vocabulary import AckRule, ChatType, stored_chat_type

_reminders = cast(Table, Reminder.__table__)
_deliveries = cast(Table, Delivery.__table__)
# What a claim reads: the rule and the message, not the bookkeeping; a burst claims
# thousands of rows, and each column read is converted for each of them.
_CLAIMED = tuple(
    column
    for column in _reminders.c
    if column.name
    not in {
        "short_id",
        "status",
        "version",
        "created_at",
        "updated_at",
        "snooze_of",
        "confirmed_as",
    }
)


@dataclass(frozen=True, slots=True)
class Claim:
    """An occurrence this dispatcher owns until its lease runs out: send it, then record."""

    delivery_id: int
    reminder_id: str
    occurrence: datetime
    attempts: int
    late: bool
    chat_id: str
    chat_type: ChatType
    created_by: str
    created_by_name: str
    content: str
    kind: Kind
    timezone: str
    audience: Audience = Audience()  # noqa: RUF009 - a frozen dataclass, shared safely
    action: ScheduledAction | None = None  # run it, rather than post `content`
    # "Until done": who must say done, and who has so far (read for these alone).
    ack: AckRule | None = None
    acked: tuple[Member, ...] = ()
    me_too: bool = True  # members may add themselves: its message offers it


def _missed(schedule: Schedule, due: datetime, now: datetime, cap: int) -> list[datetime]:
    """A repeat's occurrences from `due` up to `now`, capped to the latest `cap`."""
    # A long outage of a daily reminder is at most a few hundred steps.
    later = list(islice(schedule.occurrences(due, now), 100_000))
    return ([due, *later])[-cap:]


# Batch statements. An executemany costs about a millisecond per row on PostgreSQL even
# pipelined, and a VALUES list is recompiled for every batch; arrays passed to unnest()
# keep one cached statement there. SQLite's executemany is a fast loop in C.
_CAS_NEXT_FIRE_SQLITE = (
    update(_reminders)
    .where(
        _reminders.c.id == bindparam("b_id"),
        _reminders.c.next_fire_at == bindparam("b_due"),
        _reminders.c.status == REMINDER_ACTIVE,
    )
    .values(
        next_fire_at=bindparam("b_next"),
        status=bindparam("b_status"),
        version=_reminders.c.version + 1,
        updated_at=bindparam("b_now"),
    )
)
_CAS_NEXT_FIRE_POSTGRES = text(
    """
    UPDATE reminders
    SET next_fire_at = batch.next, status = batch.status, version = reminders.version + 1,
        updated_at = :now
    FROM unnest(CAST(:ids AS varchar[]), CAST(:dues AS timestamptz[]),
                CAST(:nexts AS timestamptz[]), CAST(:statuses AS varchar[]))
         AS batch(id, due, next, status)
    WHERE reminders.id = batch.id AND reminders.next_fire_at = batch.due
      AND reminders.status = 'active'
    """
)
_DELIVERIES_POSTGRES = text(
    """
    INSERT INTO deliveries (reminder_id, occurrence, outcome, attempts, late, last_error,
                            lease_until, claimed_at, finished_at)
    SELECT * FROM unnest(CAST(:reminder_ids AS varchar[]), CAST(:occurrences AS timestamptz[]),
                         CAST(:outcomes AS varchar[]), CAST(:attempts AS integer[]),
                         CAST(:lates AS boolean[]), CAST(:errors AS text[]),
                         CAST(:leases AS timestamptz[]), CAST(:claimed AS timestamptz[]),
                         CAST(:finished AS timestamptz[]))
    ON CONFLICT (reminder_id, occurrence) DO NOTHING
    RETURNING id, reminder_id, occurrence, outcome, late
    """
)
_DELIVERY_ARRAYS = {
    "reminder_ids": "reminder_id",
    "occurrences": "occurrence",
    "outcomes": "outcome",
    "attempts": "attempts",
    "lates": "late",
    "errors": "last_error",
    "leases": "lease_until",
    "claimed": "claimed_at",
    "finished": "finished_at",
}


def _insert_deliveries(session: Session, records: list[dict[str, Any]]) -> list[Row[Any]]:
    """Insert delivery rows, skipping occurrences already recorded; returns those added."""
    if is_postgres(session):
        arrays = {key: [r[name] for r in records] for key, name in _DELIVERY_ARRAYS.items()}
        return list(session.execute(_DELIVERIES_POSTGRES, arrays).all())
    statement = insert_ignoring_conflicts(session, _deliveries).returning(
        _deliveries.c.id,
        _deliveries.c.reminder_id,
        _deliveries.c.occurrence,
        _deliveries.c.outcome,
        _deliveries.c.late,
    )
    return list(session.execute(statement, records).all())


def _compare_and_set_next_fire(session: Session, swaps: list[dict[str, Any]]) -> int:
    """Advance next_fire_at where it still holds the value read; returns rows swapped."""
    if not is_postgres(session):
        return rowcount(session.execute(_CAS_NEXT_FIRE_SQLITE, swaps))
    arrays = {
        "ids": [s["b_id"] for s in swaps],
        "dues": [s["b_due"] for s in swaps],
        "nexts": [s["b_next"] for s in swaps],
        "statuses": [s["b_status"] for s in swaps],
        "now": swaps[0]["b_now"],
    }
    return rowcount(session.execute(_CAS_NEXT_FIRE_POSTGRES, arrays))


class ClaimConflictError(GroupmateError, RuntimeError):
    """A due row changed under a claim; the transaction is rolled back and retried."""


def claim_due(
    session: Session,
    now: datetime,
    policy: DeliveryPolicy,
    limit: int,
    reach: Reach | None = None,
) -> tuple[list[Claim], int]:
    """Claim due occurrences: CAS on next_fire_at plus a deliveries row, in this transaction.

    A backlog of a recurring reminder collapses: earlier missed occurrences are recorded
    as skipped, the latest is sent if within the grace window. With `reach`, only chats it
    covers are claimed: the others wait for a process that delivers there. Returns the
    claims to send and how many reminder rows were examined.
    """
    rows = session.execute(
        select(*_CLAIMED)
        .where(
            _reminders.c.status == REMINDER_ACTIVE,
            _reminders.c.next_fire_at <= now,
            within(reach, _reminders.c.chat_id),
        )
        .order_by(_reminders.c.next_fire_at)
        .limit(limit)
        .with_for_update(skip_locked=True)
    ).all()
    records: list[dict[str, Any]] = []
    swaps: list[dict[str, Any]] = []
    by_id: dict[str, Row[Any]] = {}
    for row in rows:
        due: datetime = row.next_fire_at
        if row.kind == "once":
            # Its one occurrence: no rule to read back and expand.
            occurrences, next_fire_at = [due], None
        else:
            schedule = schedule_of(row)
            occurrences = _missed(schedule, due, now, policy.max_backlog_records)
            next_fire_at = schedule.first_after(now)
        swaps.append(
            {
                "b_id": row.id,
                "b_due": due,
                "b_next": next_fire_at,
                "b_status": REMINDER_ACTIVE if next_fire_at is not None else REMINDER_DONE,
                "b_now": now,
            }
        )
        by_id[row.id] = row
        latest = occurrences[-1]
        for occurrence in occurrences[:-1]:
            records.append(_skipped(row.id, occurrence, now))
        if now - latest > policy.grace_for(row.kind):
            records.append(_skipped(row.id, latest, now))
        else:
            records.append(
                {
                    "reminder_id": row.id,
                    "occurrence": latest,
                    "outcome": OUTCOME_PENDING,
                    "attempts": 0,
                    "late": now - latest > policy.late_after,
                    "last_error": None,
                    "lease_until": now + policy.lease,
                    "claimed_at": now,
                    "finished_at": None,
                }
            )
    if swaps:
        swapped = _compare_and_set_next_fire(session, swaps)
        if swapped != len(swaps):
            # The rows are locked (FOR UPDATE, or SQLite's write lock), so this means a
            # writer ignored the lock; roll back rather than risk a double send.
            raise ClaimConflictError(f"claimed {swapped} of {len(swaps)} due reminders")
    claims = []
    if records:
        inserted = _insert_deliveries(session, records)
        claims = [
            claim_of(item.id, by_id[item.reminder_id], item.occurrence, 0, item.late)
            for item in inserted
            if item.outcome == OUTCOME_PENDING
        ]
    return with_acks(session, claims), len(rows)


def with_acks(session: Session, claims: list[Claim]) -> list[Claim]:
    """Claims of "until done" reminders with who has said done so far: one more read,
    only when there are such claims, so ordinary reminders' claims cost what they did."""
    waiting = [claim.reminder_id for claim in claims if claim.ack is not None]
    if not waiting:
        return claims
    acked = acked_by(session, waiting)
    return [
        replace(claim, acked=acked.get(claim.reminder_id, ())) if claim.ack else claim
        for claim in claims
    ]


def _skipped(reminder_id: str, occurrence: datetime, now: datetime) -> dict[str, Any]:
    return {
        "reminder_id": reminder_id,
        "occurrence": occurrence,
        "outcome": OUTCOME_SKIPPED_MISSED,
        "attempts": 0,
        "late": True,
        "last_error": None,
        "lease_until": None,
        "claimed_at": now,
        "finished_at": now,
    }


def claim_of(
    delivery_id: int, row: Row[Any], occurrence: datetime, attempts: int, late: bool
) -> Claim:
    return Claim(
        delivery_id=delivery_id,
        reminder_id=row.id,
        # Raw SQL results come in the session's zone; the idempotency key needs one form.
        occurrence=occurrence.astimezone(UTC),
        attempts=attempts,
        late=late,
        chat_id=row.chat_id,
        chat_type=stored_chat_type(row.chat_type),
        created_by=row.created_by,
        created_by_name=row.created_by_name,
        content=row.content,
        kind=row.kind,
        timezone=row.timezone,
        audience=Audience.of(row),
        action=ScheduledAction.of(row),
        ack=ack_rule(row.ack),
        me_too=bool(row.me_too),
    )


def reclaim_stale(
    session: Session,
    now: datetime,
    policy: DeliveryPolicy,
    limit: int,
    *,
    exclude: frozenset[int] = frozenset(),
    reach: Reach | None = None,
) -> list[Claim]:
    """Take over pending deliveries whose dispatcher died.

    Those now past their grace window are recorded as skipped, those no one wants any
    more (`unwanted`) as cancelled. `exclude` lists deliveries the caller itself still
    owns; with `reach`, only those of chats it covers are taken.
    """
    rows = session.execute(
        select(
            _deliveries.c.id.label("delivery_id"),
            _deliveries.c.occurrence,
            _deliveries.c.attempts,
            _reminders,
        )
        .join(_reminders, _reminders.c.id == _deliveries.c.reminder_id)
        .where(
            _deliveries.c.outcome == OUTCOME_PENDING,
            _deliveries.c.lease_until < now,
            _deliveries.c.id.not_in(exclude),
            within(reach, _reminders.c.chat_id),
        )
        .order_by(_deliveries.c.lease_until)
        .limit(limit)
        .with_for_update(of=_deliveries, skip_locked=True)
    ).all()
    claims = []
    for row in rows:
        late_by = now - row.occurrence
        if unwanted(session, row):
            values: dict[str, Any] = {
                "outcome": OUTCOME_CANCELLED,
                "finished_at": now,
                "lease_until": None,
            }
        elif late_by > policy.grace_for(row.kind):
            values = {"outcome": OUTCOME_SKIPPED_MISSED, "finished_at": now, "lease_until": None}
        else:
            values = {"lease_until": now + policy.lease}
        session.execute(
            update(_deliveries).where(_deliveries.c.id == row.delivery_id).values(**values)
        )
        if "outcome" not in values:
            late = late_by > policy.late_after
            claims.append(claim_of(row.delivery_id, row, row.occurrence, row.attempts, late))
    return with_acks(session, claims)


def extend_leases(session: Session, delivery_ids: Sequence[int], until: datetime) -> None:
    """Keep deliveries this process still owns from being taken over."""
    session.execute(
        update(_deliveries)
        .where(_deliveries.c.id.in_(delivery_ids), _deliveries.c.outcome == OUTCOME_PENDING)
        .values(lease_until=until)
    )


def unwanted(session: Session, reminder: Row[Any]) -> bool:
    """A pending delivery no one wants any more: its reminder was deleted, or people
    said done to an "until done" reminder between the claim and this send."""
    return reminder.status == REMINDER_CANCELLED or ended_by_ack(session, reminder)


def retry_unwanted(session: Session, reminder_id: str) -> bool:
    """Whether a retry of one of this reminder's deliveries is `unwanted` (a reminder
    gone from the table too)."""
    row = session.execute(select(_reminders).where(_reminders.c.id == reminder_id)).first()
    return row is None or unwanted(session, row)


def deliveries_of(session: Session, reminder_ids: Iterable[str]) -> list[Row[Any]]:
    """Delivery rows of the given reminders, oldest occurrence first."""
    return list(
        session.execute(
            select(_deliveries)
            .where(_deliveries.c.reminder_id.in_(list(reminder_ids)))
            .order_by(_deliveries.c.reminder_id, _deliveries.c.occurrence)
        ).all()
    )
