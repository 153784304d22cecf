"""The judge's own reading of an expected time at the moment a case ran.

A real-clock case names its expected first fire time relative to now ("tomorrow at
09:00", "in 120 minutes", "monday at 09:00"). This reads it in the case's zone with plain
date arithmetic and never with the bot's grammar: a judge that shared the reader's bugs
could not find them.

The bot reads its clock somewhere between the moment the message was sent and the moment
the reply came back, and that can be minutes on a small model. Each expectation is read at
both ends of that interval: "in 2 hours" admits any minute in between; "at 18:00" said at
17:59:50 and answered at 18:00:40 admits today's and tomorrow's 18:00, and nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from groupmate.bot.eval.cases import RelativeTime

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# Every anchor recurs within two months (a month day up to 28, a weekday, a workday).
_SEARCH_DAYS = 62


@dataclass(frozen=True, slots=True)
class Moment:
    """When the bot may have read its clock for the case: from `start` to `end` (aware)."""

    start: datetime
    end: datetime

    @classmethod
    def at(cls, instant: datetime) -> Moment:
        return cls(instant, instant)


@dataclass(frozen=True, slots=True)
class Span:
    """Whole UTC minutes from `earliest` to `latest`, both included."""

    earliest: datetime
    latest: datetime

    def __contains__(self, instant: datetime) -> bool:
        return self.earliest <= _minute(instant) <= self.latest

    def __iter__(self) -> Iterator[datetime]:
        return iter((self.earliest, self.latest))


@dataclass(frozen=True, slots=True)
class Expected:
    """The first fire times a case admits. No spans: the time named was already past at
    both ends, so nothing may be stored. `past_ok`: past at one end only, so storing
    nothing is right as well."""

    spans: tuple[Span, ...]
    past_ok: bool = False

    @property
    def past(self) -> bool:
        return not self.spans

    def admits(self, instant: datetime) -> bool:
        return any(instant in span for span in self.spans)

    def describe(self, zone: ZoneInfo) -> str:
        """'2026-11-25 09:00', or 'a time ... to ...' in the case's zone, for a reason."""
        if self.past:
            return "a time already past"
        parts = []
        for span in self.spans:
            first, last = (f"{t.astimezone(zone):%Y-%m-%d %H:%M}" for t in span)
            parts.append(first if first == last else f"{first} to {last}")
        return " or ".join(parts)


def _minute(instant: datetime) -> datetime:
    return instant.astimezone(UTC).replace(second=0, microsecond=0)


def expected(first: str | RelativeTime, zone: str, moment: Moment) -> Expected:
    """What `first` admits when the bot read its clock within `moment`."""
    tz = ZoneInfo(zone)
    if isinstance(first, str):
        # A fixed local time; an hour that occurs twice (the autumn change) admits both.
        local = datetime.strptime(first, "%Y-%m-%d %H:%M")
        instants = {_minute(local.replace(tzinfo=tz, fold=fold)) for fold in (0, 1)}
        return Expected(tuple(Span(t, t) for t in sorted(instants)))
    if first.in_minutes is not None:
        delay = timedelta(minutes=first.in_minutes)
        return Expected((Span(_minute(moment.start + delay), _minute(moment.end + delay)),))
    readings = [resolve(first, tz, moment.start), resolve(first, tz, moment.end)]
    found = sorted({_minute(t) for t in readings if t is not None})
    return Expected(tuple(Span(t, t) for t in found), past_ok=None in readings)


def resolve(first: RelativeTime, zone: ZoneInfo, now: datetime) -> datetime | None:
    """The instant `first` names when said at `now`; None when it names a time already past
    ("today at 08:00" said at 09:00, "12-24 at 18:00" said on the evening of the 24th)."""
    local = now.astimezone(zone)
    today = local.date()
    if first.in_minutes is not None:
        return now + timedelta(minutes=first.in_minutes)
    assert first.at is not None
    wall = time.fromisoformat(first.at)

    def at(day: date) -> datetime:
        return datetime.combine(day, wall, tzinfo=zone)

    def ahead(day: date) -> datetime | None:
        return at(day) if at(day) > local else None

    if first.day is not None:
        offset = ("today", "tomorrow", "day_after_tomorrow").index(first.day)
        return ahead(today + timedelta(days=offset))
    if first.date is not None:
        return ahead(_next_date(first.date, today))
    if first.weekday is not None and first.next_week:
        # The day of the calendar week after this one (weeks start on Monday): 下周三.
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=1)
        return at(monday + timedelta(days=WEEKDAYS.index(first.weekday)))
    for offset in range(_SEARCH_DAYS):
        day = today + timedelta(days=offset)
        if _matches(first, day) and at(day) > local:
            return at(day)
    raise AssertionError(f"{first} matches no day within {_SEARCH_DAYS}")


def _matches(first: RelativeTime, day: date) -> bool:
    if first.weekday is not None:
        return day.weekday() == WEEKDAYS.index(first.weekday)
    if first.workday:
        return day.weekday() < 5
    if first.month_day is not None:
        return day.day == first.month_day
    return True  # `at` alone: today if still ahead, else tomorrow


def _next_date(month_day: str, today: date) -> date:
    """This year's 'MM-DD' if not gone yet (today counts: its time decides), else the next
    year that has it (02-29)."""
    month, day = (int(part) for part in month_day.split("-"))
    for year in range(today.year, today.year + 9):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate >= today:
            return candidate
    raise AssertionError(f"no {month_day} after {today}")
