"""A clock tests move by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

# A fixed, ordinary moment (a Saturday afternoon in November, UTC): tests that do not set
# the clock see the same dates on every run.
DEFAULT_START = datetime(2026, 11, 21, 13, 5, tzinfo=UTC)


class FakeClock:
    """Callable like `datetime.now(UTC)`; moves only when told to."""

    def __init__(self, start: datetime = DEFAULT_START) -> None:
        if start.tzinfo is None:
            raise ValueError("the clock's start must be timezone-aware (UTC)")
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> datetime:
        self.now += delta
        return self.now

    def set(self, moment: datetime) -> datetime:
        self.now = moment
        return self.now
