"""Group commit: small writes queued from the event loop, committed together.

One transaction (and one hop to a database thread) per message costs more than the
message's own SQL. Here every write unit queued while the previous batch was being
written joins the next batch: one hop and one commit for all of them, in the order they
were queued. Under load the batches grow; alone, a unit is written at once.

A unit either is awaited (`write`: the caller needs it durable before going on, like an
answer that must be logged before it is sent) or is not (`write_soon`: a message that
was only logged). A unit nobody awaits is lost if the process dies before its batch
commits: that is the crash window, at most the units queued in the last batch's time
(a few milliseconds; `max_batch` units at most), never a unit that was awaited.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy.orm import Session

from storage.errors import StorageError, StorageUnavailableError

if TYPE_CHECKING:
    from storage.database import Database

T = TypeVar("T")
log = logging.getLogger(__name__)

MAX_BATCH = 1000
# Past this many queued units nobody awaits, `write_soon` waits for its own: a producer
# faster than the database is slowed down instead of queueing without bound.
MAX_QUEUED = 20_000


@dataclass(slots=True)
class _Unit:
    work: Callable[[Session], Any]
    future: asyncio.Future[Any] | None  # None: nobody awaits it; a failure is logged
    what: str
    # Called on the event loop as the unit is taken into a batch: from then on the work
    # may not change (a unit that gathers rows while it waits stops gathering).
    on_taken: Callable[[], None] | None = None


def _nothing(session: Session) -> None:
    return None


def _run_all(session: Session, units: list[_Unit]) -> list[Any]:
    return [unit.work(session) for unit in units]


class GroupCommit:
    """The write queue of one `Database`; see the module's docstring."""

    def __init__(
        self, database: Database, *, max_batch: int = MAX_BATCH, max_queued: int = MAX_QUEUED
    ) -> None:
        self._database = database
        self._max_batch = max_batch
        self._max_queued = max_queued
        self._queue: deque[_Unit] = deque()
        self._drain: asyncio.Task[None] | None = None

    async def write(self, work: Callable[[Session], T]) -> T:
        """Run `work` in the next batch's transaction; returns once that committed."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._submit(_Unit(work, future, ""))
        return await future

    async def write_soon(
        self,
        work: Callable[[Session], Any],
        *,
        what: str,
        on_taken: Callable[[], None] | None = None,
    ) -> None:
        """Queue `work` for the next batch without waiting for it (unless the queue is
        full); a failure is logged as "`what` not written"."""
        if len(self._queue) < self._max_queued:
            self._submit(_Unit(work, None, what, on_taken))
            return
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._submit(_Unit(work, future, what, on_taken))
        try:
            await future
        except Exception as exc:  # nobody else hears of it: logged like the others
            _log_failure(what, exc)

    async def flush(self) -> None:
        """Wait until every unit queued so far is written (or failed): a read after
        this sees them. Units queued meanwhile are not waited for."""
        if self._drain is None or self._drain.done():
            return
        # The queue is written in order: once a unit queued now is done, so is all before.
        with contextlib.suppress(Exception):
            await self.write(_nothing)

    @property
    def queued(self) -> int:
        return len(self._queue)

    def _submit(self, unit: _Unit) -> None:
        self._queue.append(unit)
        if self._drain is None or self._drain.done():
            self._drain = asyncio.get_running_loop().create_task(self._drain_queue())

    async def _drain_queue(self) -> None:
        while self._queue:
            count = min(len(self._queue), self._max_batch)
            batch = [self._queue.popleft() for _ in range(count)]
            for unit in batch:
                if unit.on_taken is not None:
                    unit.on_taken()
            await self._write_batch(batch)

    async def _write_batch(self, batch: list[_Unit]) -> None:
        try:
            results = await self._database.write(functools.partial(_run_all, units=batch))
        except Exception as exc:
            if isinstance(exc, StorageUnavailableError) or len(batch) == 1:
                for unit in batch:
                    _fail(unit, exc)
                return
            # One unit's error rolled the whole batch back: each unit alone now, so that
            # only the unit at fault fails.
            for unit in batch:
                try:
                    result = await self._database.write(unit.work)
                except Exception as unit_exc:
                    _fail(unit, unit_exc)
                else:
                    _done(unit, result)
            return
        for unit, result in zip(batch, results, strict=True):
            _done(unit, result)


def _done(unit: _Unit, result: Any) -> None:
    if unit.future is not None and not unit.future.done():
        unit.future.set_result(result)


def _fail(unit: _Unit, exc: Exception) -> None:
    if unit.future is not None:
        if not unit.future.done():
            unit.future.set_exception(exc)
        return
    _log_failure(unit.what, exc)


def _log_failure(what: str, exc: Exception) -> None:
    # The error's class only: a driver's message can quote the row (chat text) or URL.
    reason = str(exc) if isinstance(exc, StorageError) else type(exc).__name__
    log.error("%s not written: %s", what, reason)
