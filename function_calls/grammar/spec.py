"""What a `<when>` phrase said, in either language, and how it becomes exact arguments.

The language parsers only record what the words said (a day, a clock reading, a part of
the day, a repeat rule, a delay). `WhenSpec.resolve` turns that into `ReminderArgs`' raw
arguments against the chat's clock, and refuses whatever the words leave open, such as
"at 3" (03:00 or 15:00?) or "tonight" without a time.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

from groupmate.storage.exceptions import GroupmateError
from groupmate.storage.recurrence import Kind, local_instant

if TYPE_CHECKING:
    from groupmate.function_calls.grammar.limits import Limit

Meridiem = Literal["am", "pm"]
DayPart = Literal["morning", "noon", "afternoon", "evening", "night"]
WeekdayMode = Literal["upcoming", "next", "this_week", "next_week"]
RepeatKind = Literal["daily", "weekdays", "weekly", "monthly"]

DEFAULT_TIME = time(9, 0)
# A bare hour in this range could be either half of the day; everything else is read as
# the 24-hour clock ("at 7" is 07:00, "at 19" is 19:00).
_AMBIGUOUS_HOURS = range(1, 6)
# Parts of the day that pin the time (none do without a clock reading, except these).
_PART_DEFAULTS: dict[DayPart, time] = {"morning": DEFAULT_TIME, "noon": time(12, 0)}


class GrammarError(GroupmateError, ValueError):
    """The phrase is not understood exactly; the message says what and how to write it."""


@dataclass(frozen=True, slots=True)
class Clock:
    """A clock reading as written: "9", "9:30", "9pm", "21:00", "noon"."""

    hour: int
    minute: int = 0
    meridiem: Meridiem | None = None
    # Written unambiguously on the 24-hour clock: "09:30", "21:00", "noon", "midnight".
    exact: bool = False
    text: str = ""


@dataclass(frozen=True, slots=True)
class Day:
    """A one-time day: an offset from today, a weekday, a date, or a day of the month."""

    kind: Literal["offset", "weekday", "date", "month_day", "month_date"]
    offset: int = 0
    weekday: int = 0
    mode: WeekdayMode = "upcoming"
    year: int | None = None
    month: int = 0
    day: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class Repeat:
    kind: RepeatKind
    interval: int = 1
    weekday: int | None = None
    day: int | None = None
    text: str = ""
    # A repeat within the day: minutes between occurrences, on the days `kind` names
    # (daily: every day; weekdays; weekly: that weekday).
    every: int | None = None


@dataclass(frozen=True, slots=True)
class Delay:
    """ "in 90 minutes" (minutes) or "in 3 days" (whole days, kept on the wall clock)."""

    minutes: int = 0
    days: int = 0
    text: str = ""


@dataclass(frozen=True, slots=True)
class ResolvedWhen:
    """`ReminderArgs` raw fields for the phrase, and whether the 09:00 default applied."""

    type: Kind
    time: str | None = None
    in_minutes: int | None = None
    weekday: int | None = None
    day: int | None = None
    interval: int | None = None
    every_minutes: int | None = None
    to: str | None = None
    until: str | None = None
    count: int | None = None
    default_time: bool = False

    def arguments(self) -> dict[str, Any]:
        raw: dict[str, Any] = {"type": self.type}
        names = ("time", "in_minutes", "weekday", "day", "interval", "every_minutes", "to")
        for name in (*names, "until", "count"):
            value = getattr(self, name)
            if value is not None:
                raw[name] = value
        return raw


@dataclass(slots=True)
class WhenSpec:
    """What the words said; filled clause by clause, each part at most once."""

    day: Day | None = None
    clock: Clock | None = None
    part: DayPart | None = None
    repeat: Repeat | None = None
    delay: Delay | None = None
    words: list[str] = field(default_factory=list)
    # "every hour from 9 to 17": the last time of day (the first is `clock`).
    window_end: Clock | None = None
    # Limits of a repeating reminder: "until friday", "5 times".
    until: Limit | None = None
    count: int | None = None
    count_text: str = ""

    @property
    def complete(self) -> bool:
        """A day or rule and its time are both given: only a limit can be added."""
        has_time = self.clock is not None or (self.delay is not None and not self.delay.days)
        within = self.repeat is not None and self.repeat.every is not None
        return (has_time or within) and (self.day or self.repeat or self.delay) is not None

    @property
    def empty(self) -> bool:
        return not (
            self.day or self.clock or self.part or self.repeat or self.delay or self.limited
        )

    @property
    def limited(self) -> bool:
        return self.until is not None or self.count is not None

    def set_until(self, limit: Limit) -> None:
        if self.until is not None:
            raise GrammarError(f"I see two ends, “{self.until.text}” and “{limit.text}”; give one.")
        self.until = limit

    def set_count(self, count: int, text: str) -> None:
        if self.count is not None:
            raise GrammarError(f"I see two counts, “{self.count_text}” and “{text}”; give one.")
        self.count, self.count_text = count, text

    def set_window(self, start: Clock, end: Clock | None) -> None:
        self.set_clock(start)
        self.window_end = end

    def set_day(self, day: Day) -> None:
        if self.day is not None:
            raise GrammarError(f"I see two days, “{self.day.text}” and “{day.text}”; give one.")
        if self.repeat is not None:
            raise GrammarError(
                f"“{day.text}” doesn't fit a repeating reminder (“{self.repeat.text}”)."
            )
        self.day = day

    def set_clock(self, clock: Clock) -> None:
        if self.clock is not None:
            raise GrammarError(
                f"I see two times, “{self.clock.text}” and “{clock.text}”; give one."
            )
        self.clock = clock

    def set_part(self, part: DayPart, text: str) -> None:
        if self.part is not None and self.part != part:
            raise GrammarError(f"“{text}” contradicts the part of the day already given.")
        self.part = part

    def set_repeat(self, repeat: Repeat) -> None:
        if self.repeat is not None:
            # "every hour on weekdays", "工作日每小时": the days of a repeat within a day.
            self.repeat = repeat_limits.days_of_within(self.repeat, repeat)
            return
        if self.day is not None:
            raise GrammarError(
                f"“{self.day.text}” doesn't fit a repeating reminder (“{repeat.text}”)."
            )
        self.repeat = repeat

    def set_delay(self, delay: Delay) -> None:
        if self.delay is not None or self.day is not None or self.repeat is not None:
            raise GrammarError(f"“{delay.text}” can't be combined with another day or delay.")
        self.delay = delay

    # --- resolution ------------------------------------------------------------------

    def wall_time(self) -> tuple[time, bool]:
        """The time of day the words give, and whether it is the 09:00 default."""
        clock, part = self.clock, self.part
        if clock is None:
            if part is None:
                return DEFAULT_TIME, True
            if part in _PART_DEFAULTS:
                return _PART_DEFAULTS[part], part == "morning"
            raise GrammarError(f"At what time in the {part}? For example “{_example(part)}”.")
        return clock_time(clock, part), False

    def resolve(self, now: datetime) -> ResolvedWhen:
        """Exact arguments against `now` (aware, in the chat's zone)."""
        if self.empty:
            raise GrammarError("I couldn't find when.")
        if self.repeat is None:
            repeat_limits.refuse_limits(self)
        if self.delay is not None:
            return self._resolve_delay(now)
        if self.repeat is not None:
            return repeat_limits.resolve_repeat(self, self.repeat, now)
        wall, default = self.wall_time()
        hhmm = f"{wall:%H:%M}"
        if self.day is None:
            if self.clock is not None and self.clock.hour == 0 and self.clock.text == "midnight":
                when = now.date() + timedelta(days=1)
            else:
                # "at 9pm": today, or tomorrow once today's has passed.
                when = now.date()
                if local_instant(when, wall, _zone(now)) <= now:
                    self._refuse_evening_or_tomorrow(wall, now)
                    when += timedelta(days=1)
        else:
            if self.clock is not None and self.clock.text == "midnight":
                raise GrammarError(
                    "Midnight at the start or the end of that day? Write 00:00 with the date, "
                    "or 23:59."
                )
            when = day_date(self.day, wall, now)
        return ResolvedWhen(type="once", time=f"{when.isoformat()} {hhmm}", default_time=default)

    def _refuse_evening_or_tomorrow(self, wall: time, now: datetime) -> None:
        """At 10:20, a bare "at 7" read as 07:00 would land tomorrow morning, while the
        speaker may well mean 19:00 today: both readings are plausible, so ask."""
        clock = self.clock
        if clock is None or clock.meridiem is not None or clock.exact or self.part is not None:
            return
        if not 1 <= clock.hour <= 11:
            return
        evening = time(clock.hour + 12, clock.minute)
        if local_instant(now.date(), evening, _zone(now)) > now:
            text = clock.text
            if text.isascii():
                hint = f"“{text}pm” or “tomorrow at {text}”"
            else:
                hint = f"“晚上{text}” or “明天{text}”"
            raise GrammarError(
                f"Did you mean {evening:%H:%M} today or {wall:%H:%M} tomorrow? Write {hint}."
            )

    def _resolve_delay(self, now: datetime) -> ResolvedWhen:
        delay = self.delay
        assert delay is not None
        if delay.days and not delay.minutes:
            # "in 3 days": the same wall-clock time three days on (or the time given).
            if self.clock is not None or self.part is not None:
                wall, _ = self.wall_time()
            else:
                wall = now.time().replace(second=0, microsecond=0)
            when = now.date() + timedelta(days=delay.days)
            return ResolvedWhen(type="once", time=f"{when.isoformat()} {wall:%H:%M}")
        if self.clock is not None or self.part is not None:
            raise GrammarError(f"“{delay.text}” already says when; drop the time of day.")
        minutes = delay.minutes + delay.days * 1440
        if minutes < 1:
            raise GrammarError("The shortest delay is one minute.")
        return ResolvedWhen(type="once", in_minutes=minutes)


def _zone(now: datetime) -> ZoneInfo:
    zone = now.tzinfo
    assert isinstance(zone, ZoneInfo), "resolve() takes the chat's local time"
    return zone


def _example(part: DayPart) -> str:
    examples = {"afternoon": "this afternoon at 3", "evening": "tonight at 8"}
    return examples.get(part, "tonight at 10")


def clock_time(clock: Clock, part: DayPart | None) -> time:
    hour, minute = clock.hour, clock.minute
    if not 0 <= minute <= 59:
        raise GrammarError(f"“{clock.text}” is not a time of day.")
    if clock.meridiem is not None:
        if not 1 <= hour <= 12:
            raise GrammarError(f"“{clock.text}” is not a time of day.")
        if part not in (None, "noon") and (clock.meridiem == "am") != (part == "morning"):
            raise GrammarError(f"“{clock.text}” contradicts “{part}”.")
        hour = hour % 12 + (12 if clock.meridiem == "pm" else 0)
        return time(hour, minute)
    if not 0 <= hour <= 23:
        raise GrammarError(f"“{clock.text}” is not a time of day; use 0-23 or am/pm.")
    if part is None:
        if hour in _AMBIGUOUS_HOURS and not clock.exact:
            raise GrammarError(
                f"Did you mean {hour:02d}:{minute:02d} or {hour + 12}:{minute:02d}? "
                f"Write {hour}am or {hour}pm (or {hour + 12}:{minute:02d})."
            )
        return time(hour, minute)
    return time(_hour_in_part(hour, part, clock), minute)


def _hour_in_part(hour: int, part: DayPart, clock: Clock) -> int:
    """ "at 8" in the evening is 20:00; a reading that doesn't fit the part is refused."""
    fits = {
        "morning": range(1, 12),
        "noon": range(11, 14),
        "afternoon": range(12, 20),
        "evening": range(16, 24),
        "night": range(18, 24),
    }[part]
    if hour in fits:
        return hour
    if 1 <= hour <= 11 and hour + 12 in fits:
        return hour + 12
    raise GrammarError(f"“{clock.text}” doesn't fit “{part}”; write the time as 24-hour HH:MM.")


def day_date(day: Day, wall: time, now: datetime) -> date:
    today = now.date()
    zone = _zone(now)
    if day.kind == "offset":
        return today + timedelta(days=day.offset)
    if day.kind == "weekday":
        if day.mode in ("this_week", "next_week"):
            monday = today - timedelta(days=today.weekday())
            week = 7 if day.mode == "next_week" else 0
            return monday + timedelta(days=week + day.weekday)
        ahead = (day.weekday - today.weekday()) % 7
        if day.mode == "next" and ahead == 0:
            ahead = 7
        if day.mode == "next" and today.weekday() + ahead <= 6:
            # On a Monday, "next friday" is this week's for some people and next week's
            # for others: ask rather than pick one.
            this = today + timedelta(days=ahead)
            after = this + timedelta(days=7)
            raise GrammarError(
                f"This {this:%A} ({this:%d %b}) or the one after ({after:%d %b})? "
                f"Write “this {this:%A}” or the date, e.g. “on {after:%b} {after.day}”."
            )
        when = today + timedelta(days=ahead)
        if local_instant(when, wall, zone) <= now:
            when += timedelta(days=7)
        return when
    if day.kind == "date":
        assert day.year is not None
        return _real_date(day.year, day.month, day.day, day.text)
    if day.kind == "month_date":
        # Without a year: the next time that date comes round; not today's, once past.
        if (day.month, day.day) == (today.month, today.day):
            if local_instant(today, wall, zone) <= now:
                raise GrammarError(f"{wall:%H:%M} today has already passed.")
            return today
        for year in range(today.year, today.year + 9):
            if day.month == 2 and day.day == 29 and not calendar.isleap(year):
                continue
            when = _real_date(year, day.month, day.day, day.text)
            if local_instant(when, wall, zone) > now:
                return when
        raise GrammarError(f"“{day.text}” is not a date.")
    # A day of the month alone ("on the 24th"): this month's, else the next that has it.
    year, month = today.year, today.month
    for _ in range(14):
        if day.day <= calendar.monthrange(year, month)[1]:
            when = date(year, month, day.day)
            if local_instant(when, wall, zone) > now:
                return when
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    raise GrammarError(f"“{day.text}” is not a day of the month.")


def _real_date(year: int, month: int, day: int, text: str) -> date:
    try:
        return date(year, month, day)
    except ValueError:
        raise GrammarError(f"“{text}” is not a calendar date.") from None


# Last: the limits module reads the clauses above (and may be the one importing this).
import groupmate.function_calls.grammar.limits as repeat_limits  # noqa: E402
