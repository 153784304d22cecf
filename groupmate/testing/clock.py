"""A clock tests move by hand."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

DEFAULT_START = datetime(2026, 11, 21, 13, 5, tzinfo=UTC)
"""Where a `FakeClock` starts unless told otherwise: a fixed, ordinary moment (Saturday
21 November 2026, 13:05 UTC), so that tests see the same dates on every run."""


class FakeClock:
    """Callable like `datetime.now(UTC)`; moves only when told to.

    The bot reads the time from it. `advance` and `set` move it and nothing else: to
    move a test bot's clock *and* deliver the reminders due meanwhile, use
    `TestBot.advance`. Start it elsewhere with `FakeClock(datetime(..., tzinfo=UTC))`
    and give it to the bot (`groupmate_bot(clock=...)`).
    """

    def __init__(self, start: datetime = DEFAULT_START) -> None:
        if start.tzinfo is None:
            raise ValueError("the clock's start must be timezone-aware (UTC)")
        self.now = start

    def __call__(self) -> datetime:
        """The current moment (timezone-aware, UTC)."""
        return self.now

    def advance(self, delta: timedelta) -> datetime:
        """Move the clock `delta` on (delivering nothing); the new moment."""
        self.now += delta
        return self.now

    def set(self, moment: datetime) -> datetime:
        """Put the clock at `moment` (timezone-aware); the new moment."""
        if moment.tzinfo is None:
            raise ValueError("the clock's moment must be timezone-aware (UTC)")
        self.now = moment
        return self.now
