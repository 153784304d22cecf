"""Group commit: small writes queued from the event loop, committed together.

One transaction (and one hop to a database thread) per message costs more than the
message's own SQL. Here every write unit queued while the previous batch was being
written joins the next batch: one hop and one commit for all of them, in the order they
were queued. Under load the batches grow; alone, a unit is written at once.

A unit either is awaited (`write`: the caller needs it durable before going on, like an
answer that must be logged before it is sent) or is not (`write_soon`: a message that
was only logged). A unit nobody awaits is lost if the process dies before its batch
commits: that is the crash window, the units queued meanwhile (normally a few
milliseconds' worth; never more than `max_queued` plus one batch, as `write_soon` waits
for room past that), never a unit that was awaited.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from sqlalchemy.orm import Session

from groupmate.storage.errors import StorageError, StorageUnavailableError

T = TypeVar("T")
log = logging.getLogger(__name__)

# A batch stops growing at this weight (a unit weighs 1, or the rows it may write):
# a few milliseconds of SQLite, which an urgent unit waits for at most.
MAX_BATCH = 200
# Past this much queued weight, `write_soon` waits for its own unit: a producer faster
# than the database is slowed down instead of queueing without bound.
MAX_QUEUED = 2_000
# Weight written between two checkpoints of SQLite's log (see Database.checkpoint_soon).
_CHECKPOINT_EVERY = 2_000
# A rider (see `GroupCommit.ride`) waits at most this long for a batch to join.
RIDE_WAIT = 0.05


@dataclass(slots=True)
class _Unit:
    work: Callable[[Session], Any]
    future: asyncio.Future[Any] | None  # None: nobody awaits it; a failure is logged
    what: str
    # Called on the event loop as the unit is taken into a batch: from then on the work
    # may not change (a unit that gathers rows while it waits stops gathering).
    on_taken: Callable[[], None] | None = None
    weight: int = 1


@dataclass(slots=True)
class _Waiter:
    """A writer waiting for room in the queue, for `weight` of it."""

    weight: int
    admitted: asyncio.Future[None]


def _nothing(session: Session) -> None:
    return None


def _run_all(session: Session, units: list[_Unit]) -> list[Any]:
    return [unit.work(session) for unit in units]


class Writes(Protocol):
    """What the queue writes its batches through (`storage.database.Database` is one)."""

    async def write(self, work: Callable[[Session], T]) -> T:
        """Run `work` in one write transaction."""
        ...

    def checkpoint_soon(self) -> None:
        """Start copying SQLite's log into the database file, beside the writes."""


