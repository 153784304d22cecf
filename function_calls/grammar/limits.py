"""Repeats within a day and repeat limits, in either language: what the words said
("every 2 hours from 9 to 17", "until friday", "5 times", "直到周五", "共3次") and the
exact `ReminderArgs` fields they become. A limit that can't be read as one exact end is
refused with how to write it; a one-time reminder takes no limit.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from groupmate.function_calls.grammar.spec import (
    Clock,
    Day,
    GrammarError,
    Repeat,
    ResolvedWhen,
    WhenSpec,
    clock_time,
    day_date,
)
from groupmate.function_calls.language import is_chinese
from groupmate.storage.recurrence import MAX_COUNT, local_instant

_DAY_END = time(23, 59)
# `Limit.month` of "until the end of the month", "直到月底": the month it is now.
THIS_MONTH = 0
# A repeat within a day steps less than this; a day or more is a rule of days.
MINUTES_IN_DAY = 24 * 60
_LIMIT_HINT = "give a day or date, e.g. “until Friday” or “until 5 Dec”"


@dataclass(frozen=True, slots=True)
class Limit:
    """The end of a repeating reminder: a day ("until friday"), a month ("until
    march": before it starts; "until the end of march"), or, for a repeat within a day,
    a time today ("every 30 minutes until 17:00")."""

    day: Day | None = None
    month: int | None = None
    month_end: bool = False
    clock: Clock | None = None
    text: str = ""


def days_of_within(current: Repeat, new: Repeat) -> Repeat:
    """One repeat within a day and the days it runs on, in either order ("every hour
    on weekdays", "工作日每小时"); any other pair of rules is refused."""
    within, days = (current, new) if current.every is not None else (new, current)
    fits = (
        within.every is not None
        and within.kind == "daily"
        and days.every is None
        and days.interval == 1
        and days.kind in ("daily", "weekdays", "weekly")
    )
    if not fits:
        raise GrammarError("Give one repeat rule per reminder.")
    text = " ".join(part for part in (current.text, new.text) if part)
    return replace(within, kind=days.kind, weekday=days.weekday, text=text)


# The hours of a repeat within a day, after the text: "… to drink water starting at 9",
# "…喝水，从9点开始". Left there, the reminder would start now, not at 9.
_HOURS_IN_TEXT = re.compile(
    r"\b(?:starting|beginning|from|between)\s+(?:at\s+)?\d|从.{0,6}?(?:点|[:：]\d)"
    r"|\d\s*点(?:钟)?(?:开始|起)(?!床|来|身)",
    re.IGNORECASE,
)


_LEADS = re.compile(r"^(?:[\s,;:，]+|(?:to|that|about)\b|提醒我们|提醒我|提醒)+", re.IGNORECASE)
_QUOTES = "\"“'「"


def check_hours_in_text(spec: WhenSpec, content: str) -> None:
    """Refuse the hours of a repeat within a day said after the text."""
    if spec.repeat is None or spec.repeat.every is None or spec.window_end is not None:
        return
    text = _LEADS.sub("", content)
    if spec.clock is None and text[:1] not in _QUOTES and _HOURS_IN_TEXT.search(text):
        raise GrammarError(
            "Put the hours with the repeat, before what to remind: “every 2 hours from 9 to "
            "17 to …”, “每2小时 从9点开始 …”; or put what to remind in quotes."
        )


def refuse_span(said: str, repeat: Repeat, minutes: int) -> None:
    """ "every 30 minutes for 2 hours": refused with the count or the end that says it
    exactly. "for 3 days" after any repeat is refused by the parser."""
    assert repeat.every is not None
    step = repeat.text
    count = minutes // repeat.every
    exact = f"“{step}, {count} times”" if count > 1 and not minutes % repeat.every else ""
    examples = " or ".join(part for part in (exact, f"“{step} until 17:00”") if part)
    raise GrammarError(
        f"“{said}” doesn't say when to stop. End the repeat after a number of times or "
        f"at a time of day, e.g. {examples}. If “{said}” is part of what to remind, put "
        "that in quotes."
    )


def refuse_count_after_days(said: str, rule: str) -> None:
    """ "every day twice": twice a day, or twice in all? Never guessed."""
    raise GrammarError(
        f"Is “{said}” on each day or in all? For a total, say “{rule} at 9, {said} in all”; "
        "for several a day, say the hours, e.g. “every 3 hours from 9 to 18”."
    )


def refuse_limits(spec: WhenSpec) -> None:
    """Limits and hours belong to a repeating reminder; this one fires once."""
    if spec.window_end is not None:
        start = spec.clock.text if spec.clock is not None else ""
        raise GrammarError(
            f"“from {start} to {spec.window_end.text}” needs a repeat within the day, "
            "e.g. “every hour from 9 to 17”."
        )
    said = spec.until.text if spec.until is not None else spec.count_text
    if said and is_chinese(said):
        raise GrammarError(
            f"“{said}”只用于重复的提醒，例如“每天9点{said}”；这个提醒只响一次。"  # noqa: RUF001
            f" (“{said}” is for a repeating reminder; this one fires once.)"
        )
    if said:
        raise GrammarError(
            f"“{said}” is for a repeating reminder, e.g. “every day at 9 {said}”; "
            "this one fires once."
        )


def resolve_repeat(spec: WhenSpec, repeat: Repeat, now: datetime) -> ResolvedWhen:
    """The arguments of a repeating rule, its hours and its limits, at `now`."""
    if repeat.every is None:
        if spec.window_end is not None:
            refuse_limits(replace(spec, until=None, count=None))
        wall, default = spec.wall_time()
        return ResolvedWhen(
            type=repeat.kind,
            time=f"{wall:%H:%M}",
            weekday=repeat.weekday,
            day=repeat.day,
            interval=repeat.interval if repeat.interval > 1 else None,
            default_time=default,
            **limit_arguments(spec, wall, now, within=False),
        )
    if spec.clock is None and spec.part is not None:
        raise GrammarError(
            f"Between which hours? For example “{repeat.text} from 9 to 12”; "
            "or drop the part of the day."
        )
    start = spec.wall_time()[0] if spec.clock is not None else None
    end = None if spec.window_end is None or start is None else window_end(spec, start)
    return ResolvedWhen(
        type=repeat.kind,
        time=None if start is None else f"{start:%H:%M}",
        weekday=repeat.weekday,
        every_minutes=repeat.every,
        to=None if end is None else f"{end:%H:%M}",
        **limit_arguments(spec, end or _DAY_END, now, within=True),
    )


def window_end(spec: WhenSpec, start: time) -> time:
    """The window's last time of day. From a morning start, a bare hour before it can
    only be the afternoon's: "from 9 to 5" ends at 17:00. Never across midnight: "from
    17 to 9" is refused."""
    end = spec.window_end
    assert end is not None
    bare = end.meridiem is None and not end.exact and spec.part is None
    afternoon = time(end.hour + 12, end.minute) if 1 <= end.hour <= 11 else None
    morning_start = start < time(12)
    if bare and morning_start and afternoon and time(end.hour, end.minute) <= start < afternoon:
        return afternoon
    wall = clock_time(end, None)
    if wall <= start:
        raise GrammarError(
            f"The hours end before they start ({start:%H:%M} to {wall:%H:%M}); "
            "give them within one day, e.g. “from 9 to 17”."
        )
    return wall


def limit_arguments(spec: WhenSpec, wall: time, now: datetime, *, within: bool) -> dict[str, Any]:
    """`until` ("YYYY-MM-DD", or "YYYY-MM-DD HH:MM" today) and `count` arguments."""
    limits: dict[str, Any] = {}
    if spec.count is not None:
        if not 1 <= spec.count <= MAX_COUNT:
            raise GrammarError(f"“{spec.count_text}”: give 1 to {MAX_COUNT} times.")
        limits["count"] = spec.count
    limit = spec.until
    if limit is None:
        return limits
    if limit.clock is not None:
        limits["until"] = _until_today(limit, now, within and spec.window_end is None)
    elif limit.day is not None:
        limits["until"] = day_date(limit.day, wall, now).isoformat()
    else:
        assert limit.month is not None
        limits["until"] = _until_month(limit.month, limit.month_end, now.date()).isoformat()
    return limits


def _until_today(limit: Limit, now: datetime, allowed: bool) -> str:
    """ "every 30 minutes until 17:00": the last may be at 17:00 today."""
    if not allowed or limit.clock is None:
        raise GrammarError(f"“{limit.text}” is a time of day; {_LIMIT_HINT}.")
    end = clock_time(limit.clock, None)
    zone = now.tzinfo
    assert isinstance(zone, ZoneInfo), "resolved in the chat's local time"
    if local_instant(now.date(), end, zone) <= now:
        raise GrammarError(f"{end:%H:%M} today has already passed; {_LIMIT_HINT}.")
    return f"{now.date().isoformat()} {end:%H:%M}"


def _until_month(month: int, month_end: bool, today: date) -> date:
    """ "until march": the last day before March; "until the end of march": its last."""
    month = month or today.month  # THIS_MONTH
    name = calendar.month_name[month]
    if month == today.month and not month_end:
        raise GrammarError(
            f"It is {name} now: until the end of {name}, or until next {name}? "
            f"Write “until the end of {name}” or the date."
        )
    year = today.year if month >= today.month else today.year + 1
    if month_end:
        return date(year, month, calendar.monthrange(year, month)[1])
    return date(year, month, 1) - timedelta(days=1)
