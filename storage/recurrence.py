"""Reminder schedules: local wall-clock rules resolved to UTC instants, per RFC 5545.

A local time that falls into a DST gap is read with the offset in force before the gap, so
it fires once at the shifted wall time (02:30 becomes 03:30). An ambiguous local time
fires at its first occurrence. Both are what `zoneinfo` does for `fold=0`.
"""

from __future__ import annotations

import calendar
import functools
import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal, get_args
from zoneinfo import ZoneInfo, available_timezones

from groupmate.storage.errors import InvalidTimezoneError, RepeatTooOftenError
from groupmate.storage.workdays import WorkCalendar, weekday_or_workday

# The kinds a reminder's `type` argument names (tools, REST); "interval" is made from
# its own fields (a step, a window), not named by a type.
DayKind = Literal["once", "daily", "weekly", "weekdays", "monthly"]
Kind = Literal[DayKind, "interval"]
KINDS: tuple[Kind, ...] = get_args(Kind)
INTERVAL_KINDS: tuple[Kind, ...] = ("daily", "weekly", "monthly")
MAX_INTERVAL = 52
# The most occurrences a `count` limit may ask for: enough for a month of hourly ones.
MAX_COUNT = 1000
# Defaults of config's `reminders.min_interval` and `reminders.max_per_day`: a repeat
# within a day is a flood risk in a group, so both are checked wherever a rule is made.
MIN_EVERY = timedelta(minutes=5)
MAX_PER_DAY = 48
# Default of config's `reminders.until_done_cap`: the most times an "until done" reminder
# fires when nobody says done.
UNTIL_DONE_CAP = 12
_DAY = timedelta(days=1)
_TICK = timedelta(microseconds=1)

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
    # interval: elapsed time between occurrences, counted from `wall_time` on `on_date`.
    every: timedelta | None = None
    # interval: a daily window of wall time; each day's grid restarts at `wall_time` and
    # ends at the last step at or before `window_end`. None: one grid, day and night.
    window_end: time | None = None
    # interval: the weekdays it fires on (0 = Monday); empty: every day.
    on_days: tuple[int, ...] = ()
    # Limits, on any repeating kind. `until`: the last occurrence is the last one at or
    # before it (a date: before that local day ends; a datetime: that UTC instant).
    # `count`: occurrences in all, from the first on `on_date`.
    until: date | datetime | None = None
    count: int | None = None
    # weekdays: the country's work days instead of Monday to Friday (storage/workdays.py).
    calendar: WorkCalendar | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown schedule kind {self.kind!r}")
        if self.kind == "once" and self.on_date is None:
            raise ValueError("a one-time schedule needs a date")
        self._check_interval()
        self._check_limits()
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

    def _check_interval(self) -> None:
        if self.kind != "interval":
            if self.every is not None or self.window_end is not None or self.on_days:
                raise ValueError("only an interval schedule has a step, window or days")
            return
        if self.every is None or self.every <= timedelta(0) or self.on_date is None:
            raise ValueError("an interval schedule needs a positive step and a first date")
        if self.every >= _DAY:
            raise ValueError("an interval under a day; longer ones are daily or weekly rules")
        if self.window_end is not None and self.window_end <= self.wall_time:
            raise ValueError("a window ends after it starts, on the same day")
        if any(not 0 <= weekday <= 6 for weekday in self.on_days):
            raise ValueError("weekdays are 0 (Monday) to 6 (Sunday)")
        if tuple(sorted(set(self.on_days))) != self.on_days:
            raise ValueError("weekdays are given once each, in order")

    def _check_limits(self) -> None:
        if self.until is None and self.count is None:
            return
        if not self.recurring:
            raise ValueError("only a repeating schedule has a limit")
        if isinstance(self.until, datetime) and self.until.tzinfo is None:
            raise ValueError("an instant limit is timezone-aware")
        if self.count is not None:
            if not 1 <= self.count <= MAX_COUNT:
                raise ValueError(f"a count is 1 to {MAX_COUNT}")
            if self.on_date is None:
                raise ValueError("a count needs the date of the first occurrence")

    @property
    def limited(self) -> bool:
        return self.until is not None or self.count is not None

    def per_day(self) -> int:
        """The most times it fires on one ordinary (24-hour) day."""
        if self.kind != "interval":
            return 1
        assert self.every is not None
        if self.window_end is None:
            most = math.ceil(_DAY / self.every)
        else:
            span = datetime.combine(date.min, self.window_end) - datetime.combine(
                date.min, self.wall_time
            )
            most = span // self.every + 1
        # A count bounds a day too: "every 10 minutes until done" fires 12 times at most.
        return most if self.count is None else min(most, self.count)

    def without_limit(self) -> Schedule:
        return replace(self, until=None, count=None)

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
        if self.kind == "interval":
            return not self.on_days or day.weekday() in self.on_days
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
        if self.count is not None:
            # Occurrences are counted from the first, so none comes before it.
            instant = max(instant, self._start - _TICK)
        found = self._unlimited_after(instant)
        if found is None or not self.limited:
            return found
        return found if found <= self._last_bound() else None

    def occurrences(self, after: datetime, until: datetime) -> Iterator[datetime]:
        """Occurrences in (after, until], in order."""
        current = self.first_after(after)
        while current is not None and current <= until:
            yield current
            current = self.first_after(current) if self.recurring else None

    @property
    def _start(self) -> datetime:
        return local_instant(self._anchor, self.wall_time, self.zone)

    def _unlimited_after(self, instant: datetime) -> datetime | None:
        if self.kind == "interval" and self.window_end is None:
            return self._grid_after(instant)
        zone = self.zone
        # Start a day early: a shifted wall time can land on the previous UTC date.
        start = instant.astimezone(zone).date() - timedelta(days=1)
        for day in self._matching_days(start):
            if self.kind == "interval":
                found = self._window_after(day, instant)
                if found is not None:
                    return found
                continue
            occurrence = local_instant(day, self.wall_time, zone)
            if occurrence > instant:
                return occurrence
        return None

    def _window_after(self, day: date, instant: datetime) -> datetime | None:
        """The day's first step after `instant`: elapsed time from the window's start."""
        assert self.every is not None and self.window_end is not None
        if day < self._anchor:
            return None
        opens = local_instant(day, self.wall_time, self.zone)
        found = (
            opens if instant < opens else opens + ((instant - opens) // self.every + 1) * self.every
        )
        return found if found <= local_instant(day, self.window_end, self.zone) else None

    def _grid_after(self, instant: datetime) -> datetime | None:
        """The next step of one grid of elapsed time, on an allowed local day."""
        assert self.every is not None
        start, zone = self._start, self.zone
        for _ in range(8):  # a week of days ahead reaches every allowed weekday
            steps = 0 if instant < start else (instant - start) // self.every + 1
            found = start + steps * self.every
            day = found.astimezone(zone).date()
            if self._matches(day):
                return found
            allowed = next(self._matching_days(day))
            instant = local_instant(allowed, time(0), zone) - _TICK
        return None

    def _last_bound(self) -> datetime:
        """The instant no occurrence may pass: the earlier of `until` and the count."""
        bounds = [_count_end(self)] if self.count is not None else []
        if isinstance(self.until, datetime):
            bounds.append(self.until)
        elif self.until is not None:
            bounds.append(local_instant(self.until + _DAY, time(0), self.zone) - _TICK)
        return min(bounds)

    def last(self) -> datetime | None:
        """The last occurrence under the limits; None when it never ends (or never fires)."""
        if not self.limited:
            return None
        bound = self._last_bound()
        if self.count is not None and bound == _count_end(self):
            return bound
        return self._last_at_or_before(bound)

    def _last_at_or_before(self, bound: datetime) -> datetime | None:
        """The latest occurrence at or before `bound`, searching back a day at a time."""
        rule, zone = self.without_limit(), self.zone
        first = self._start if self.count is not None else None
        day = bound.astimezone(zone).date()
        for _ in range(_SEARCH_DAYS * self.interval + 1):
            latest = None
            found = rule.first_after(local_instant(day, time(0), zone) - _TICK)
            while found is not None and found <= bound and found.astimezone(zone).date() <= day:
                latest, found = found, rule.first_after(found)
            if latest is not None:
                return None if first is not None and latest < first else latest
            day -= _DAY
        return None


def _count_end(schedule: Schedule) -> datetime:
    """The `count`th occurrence; cached, as every claim of the reminder asks for it."""
    # Keyed by the fold too: times that differ only in it compare (and hash) equal.
    return _count_end_of(schedule, schedule.wall_time.fold)


@functools.lru_cache(maxsize=4096)
def _count_end_of(schedule: Schedule, fold: int) -> datetime:
    assert schedule.count is not None
    rule = schedule.without_limit()
    current = rule.first_after(schedule._start - _TICK)
    for _ in range(schedule.count - 1):
        assert current is not None  # a repeating rule always has a next occurrence
        current = rule.first_after(current)
    assert current is not None
    return current


@dataclass(frozen=True, slots=True)
class RepeatRate:
    """The chat's bounds on a repeat within a day (config `reminders.min_interval` and
    `reminders.max_per_day`); the store checks every schedule it saves against them."""

    minimum: timedelta = MIN_EVERY
    max_per_day: int = MAX_PER_DAY

    def check(self, schedule: Schedule) -> Schedule:
        return check_rate(schedule, self.minimum, self.max_per_day)


DEFAULT_RATE = RepeatRate()


def check_rate(
    schedule: Schedule, minimum: timedelta = MIN_EVERY, max_per_day: int = MAX_PER_DAY
) -> Schedule:
    """Return `schedule`, or raise RepeatTooOftenError if it repeats within a day more
    often than `minimum` allows or more than `max_per_day` times on one day (a counted
    repeat: at most its count)."""
    if schedule.every is not None:
        per_day = schedule.per_day()
        if schedule.count is not None:
            # It fires `count` times in all, so no more on any one day: an "until done"
            # every 10 minutes stops after its cap (12), far below a day's 144.
            per_day = min(per_day, schedule.count)
        if schedule.every < minimum or per_day > max_per_day:
            raise RepeatTooOftenError(schedule.every, minimum, per_day, max_per_day)
    return schedule


@functools.cache
def _known_zones() -> frozenset[str]:
    return frozenset(available_timezones() - {"Factory", "localtime"})


def check_timezone(name: str) -> str:
    """Return the IANA zone name, or raise InvalidTimezoneError."""
    if name not in _known_zones():
        raise InvalidTimezoneError(name)
    return name