class GroupCommit:
    """The write queue of one `Database`; see the module's docstring."""

    def __init__(
        self, database: Writes, *, max_batch: int = MAX_BATCH, max_queued: int = MAX_QUEUED
    ) -> None:
        self._database = database
        self._max_batch = max_batch
        self._max_queued = max_queued
        self._queue: deque[_Unit] = deque()
        # Units a reply waits on, and the small records of its turn: they go into the
        # next batch ahead of the queue, so that a busy group's backlog of logged
        # messages never delays another chat's answer. In order among themselves.
        self._urgent: deque[_Unit] = deque()
        self._weight = 0  # of the queued units, and of the room promised to waiters
        # Writers waiting for room, in the order they came: one is let in only when all
        # before it are, so that a light unit never overtakes a heavy one (the queue's
        # order is the order of the writes: a chat's log keeps the order of its messages).
        self._waiters: deque[_Waiter] = deque()
        self._drain: asyncio.Task[None] | None = None
        self._since_checkpoint = 0  # weight written since the last checkpoint began
        # Small units that start no batch of their own: they join the next one (see
        # `ride`); a timer starts one if none comes within RIDE_WAIT.
        self._riders: deque[_Unit] = deque()
        self._ride_timer: asyncio.TimerHandle | None = None

    @property
    def depth(self) -> int:
        """Units not yet taken into a batch, and writers waiting for room (the metrics'
        write-queue depth): near 0 while the database keeps up."""
        return len(self._queue) + len(self._urgent) + len(self._riders) + len(self._waiters)

    async def write(self, work: Callable[[Session], T], *, urgent: bool = False) -> T:
        """Run `work` in a batch's transaction; returns once that committed. It takes its
        turn behind the writers already waiting for room; `urgent` puts it in the next
        batch instead, ahead of the queue (see `__init__`): only for work whose order
        against the queued units does not matter."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        unit = _Unit(work, future, "")
        if urgent:
            self._submit(unit, urgent=True)
        else:
            await self._take_turn(unit)
        return await future

    async def write_soon(
        self,
        work: Callable[[Session], Any],
        *,
        what: str,
        on_taken: Callable[[], None] | None = None,
        weight: int = 1,
        urgent: bool = False,
    ) -> None:
        """Queue `work` for the next batch without waiting for it to be written (only,
        when the queue is full, for room in it); a failure is logged as "`what` not
        written". `weight` is how many rows it may write (for the batch's size)."""
        unit = _Unit(work, None, what, on_taken, weight)
        if urgent:
            self._submit(unit, urgent=True)
        else:
            await self._take_turn(unit)

    def ride(self, work: Callable[[Session], Any], *, what: str) -> None:
        """Queue `work` to join the next batch, without starting one for it: a record of
        what a message did (an audit row) then shares the commit of that message's own
        answer instead of costing a commit of its own. Written within RIDE_WAIT even if
        nothing else is; the crash window is that of `write_soon`; a failure is logged."""
        self._riders.append(_Unit(work, None, what))
        if self._drain is not None and not self._drain.done():
            return  # the drain in progress takes it into its next batch
        if self._ride_timer is None:
            loop = asyncio.get_running_loop()
            self._ride_timer = loop.call_later(RIDE_WAIT, self._start_riders)

    def _start_riders(self) -> None:
        self._ride_timer = None
        if self._riders and (self._drain is None or self._drain.done()):
            self._drain = asyncio.get_running_loop().create_task(self._drain_queue())

    async def flush(self) -> None:
        """Wait until every unit queued so far is written (or failed): a read after
        this sees them. Units queued meanwhile are not waited for."""
        if (self._drain is None or self._drain.done()) and not self._riders:
            return
        # The queue is written in order: once a unit queued now is done, so is all before.
        with contextlib.suppress(Exception):
            await self.write(_nothing)

    async def _take_turn(self, unit: _Unit) -> None:
        """Queue `unit` once there is room for it and every writer before it is in.

        Room first, then the queue: with many producers at once, queueing first and
        waiting after would let the queue grow by one unit per producer."""
        if not self._waiters and self._fits(unit.weight):
            self._weight += unit.weight
        else:
            waiter = _Waiter(unit.weight, asyncio.get_running_loop().create_future())
            self._waiters.append(waiter)
            try:
                await waiter.admitted  # its room is counted by then
            except asyncio.CancelledError:
                if waiter.admitted.done() and not waiter.admitted.cancelled():
                    self._weight -= waiter.weight  # let in, then cancelled: give it back
                elif waiter in self._waiters:
                    self._waiters.remove(waiter)
                self._let_in()
                raise
        self._submit(unit, urgent=False, counted=True)

    def _fits(self, weight: int) -> bool:
        return self._weight + weight <= self._max_queued or not self._weight

    def _let_in(self) -> None:
        """Let waiters in from the head of the line while there is room for them."""
        while self._waiters and self._fits(self._waiters[0].weight):
            waiter = self._waiters.popleft()
            if not waiter.admitted.done():
                self._weight += waiter.weight
                waiter.admitted.set_result(None)

    def _submit(self, unit: _Unit, *, urgent: bool, counted: bool = False) -> None:
        (self._urgent if urgent else self._queue).append(unit)
        if not counted:
            self._weight += unit.weight
        if self._drain is None or self._drain.done():
            self._drain = asyncio.get_running_loop().create_task(self._drain_queue())

    async def _drain_queue(self) -> None:
        while self._urgent or self._queue or self._riders:
            batch: list[_Unit] = []
            while self._riders:  # they weigh nothing against the batch's bound
                batch.append(self._riders.popleft())
            if self._ride_timer is not None:
                self._ride_timer.cancel()
                self._ride_timer = None
            weight = 0
            while (self._urgent or self._queue) and weight < self._max_batch:
                unit = (self._urgent or self._queue).popleft()
                weight += unit.weight
                if unit.on_taken is not None:
                    unit.on_taken()
                batch.append(unit)
            self._weight -= weight
            self._let_in()
            await self._write_batch(batch)
            self._since_checkpoint += weight
            if self._since_checkpoint >= _CHECKPOINT_EVERY:
                self._since_checkpoint = 0
                self._database.checkpoint_soon()

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
