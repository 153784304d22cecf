"""Writing delivery outcomes to the database: in order, batched, retried while it is down."""

from __future__ import annotations

import asyncio
import functools
import logging

from groupmate.storage.database import Database
from groupmate.storage.delivery_outcomes import Outcome, record_outcomes
from groupmate.storage.errors import StorageUnavailableError
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)


class OutcomeWriter:
    """Delivery outcomes waiting to be written, and the one writer that writes them."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._ready = asyncio.Event()
        self._outcomes: list[Outcome] = []
        self._lock = asyncio.Lock()

    @property
    def pending(self) -> bool:
        """Whether some outcomes are not written yet."""
        return bool(self._outcomes)

    def record(self, outcome: Outcome) -> None:
        self._outcomes.append(outcome)
        self._ready.set()

    async def run(self) -> None:
        """Write outcomes as they come, until cancelled."""
        while True:
            await self._ready.wait()
            self._ready.clear()
            await self.flush()

    async def flush(self) -> None:
        # One writer at a time keeps outcomes in order; whatever piled up during the
        # previous write goes in one transaction.
        async with self._lock:
            batch, self._outcomes = self._outcomes, []
            if not batch:
                return
            try:
                await self._database.write(lambda s: record_outcomes(s, batch))
            except StorageUnavailableError as exc:
                log.error("could not record %d delivery outcomes: %s", len(batch), exc)
                self._outcomes[:0] = batch
                await asyncio.sleep(1)
                self._ready.set()
            except Exception:
                # One unstorable outcome must not hold back the others.
                await self._one_by_one(batch)

    async def _one_by_one(self, batch: list[Outcome]) -> None:
        for item in batch:
            try:
                await self._database.write(functools.partial(record_outcomes, outcomes=[item]))
            except Exception as exc:
                log.error(
                    "dropped the outcome of delivery %d: %s", item.delivery_id, safe_error(exc)
                )
