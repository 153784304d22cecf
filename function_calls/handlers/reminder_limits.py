"""Repeats within a day and repeat limits as schedules: the fields `every_minutes`,
`to`, `until` and `count` (the tools, REST, `/remind`) and an edit's limit (`/edit 3 until
friday`) become `Schedule`s here, counted from the next occurrence the user sees."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from groupmate.function_calls.handlers.reminder_words import format_local
from groupmate.storage.recurrence import Schedule, local_instant

WORKWEEK = (0, 1, 2, 3, 4)
UNTIL_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{1,2}:[0-9]{2})?$"


def within_day(
    kind: str,
    every_minutes: int,
    start: time | None,
    end: time | None,
    *,
    weekday: int | None,
    timezone: str,
    now: datetime,
) -> Schedule:
    """A repeat within a day on the days `kind` names (daily, weekdays: Monday to
    Friday, weekly: `weekday`). Without `start`, the first is one step from now."""
    every = timedelta(minutes=every_minutes)
    days = WORKWEEK if kind == "weekdays" else (weekday,) if weekday is not None else ()
    zone = ZoneInfo(timezone)
    if start is None:
        # One step of elapsed time, as the grid counts: across a DST change the wall
        # clock moves by an hour more or less.
        first = (now.astimezone(UTC) + every).astimezone(zone).replace(second=0, microsecond=0)
        start, on_date = first.time(), first.date()
    else:
        on_date = now.astimezone(zone).date()
    return Schedule(
        "interval",
        start,
        timezone,
        on_date=on_date,
        every=every,
        window_end=end,
        on_days=tuple(day for day in days if day is not None),
    )


def read_until(text: str, zone_name: str) -> date | datetime:
    """ "YYYY-MM-DD" (that local day's end) or "YYYY-MM-DD HH:MM" (that instant)."""
    day_text, _, clock = text.strip().partition(" ")
    try:
        day = date.fromisoformat(day_text)
        if not clock:
            return day
        hours, minutes = (int(part) for part in clock.split(":"))
        wall = time(hours, minutes)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a date; use YYYY-MM-DD, or YYYY-MM-DD HH:MM for a time"
        ) from None
    return local_instant(day, wall, ZoneInfo(zone_name))


def with_limits(
    schedule: Schedule,
    upcoming: datetime,
    *,
    until: date | datetime | None,
    count: int | None,
) -> Schedule:
    """`schedule` ending at `until` and after `count` occurrences from `upcoming`, its
    next one; a ValueError when that leaves none."""
    schedule = replace(schedule.without_limit(), until=until)
    if count is not None:
        schedule = _counted(schedule, upcoming, count)
    first = schedule.first_after(upcoming - timedelta(microseconds=1))
    if first is None or first != upcoming:
        when = format_local(upcoming, schedule.zone, with_year=True)
        raise ValueError(f"that limit ends before the next time it fires ({when})")
    return schedule


def _counted(schedule: Schedule, upcoming: datetime, count: int) -> Schedule:
    """A count counts from the first occurrence on `on_date`: moved to `upcoming`. Each
    day of a window starts at its first hour, so mid-window the count becomes the
    instant of its last occurrence instead."""
    local = upcoming.astimezone(schedule.zone)
    if schedule.kind == "interval" and schedule.window_end is None:
        return replace(schedule, wall_time=local.time(), on_date=local.date(), count=count)
    counted = replace(schedule, on_date=local.date(), count=count)
    if schedule.kind != "interval" or local.time() == schedule.wall_time:
        return counted
    last = upcoming
    for _ in range(count - 1):
        found = schedule.without_limit().first_after(last)
        assert found is not None  # a repeat within a day always has a next one
        last = found
    bound = last if not isinstance(schedule.until, datetime) else min(last, schedule.until)
    if isinstance(schedule.until, date) and not isinstance(schedule.until, datetime):
        day_end = local_instant(schedule.until + timedelta(days=1), time(0), schedule.zone)
        bound = min(bound, day_end - timedelta(microseconds=1))
    return replace(schedule, until=bound)


def rule_fields(schedule: Schedule) -> dict[str, Any]:
    """A stored rule as `ReminderArgs`' structured fields, its limits apart: what an
    edit that names only a time or a limit keeps."""
    wall = f"{schedule.wall_time:%H:%M}"
    if schedule.kind == "once":
        return {"type": "once", "time": f"{schedule.on_date} {wall}"}
    if schedule.kind != "interval":
        fields: dict[str, Any] = {"type": schedule.kind, "time": wall}
        named = {"weekday": schedule.weekday, "day": schedule.day}
        fields |= {name: value for name, value in named.items() if value is not None}
        return fields | ({"interval": schedule.interval} if schedule.interval > 1 else {})
    assert schedule.every is not None
    days = schedule.on_days
    fields = {"every_minutes": schedule.every // timedelta(minutes=1), "time": wall}
    if days == WORKWEEK:
        fields["type"] = "weekdays"
    elif len(days) == 1:
        fields |= {"type": "weekly", "weekday": days[0]}
    elif not days:
        fields["type"] = "daily"
    else:
        raise ValueError("this reminder's days can't be kept by an edit; give its new rule")
    if schedule.window_end is not None:
        fields["to"] = f"{schedule.window_end:%H:%M}"
    return fields


def limit_fields(schedule: Schedule) -> dict[str, Any]:
    """A stored rule's limits as `until` and `count` fields."""
    until = schedule.until
    fields: dict[str, Any] = {} if schedule.count is None else {"count": schedule.count}
    if isinstance(until, datetime):
        fields["until"] = f"{until.astimezone(schedule.zone):%Y-%m-%d %H:%M}"
    elif until is not None:
        fields["until"] = until.isoformat()
    return fields
