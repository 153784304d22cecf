"""Reminder schedules: local wall-clock rules resolved to UTC instants, per RFC 5545.

A local time that falls into a DST gap is read with the offset in force before the gap, so
it fires once at the shifted wall time (02:30 becomes 03:30). An ambiguous local time
fires at its first occurrence. Both are what `zoneinfo` does for `fold=0`.
"""

from __future__ import annotations

import calendar
import functools
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal, get_args
from zoneinfo import ZoneInfo, available_timezones

from groupmate.storage.errors import InvalidTimezoneError
from groupmate.storage.workdays import WorkCalendar, weekday_or_workday

Kind = Literal["once", "daily", "weekly", "weekdays", "monthly"]
KINDS: tuple[Kind, ...] = get_args(Kind)
INTERVAL_KINDS: tuple[Kind, ...] = ("daily", "weekly", "monthly")
MAX_INTERVAL = 52

# No rule skips more than a month, so a month and a day bound every search.
_SEARCH_DAYS = 32


def local_instant(day: date, wall: time, zone: ZoneInfo) -> datetime:
    """The UTC instant of `wall` on `day` in `zone` (gap: shifted later; overlap: first)."""
    return datetime.combine(day, wall, tzinfo=zone).astimezone(UTC)


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a reminder fires, in the wall-clock terms the user gave."""

    kind: Kind
    wall_time: time
    timezone: str
    # once: the date. Repeating every `interval` > 1 days, weeks or months: the date of
    # the first occurrence, which the later ones count from.
    on_date: date | None = None
    weekday: int | None = None  # weekly: 0 = Monday
    day: int | None = None  # monthly: 1-31, clipped to the month's last day
    interval: int = 1
    # weekdays: the country's work days instead of Monday to Friday (storage/workdays.py).
    calendar: WorkCalendar | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown schedule kind {self.kind!r}")
        if self.kind == "once" and self.on_date is None:
            raise ValueError("a one-time schedule needs a date")
        if not 1 <= self.interval <= MAX_INTERVAL:
            raise ValueError(f"an interval is 1 to {MAX_INTERVAL}")
        if self.interval > 1 and (self.kind not in INTERVAL_KINDS or self.on_date is None):
            raise ValueError("only daily, weekly and monthly rules repeat at an interval")
        if self.kind == "weekly" and (self.weekday is None or not 0 <= self.weekday <= 6):
            raise ValueError("a weekly schedule needs a weekday from 0 (Monday) to 6 (Sunday)")
        if self.kind == "monthly" and (self.day is None or not 1 <= self.day <= 31):
            raise ValueError("a monthly schedule needs a day from 1 to 31")
        if self.calendar is not None and self.kind != "weekdays":
            raise ValueError("only a weekdays schedule follows a work-day calendar")

    @classmethod
    def once_at(cls, instant: datetime, timezone: str) -> Schedule:
        """A one-time schedule for this exact instant, in the given zone's wall time."""
        local = instant.astimezone(ZoneInfo(timezone))
        return cls("once", local.time(), timezone, on_date=local.date())

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    @property
    def recurring(self) -> bool:
        return self.kind != "once"

    def with_timezone(self, timezone: str) -> Schedule:
        return replace(self, timezone=timezone)

    def _matches(self, day: date) -> bool:
        if self.kind == "daily":
            return self._in_step((day - self._anchor).days)
        if self.kind == "weekdays":
            return weekday_or_workday(day, self.calendar)
        if self.kind == "weekly":
            return day.weekday() == self.weekday and self._in_step((day - self._anchor).days // 7)
        if self.kind == "monthly":
            assert self.day is not None
            months = (day.year - self._anchor.year) * 12 + day.month - self._anchor.month
            last = calendar.monthrange(day.year, day.month)[1]
            return day.day == min(self.day, last) and self._in_step(months)
        return day == self.on_date

    @property
    def _anchor(self) -> date:
        return self.on_date or date.min

    def _in_step(self, units: int) -> bool:
        return self.interval == 1 or units % self.interval == 0

    def _matching_days(self, start: date) -> Iterator[date]:
        if self.on_date is not None and self.kind == "once":
            yield self.on_date
            return
        for offset in range(_SEARCH_DAYS * self.interval + 1):
            day = start + timedelta(days=offset)
            if self._matches(day):
                yield day

    def first_after(self, instant: datetime) -> datetime | None:
        """The first occurrence strictly after `instant` (UTC), or None if there is none."""
        zone = self.zone
        # Start a day early: a shifted wall time can land on the previous UTC date.
        start = instant.astimezone(zone).date() - timedelta(days=1)
        for day in self._matching_days(start):
            occurrence = local_instant(day, self.wall_time, zone)
            if occurrence > instant:
                return occurrence
        return None

    def occurrences(self, after: datetime, until: datetime) -> Iterator[datetime]:
        """Occurrences in (after, until], in order."""
        current = self.first_after(after)
        while current is not None and current <= until:
            yield current
            current = self.first_after(current) if self.recurring else None


@functools.cache
def _known_zones() -> frozenset[str]:
    return frozenset(available_timezones() - {"Factory", "localtime"})


def check_timezone(name: str) -> str:
    """Return the IANA zone name, or raise InvalidTimezoneError."""
    if name not in _known_zones():
        raise InvalidTimezoneError(name)
    return name
