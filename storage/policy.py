"""How reminders are delivered: grace windows, retries, leases and timer settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from types import MappingProxyType

from groupmate.storage.recurrence import Kind

_DEFAULT_GRACE: dict[Kind, timedelta] = {
    "once": timedelta(hours=6),
    "daily": timedelta(minutes=30),
    "weekdays": timedelta(minutes=30),
    "weekly": timedelta(hours=2),
    "monthly": timedelta(hours=6),
    # Within a day: the next one is never more than a day away, so an old one is skipped.
    "interval": timedelta(minutes=30),
}
DEFAULT_GRACE: Mapping[Kind, timedelta] = MappingProxyType(_DEFAULT_GRACE)


@dataclass(frozen=True, slots=True)
class DeliveryPolicy:
    """Every knob of reminder delivery; the defaults suit a single self-hosted bot."""

    # Missed by more than this (the bot was down): recorded as skipped_missed, not sent.
    grace: Mapping[Kind, timedelta] = field(default_factory=lambda: DEFAULT_GRACE)
    # Delivered later than this: sent with a note saying when it was due.
    late_after: timedelta = timedelta(minutes=1)
    send_attempts: int = 5
    retry_base: timedelta = timedelta(seconds=2)
    retry_max: timedelta = timedelta(minutes=1)
    send_timeout: timedelta = timedelta(seconds=30)
    # A pending delivery whose lease ran out belongs to a dispatcher that died mid-send.
    lease: timedelta = timedelta(minutes=2)
    watchdog_interval: timedelta = timedelta(seconds=30)
    # Only reminders due within the horizon get a timer; the watchdog tops it up.
    horizon: timedelta = timedelta(hours=1)
    # At shutdown, in-flight sends get this long to finish and be recorded; one still
    # running after it stays pending, and the next dispatcher resumes it after its lease.
    close_grace: timedelta = timedelta(seconds=5)
    # Claims per transaction; a smaller batch starts the first sends sooner.
    claim_batch: int = 250
    max_concurrent_sends: int = 100
    # Recorded skipped occurrences per backlog; older ones of a long outage are not listed.
    max_backlog_records: int = 366

    def grace_for(self, kind: Kind) -> timedelta:
        grace: timedelta | None = self.grace.get(kind)
        return grace if grace is not None else _DEFAULT_GRACE[kind]

    def retry_delay(self, attempt: int) -> timedelta:
        """Exponential backoff after the given failed attempt (1-based)."""
        return min(self.retry_base * (1 << max(attempt - 1, 0)), self.retry_max)
