"""Reminder timing and delivery.

The reminders table is the source of truth. APScheduler only wakes the dispatcher at the
right moment; the dispatcher claims whatever is due in the database (compare-and-set plus
a deliveries row), sends, then records the outcome. A watchdog sweeps overdue rows in case
the timer stalls, and takes over deliveries whose dispatcher died mid-send.

The message's wording is the caller's (a `Compose` given to the scheduler); the
`OutcomeWriter` writes the outcomes; `ReminderTimers` keeps the timers.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from groupmate.storage.clock import utc_now
from groupmate.storage.database import Database
from groupmate.storage.deliveries import (
    Claim,
    claim_due,
    extend_leases,
    reclaim_stale,
    retry_unwanted,
)
from groupmate.storage.delivery_outcomes import Outcome
from groupmate.storage.models import (
    OUTCOME_CANCELLED,
    OUTCOME_FAILED,
    OUTCOME_PENDING,
    OUTCOME_SENT,
    OUTCOME_SENT_LATE,
    OUTCOME_SKIPPED_QUIET,
)
from groupmate.storage.outcome_writer import OutcomeWriter
from groupmate.storage.outgoing import OutgoingMessage, Sender, safe_error
from groupmate.storage.policy import DeliveryPolicy
from groupmate.storage.reach import Reach
from groupmate.storage.repository import due_before
from groupmate.storage.vocabulary import DeliveryOutcome

if TYPE_CHECKING:
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

log = logging.getLogger(__name__)

Clock = Callable[[], datetime]
Compose = Callable[[Claim, datetime], OutgoingMessage]
"""The chat message for one occurrence of a reminder, sent at the given moment: its
wording and mentions, written above storage."""
Act = Callable[[Claim, datetime], Awaitable[OutgoingMessage | None]]
"""For a reminder with an action: run it (as its creator, in its chat) and give the
message that reports it, or None to post nothing (a quiet digest the chat skips). Run
once per claim; the message is then sent with the usual attempts."""
Reachable = Callable[[], Reach]
"""The chats this process can deliver to now (read at each claim: senders may be added
while it runs). Occurrences of other chats are left for a process that delivers there."""
DeliveryObserver = Callable[[Claim, Outcome], None]
"""Told each outcome this dispatcher records for a claim (a retry's "pending" one too), as
it is queued for writing: the bot's metrics count them. It must not raise or block."""
_LAUNCH_SLICE = 20


@dataclass(slots=True)
class DispatchStats:
    claimed: int = 0
    reclaimed: int = 0


class ReminderScheduler:
    """Times reminders with APScheduler and delivers each occurrence exactly once."""

    def __init__(
        self,
        database: Database,
        sender: Sender,
        *,
        compose: Compose,
        act: Act | None = None,
        policy: DeliveryPolicy | None = None,
        clock: Clock = utc_now,
        observe: DeliveryObserver | None = None,
        reach: Reachable | None = None,
    ) -> None:
        self._database = database
        self._reach = reach
        self._sender = sender
        self._observe = observe
        self._compose = compose
        self._act = act
        self.policy = policy or DeliveryPolicy()
        self._clock = clock
        self._wake = asyncio.Event()
        from groupmate.storage.timers import ReminderTimers  # APScheduler: not for `check`

        self._timers = ReminderTimers(self.wake)
        self._outcomes = OutcomeWriter(database)
        self._send_slots = asyncio.Semaphore(self.policy.max_concurrent_sends)
        self._sends: set[asyncio.Task[str]] = set()
        self._background: list[asyncio.Task[None]] = []
        self._recorder: asyncio.Task[None] | None = None
        # Deliveries this process owns and has not finished: their leases are renewed.
        self._in_flight: set[int] = set()
        self._pass_lock = asyncio.Lock()
        self._started = False

    # --- lifecycle -----------------------------------------------------------------

    async def start(self) -> None:
        """Rebuild the timers from the table and start delivering."""
        if self._started:
            return
        self._started = True
        self._timers.start()
        self._recorder = asyncio.create_task(self._outcomes.run(), name="reminders-record")
        self._background = [
            asyncio.create_task(self._dispatch_loop(), name="reminders-dispatch"),
        ]
        # The first sweep runs before start returns (resuming what a crash left pending,
        # claiming what came due while down), so no pass outlives a clock read before.
        await self._guarded(self._sweep)
        self._background += [
            asyncio.create_task(self._watchdog(), name="reminders-watchdog"),
            asyncio.create_task(self._heartbeat(), name="reminders-heartbeat"),
        ]

    async def aclose(self) -> None:
        """Stop timers; in-flight sends get a moment to finish and every outcome is written."""
        if not self._started:
            return
        self._started = False
        self._timers.shutdown()
        # Holding the pass lock, no claim is half-launched while the loops are cancelled.
        async with self._pass_lock:
            for task in self._background:
                task.cancel()
            await asyncio.gather(*self._background, return_exceptions=True)
        # Sends still running after the grace period (or waiting out a retry delay) stay
        # pending; their lease runs out and the next dispatcher resumes them.
        waiting: set[asyncio.Task[str]] = set()
        if self._sends:
            grace = self.policy.close_grace.total_seconds()
            _, waiting = await asyncio.wait(self._sends, timeout=grace)
        for send in waiting:
            send.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        for _ in range(3):
            await self._outcomes.flush()
            if not self._outcomes.pending:
                break
        if self._recorder is not None:
            self._recorder.cancel()
            await asyncio.gather(self._recorder, return_exceptions=True)

    @property
    def planned(self) -> int:
        """How many reminders have a timer right now."""
        return len(self._timers)

    @property
    def timer(self) -> AsyncIOScheduler:
        """The APScheduler the timers run in."""
        return self._timers.timer

    # --- timers --------------------------------------------------------------------

    def plan(self, reminder_id: str, fire_at: datetime | None) -> None:
        """Set or clear one reminder's timer; call after the database change committed."""
        if not self._started:
            return
        if fire_at is None or fire_at > self._clock() + self.policy.horizon:
            self.unplan(reminder_id)
            return
        self._timers.set(reminder_id, fire_at)

    def unplan(self, reminder_id: str) -> None:
        self._timers.clear(reminder_id)

    async def refill(self) -> None:
        """Give a timer to every reminder due within the horizon that lacks one."""
        now = self._clock()
        reach = self.reach()
        rows = await self._database.read(lambda s: due_before(s, now + self.policy.horizon, reach))
        missing = self._timers.missing(rows)
        if any(at <= now for _, at in missing):
            self.wake()
        await self._timers.set_many(missing, self.plan)

    def reach(self) -> Reach | None:
        """The chats this dispatcher claims for (None: every chat)."""
        return None if self._reach is None else self._reach()

    def wake(self) -> None:
        """Ask the dispatcher to claim whatever is due now."""
        self._wake.set()

    # --- dispatch ------------------------------------------------------------------

    async def _dispatch_loop(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._dispatch_pass()
            except Exception as exc:
                # The watchdog retries; the rows are still due in the database.
                log.error("reminder dispatch failed: %s", safe_error(exc))
                await asyncio.sleep(1)

    async def _dispatch_pass(self, *, reclaim: bool = False) -> DispatchStats:
        """Claim what is due; with `reclaim`, also take over deliveries of dead dispatchers.

        Reclaiming is the watchdog's job (leases last minutes), so a timer's wake-up costs
        one transaction only.
        """
        stats = DispatchStats()
        batch = self.policy.claim_batch
        async with self._pass_lock:
            while True:
                now = self._clock()
                claim = functools.partial(
                    claim_due, now=now, policy=self.policy, limit=batch, reach=self.reach()
                )
                claims, examined = await self._database.write(claim)
                stats.claimed += len(claims)
                await self._launch(claims)
                if examined < batch:
                    break
            if reclaim:
                now = self._clock()
                mine = frozenset(self._in_flight)
                reach = self.reach()
                stale = await self._database.write(
                    lambda s: reclaim_stale(s, now, self.policy, batch, exclude=mine, reach=reach)
                )
                if stale:
                    log.warning("resuming %d deliveries whose sender stopped mid-send", len(stale))
                stats.reclaimed = len(stale)
                await self._launch(stale)
        return stats

    async def _launch(self, claims: list[Claim]) -> None:
        for index, claim in enumerate(claims, 1):
            self._in_flight.add(claim.delivery_id)
            task = asyncio.create_task(self._deliver(claim))
            self._sends.add(task)
            task.add_done_callback(self._sends.discard)
            if index % _LAUNCH_SLICE == 0:
                # Tasks started together run together: a few hundred sends in one loop
                # iteration would stall every other chat for a tenth of a second.
                await asyncio.sleep(0)

    async def _deliver(self, claim: Claim) -> DeliveryOutcome:
        try:
            return await self._attempts(claim)
        finally:
            self._in_flight.discard(claim.delivery_id)

    async def deliver_now(self, claim: Claim) -> DeliveryOutcome:
        """Send one claimed delivery at once (an operator's retry, with the usual
        attempts and backoff) and return its recorded outcome."""
        self._in_flight.add(claim.delivery_id)  # the heartbeat keeps its lease meanwhile
        outcome = await self._deliver(claim)
        await self._outcomes.flush()
        return outcome

    async def _attempts(self, claim: Claim) -> DeliveryOutcome:
        attempt = claim.attempts
        last_error: str | None = None
        acted: OutgoingMessage | None = None
        if claim.action is not None and self._act is not None:
            try:
                acted = await self._act(claim, self._clock())
            except Exception as exc:  # the runner reports its own failures; this is a bug
                log.exception("reminder %s: its action failed", claim.reminder_id)
                failed = Outcome(
                    claim.delivery_id, OUTCOME_FAILED, 1, self._clock(), safe_error(exc)
                )
                self._record(claim, failed)
                return OUTCOME_FAILED
            if acted is None:
                quiet = Outcome(claim.delivery_id, OUTCOME_SKIPPED_QUIET, 0, self._clock())
                self._record(claim, quiet)
                return OUTCOME_SKIPPED_QUIET
        while True:
            attempt += 1
            if attempt > 1 and await self._database.read(
                functools.partial(retry_unwanted, reminder_id=claim.reminder_id)
            ):
                # Deleted, or said done to, while a retry was pending: no one wants it.
                self._record(
                    claim, Outcome(claim.delivery_id, OUTCOME_CANCELLED, attempt - 1, self._clock())
                )
                return OUTCOME_CANCELLED
            async with self._send_slots:
                message = acted or self._compose(claim, self._clock())
                sent_as: str | None = None
                try:
                    async with asyncio.timeout(self.policy.send_timeout.total_seconds()):
                        sent_as = await self._sender(message)
                except Exception as exc:
                    error: str | None = safe_error(exc)
                else:
                    error = None
            now = self._clock()
            if error is None:
                outcome = OUTCOME_SENT_LATE if claim.late else OUTCOME_SENT
                message_id = sent_as[:255] if isinstance(sent_as, str) else None
                self._record(
                    claim,
                    Outcome(claim.delivery_id, outcome, attempt, now, last_error, None, message_id),
                )
                return outcome
            last_error = error
            if attempt >= self.policy.send_attempts:
                log.error(
                    "reminder %s for chat %s failed after %d attempts: %s",
                    claim.reminder_id,
                    claim.chat_id,
                    attempt,
                    error,
                )
                self._record(claim, Outcome(claim.delivery_id, OUTCOME_FAILED, attempt, now, error))
                return OUTCOME_FAILED
            delay = self.policy.retry_delay(attempt)
            log.warning(
                "reminder %s for chat %s: send attempt %d failed (%s); retrying in %.1f s",
                claim.reminder_id,
                claim.chat_id,
                attempt,
                error,
                delay.total_seconds(),
            )
            lease = now + delay + self.policy.lease
            self._record(
                claim, Outcome(claim.delivery_id, OUTCOME_PENDING, attempt, None, error, lease)
            )
            await asyncio.sleep(delay.total_seconds())

    # --- outcomes ------------------------------------------------------------------

    def _record(self, claim: Claim, outcome: Outcome) -> None:
        self._outcomes.record(outcome)
        if self._observe is not None:
            self._observe(claim, outcome)

    async def settle(self) -> None:
        """Wait for in-flight sends (including retries) and write their outcomes."""
        while self._sends:
            await asyncio.gather(*list(self._sends), return_exceptions=True)
        await self._outcomes.flush()

    async def run_due(self) -> DispatchStats:
        """Claim and deliver everything due by the clock now, and wait until recorded."""
        stats = await self._dispatch_pass(reclaim=True)
        await self.settle()
        return stats

    # --- watchdog ------------------------------------------------------------------

    async def _heartbeat(self) -> None:
        """Renew the leases of deliveries this process still owns, queued or sending."""
        interval = self.policy.lease.total_seconds() / 3
        while True:
            await asyncio.sleep(interval)
            if not self._in_flight:
                continue
            owned = list(self._in_flight)
            until = self._clock() + self.policy.lease
            try:
                await self._database.write(
                    functools.partial(extend_leases, delivery_ids=owned, until=until)
                )
            except Exception as exc:
                log.error("could not renew delivery leases: %s", safe_error(exc))

    async def _watchdog(self) -> None:
        interval = self.policy.watchdog_interval.total_seconds()
        while True:
            await asyncio.sleep(interval)
            await self._guarded(self._sweep)

    async def _sweep(self) -> None:
        self._timers.keep_running()
        stats = await self._dispatch_pass(reclaim=True)
        if stats.claimed:
            log.info("watchdog claimed %d due reminders", stats.claimed)
        await self.refill()

    @staticmethod
    async def _guarded(step: Callable[[], Awaitable[None]]) -> None:
        try:
            await step()
        except Exception as exc:
            log.error("reminder watchdog sweep failed: %s", safe_error(exc))
