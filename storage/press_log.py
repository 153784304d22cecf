"""Presses already acted on, by the platform's id of each: a platform retries a webhook,
a client sends a tap twice; the second gets the first's answer and changes nothing.
Every function runs inside the caller's transaction."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy import Table, delete, select, update
from sqlalchemy.orm import Session

from groupmate.storage.dialect import insert_ignoring_conflicts, rowcount
from groupmate.storage.models import PressRecord

_presses = cast(Table, PressRecord.__table__)


@dataclass(frozen=True, slots=True)
class PastPress:
    """A press seen before: its answer (None while the first is still being acted on)."""

    ok: bool | None
    answer: str | None


def take_press(session: Session, press_id: str, chat_id: str, now: datetime) -> PastPress | None:
    """Claim `press_id` for acting on; None when this is its first time, else what the
    first time answered. The primary key makes a concurrent replay lose the insert."""
    inserted = session.execute(
        insert_ignoring_conflicts(session, _presses)
        .values(press_id=press_id, chat_id=chat_id, at=now, ok=None, answer=None)
        .returning(_presses.c.press_id)
    )
    if inserted.scalar() is not None:
        return None
    row = session.execute(
        select(_presses.c.chat_id, _presses.c.ok, _presses.c.answer).where(
            _presses.c.press_id == press_id
        )
    ).one()
    if row.chat_id != chat_id:
        # The same id from another chat is no replay of that press, and never gets its
        # answer (a reminder's words, people's names): refused, nothing acted on.
        return PastPress(False, None)
    return PastPress(row.ok, row.answer)


def settle_press(session: Session, press_id: str, ok: bool, answer: str) -> None:
    """Keep the answer a press got, for its replays."""
    session.execute(
        update(_presses).where(_presses.c.press_id == press_id).values(ok=ok, answer=answer)
    )


def prune_presses(session: Session, before: datetime) -> int:
    """Forget presses made before `before`; returns how many."""
    return rowcount(session.execute(delete(_presses).where(_presses.c.at < before)))
