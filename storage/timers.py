"""The reminder timers: one APScheduler date job per reminder due soon, each of which
only wakes the dispatcher when it fires. The database stays the source of truth (the
scheduler claims what is due there); a timer that never fires costs a late delivery, found
by the watchdog's sweep, never a lost one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from apscheduler.executors.debug import DebugExecutor
from apscheduler.jobstores.base import JobLookupError
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.schedulers.base import STATE_PAUSED, STATE_STOPPED
from apscheduler.util import datetime_to_utc_timestamp

# The watchdog's warnings keep the logger they were always logged under.
log = logging.getLogger("groupmate.storage.scheduler")

# APScheduler processes every due timer in one synchronous call; slices keep the loop free.
_TIMER_SLICE = 200


class _SlicedMemoryJobStore(MemoryJobStore):  # type: ignore[misc]
    """Hands APScheduler at most `limit` due jobs per pass.

    With 5,000 timers due in the same second, the stock store makes APScheduler process
    all of them in one call (about half a second of stalled event loop here). Sliced, the
    scheduler sees that more are due, waits 0 s and continues on the next loop iteration.
    """

    def __init__(self, limit: int) -> None:
        super().__init__()
        self._limit = limit

    def get_due_jobs(self, now: datetime) -> list[Any]:
        now_timestamp = datetime_to_utc_timestamp(now)
        pending: list[Any] = []
        for job, timestamp in self._jobs:
            if timestamp is None or timestamp > now_timestamp or len(pending) >= self._limit:
                break
            pending.append(job)
        return pending


class ReminderTimers:
    """A timer per reminder, which calls `wake()` when it fires."""

    def __init__(self, wake: Callable[[], None]) -> None:
        self._wake = wake
        self.timer = AsyncIOScheduler(
            timezone=UTC,
            jobstores={"default": _SlicedMemoryJobStore(_TIMER_SLICE)},
            # The callback only sets a flag, so it runs inline: no task or thread per timer.
            executors={"default": DebugExecutor()},
            job_defaults={"misfire_grace_time": None, "coalesce": True, "max_instances": 1},
        )
        self._planned: dict[str, datetime] = {}

    def __len__(self) -> int:
        return len(self._planned)

    def start(self) -> None:
        self.timer.start()

    def shutdown(self) -> None:
        if self.timer.state != STATE_STOPPED:
            self.timer.shutdown(wait=False)

    def set(self, reminder_id: str, fire_at: datetime) -> None:
        """Time one reminder for `fire_at` (nothing to do when it already is)."""
        if self._planned.get(reminder_id) == fire_at:
            return
        self.timer.add_job(
            self._on_timer,
            "date",
            run_date=fire_at,
            id=reminder_id,
            args=[reminder_id],
            replace_existing=True,
        )
        self._planned[reminder_id] = fire_at

    def clear(self, reminder_id: str) -> None:
        if self._planned.pop(reminder_id, None) is not None:
            with contextlib.suppress(JobLookupError):
                self.timer.remove_job(reminder_id)

    def missing(self, rows: list[tuple[str, datetime]]) -> list[tuple[str, datetime]]:
        """The (reminder, moment) of `rows` that have no timer for that moment."""
        return [(rid, at) for rid, at in rows if self._planned.get(rid) != at]

    async def set_many(
        self, rows: list[tuple[str, datetime]], plan: Callable[[str, datetime], None]
    ) -> None:
        """`plan` each of `rows`, in slices that keep the event loop free."""
        for start in range(0, len(rows), _TIMER_SLICE):
            # Paused, add_job skips its per-job wakeup; slices keep the event loop free.
            self.timer.pause()
            try:
                for reminder_id, fire_at in rows[start : start + _TIMER_SLICE]:
                    plan(reminder_id, fire_at)
            finally:
                self.timer.resume()
            await asyncio.sleep(0)

    def keep_running(self) -> None:
        """Resume a paused timer, restart a stopped one (its timers are then set anew)."""
        if self.timer.state == STATE_PAUSED:
            log.warning("the reminder timer was paused; the watchdog resumed it")
            self.timer.resume()
        elif self.timer.state == STATE_STOPPED:
            log.warning("the reminder timer had stopped; the watchdog restarted it")
            self._planned.clear()
            self.timer.start()

    def _on_timer(self, reminder_id: str) -> None:
        self._planned.pop(reminder_id, None)
        self._wake()
