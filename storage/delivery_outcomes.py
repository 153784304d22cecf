"""A send's outcome, and writing outcomes to their deliveries rows in one batch statement
(the writer that batches them is `storage.outcome_writer`). Every function runs inside
the caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import Table, bindparam, text, update
from sqlalchemy.orm import Session

from groupmate.storage.dialect import is_postgres
from groupmate.storage.models import OUTCOME_PENDING, Delivery
from groupmate.storage.vocabulary import DeliveryOutcome

_deliveries = cast(Table, Delivery.__table__)


@dataclass(frozen=True, slots=True)
class Outcome:
    delivery_id: int
    outcome: DeliveryOutcome
    attempts: int
    finished_at: datetime | None
    error: str | None = None
    lease_until: datetime | None = None
    message_id: str | None = None  # the platform's id of the sent message


# Batch statements, as `storage.deliveries` writes its own (see there why).
_OUTCOMES_SQLITE = (
    update(_deliveries)
    .where(_deliveries.c.id == bindparam("b_id"), _deliveries.c.outcome == OUTCOME_PENDING)
    .values(
        outcome=bindparam("b_outcome"),
        attempts=bindparam("b_attempts"),
        finished_at=bindparam("b_finished_at"),
        last_error=bindparam("b_error"),
        lease_until=bindparam("b_lease_until"),
        message_id=bindparam("b_message_id"),
    )
)
_OUTCOMES_POSTGRES = text(
    """
    UPDATE deliveries
    SET outcome = batch.outcome, attempts = batch.attempts, finished_at = batch.finished_at,
        last_error = batch.error, lease_until = batch.lease_until,
        message_id = batch.message_id
    FROM unnest(CAST(:ids AS integer[]), CAST(:outcomes AS varchar[]),
                CAST(:attempts AS integer[]), CAST(:finished AS timestamptz[]),
                CAST(:errors AS text[]), CAST(:leases AS timestamptz[]),
                CAST(:message_ids AS varchar[]))
         AS batch(id, outcome, attempts, finished_at, error, lease_until, message_id)
    WHERE deliveries.id = batch.id AND deliveries.outcome = 'pending'
    """
)


def record_outcomes(session: Session, outcomes: Sequence[Outcome]) -> None:
    """Write send results; only pending rows change, so a late writer cannot undo one."""
    latest = list({item.delivery_id: item for item in outcomes}.values())  # last one wins
    if not latest:
        return
    if is_postgres(session):
        session.execute(
            _OUTCOMES_POSTGRES,
            {
                "ids": [i.delivery_id for i in latest],
                "outcomes": [i.outcome for i in latest],
                "attempts": [i.attempts for i in latest],
                "finished": [i.finished_at for i in latest],
                "errors": [i.error for i in latest],
                "leases": [i.lease_until for i in latest],
                "message_ids": [i.message_id for i in latest],
            },
        )
        return
    session.execute(
        _OUTCOMES_SQLITE,
        [
            {
                "b_id": i.delivery_id,
                "b_outcome": i.outcome,
                "b_attempts": i.attempts,
                "b_finished_at": i.finished_at,
                "b_error": i.error,
                "b_lease_until": i.lease_until,
                "b_message_id": i.message_id,
            }
            for i in latest
        ],
    )
