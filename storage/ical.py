"""A chat's reminders as an iCalendar (RFC 5545) feed that calendar apps subscribe to.

Each reminder becomes a VEVENT in its own zone (TZID, with a VTIMEZONE for it), and a
repeating one an RRULE. Where a rule can't say exactly what groupmate does, the feed
says it with exceptions, computed and never guessed: the occurrences `Schedule` gives
over the feed's window (a year back, a year ahead) are compared with the RRULE's own
expansion (dateutil's, as calendar apps expand it), and each difference becomes an
EXDATE (an occurrence the rule has and the reminder has not: a public holiday skipped)
or an RDATE (the other way round: a make-up work day, or a step moved by a DST change).
A rule with such exceptions, or one following a work-day calendar, ends with the window,
so nothing past it can be wrong; the window moves on each time the app reads the feed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from dateutil.rrule import rrulestr
from icalendar import Calendar, Event, vRecur

from groupmate.storage.recurrence import Schedule, local_instant
from groupmate.storage.reminder_rows import ReminderView

# How far back and ahead the feed shows a reminder's occurrences exactly.
HORIZON = timedelta(days=366)
# How often a calendar app should read the feed again (the ones that honour it).
REFRESH = timedelta(hours=1)
_TICK = timedelta(microseconds=1)
_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
PRODID = "-//groupmate//reminders feed//EN"


@dataclass(frozen=True, slots=True)
class FeedWindow:
    """The instants (UTC) whose occurrences the feed states exactly."""

    start: datetime
    end: datetime

    @classmethod
    def around(cls, now: datetime) -> FeedWindow:
        return cls(now - HORIZON, now + HORIZON)


@dataclass(slots=True)
class _Rule:
    """One VEVENT's recurrence: its first instant, its RRULE parts, its exceptions."""

    start: datetime  # aware: in the reminder's zone, or UTC for an elapsed-time grid
    parts: dict[str, Any]
    exdates: list[datetime] = field(default_factory=list)
    rdates: list[datetime] = field(default_factory=list)

    def text(self) -> str:
        text: bytes = vRecur(self.parts).to_ical()  # type: ignore[no-untyped-call]
        return text.decode()

    def expand(self, until: datetime) -> list[datetime]:
        """The rule's instants up to `until`, as a calendar app computes them."""
        rule = rrulestr(self.text(), dtstart=self.start)
        return [moment.astimezone(UTC) for moment in rule.between(self.start, until, inc=True)]


def _wall(day: date, wall: time, zone: Any) -> datetime:
    return datetime.combine(day, wall, tzinfo=zone)


def _rules(schedule: Schedule, first: datetime) -> list[_Rule]:
    """The RRULEs that state `schedule` from its occurrence `first` on, as near as one
    rule can (the exceptions do the rest)."""
    zone = schedule.zone
    day = first.astimezone(zone).date()
    every: dict[str, Any] = {"INTERVAL": schedule.interval} if schedule.interval > 1 else {}
    start = _wall(day, schedule.wall_time, zone)
    if schedule.kind == "daily":
        return [_Rule(start, {"FREQ": "DAILY", **every})]
    if schedule.kind == "weekly":
        assert schedule.weekday is not None
        return [_Rule(start, {"FREQ": "WEEKLY", **every, "BYDAY": [_DAYS[schedule.weekday]]})]
    if schedule.kind == "weekdays":
        return [_Rule(start, {"FREQ": "WEEKLY", "BYDAY": list(_DAYS[:5])})]
    if schedule.kind == "monthly":
        assert schedule.day is not None
        if schedule.day <= 28:
            return [_Rule(start, {"FREQ": "MONTHLY", **every, "BYMONTHDAY": [schedule.day]})]
        # "The 31st, or the month's last day": the last of 28..31 the month has.
        days = list(range(28, schedule.day + 1))
        return [_Rule(start, {"FREQ": "MONTHLY", **every, "BYMONTHDAY": days, "BYSETPOS": [-1]})]
    return _interval_rules(schedule, first, day)


def _interval_rules(schedule: Schedule, first: datetime, day: date) -> list[_Rule]:
    assert schedule.every is not None
    seconds = int(schedule.every.total_seconds())
    step: dict[str, Any] = (
        {"FREQ": "MINUTELY", "INTERVAL": seconds // 60}
        if seconds % 60 == 0
        else {"FREQ": "SECONDLY", "INTERVAL": seconds}
    )
    days = {"BYDAY": [_DAYS[d] for d in schedule.on_days]} if schedule.on_days else {}
    if schedule.window_end is None:
        # One grid of elapsed time: in UTC it is exact; its days are local ones, so a
        # grid on some weekdays steps in the zone's wall time (exceptions at DST).
        start = first if not days else first.astimezone(schedule.zone)
        return [_Rule(start, {**step, **days})]
    # A window each day: one daily rule per step of the day, at that step's wall time,
    # each from its first time at or after `first` (the day's earlier steps went by).
    opens = datetime.combine(date.min, schedule.wall_time)
    daily: dict[str, Any] = {"FREQ": "WEEKLY", **days} if days else {"FREQ": "DAILY"}
    rules = []
    for k in range(schedule.per_day()):
        wall, step_day = (opens + k * schedule.every).time(), day
        while _wall(step_day, wall, schedule.zone) < first or (
            schedule.on_days and step_day.weekday() not in schedule.on_days
        ):
            step_day += timedelta(days=1)
        rules.append(_Rule(_wall(step_day, wall, schedule.zone), dict(daily)))
    return rules


def _first(view: ReminderView) -> datetime | None:
    """The reminder's first occurrence: from its first date, or from when it was made."""
    schedule = view.schedule
    if schedule.on_date is not None:
        anchor = local_instant(schedule.on_date, schedule.wall_time, schedule.zone)
    else:
        anchor = view.created_at
    return schedule.first_after(anchor - _TICK)


def _recurring(view: ReminderView, window: FeedWindow) -> list[_Rule]:
    schedule = view.schedule
    first = _first(view)
    if first is None:
        return []
    # Nothing before the reminder was made (it never went off then), nor before the window.
    shown = max(view.created_at, window.start)
    start = first if first >= shown else schedule.first_after(shown - _TICK)
    if start is None:
        return []
    last = schedule.last()
    end = window.end if last is None else min(last, window.end)
    rules = _rules(schedule, start)
    truth = set(schedule.occurrences(start - _TICK, end))
    seen: set[datetime] = set()
    for rule in rules:
        for moment in rule.expand(end):
            if moment in truth and moment not in seen:
                seen.add(moment)
            else:  # the reminder has not (or another rule has it already: a DST gap)
                rule.exdates.append(moment)
    rules[0].rdates = sorted(truth - seen)
    exact = not any(rule.exdates or rule.rdates for rule in rules)
    if not exact or schedule.calendar is not None:
        # Past the window, nothing checked it: the rule ends there.
        limit: dict[str, Any] = {"UNTIL": end}
    elif last is None:
        limit = {}
    elif schedule.count is not None and schedule.until is None and start == first:
        limit = {"COUNT": schedule.count} if len(rules) == 1 else {"UNTIL": last}
    else:
        limit = {"UNTIL": last}
    for rule in rules:
        rule.parts.update(limit)
    return rules


def reminder_events(
    view: ReminderView, window: FeedWindow, describe: Callable[[ReminderView], str]
) -> list[Event]:
    """The VEVENTs of one reminder (a repeat within a day's window: one per step of the
    day); none when it has no occurrence to show."""
    schedule = view.schedule
    if not schedule.recurring:
        assert schedule.on_date is not None
        zone = schedule.zone
        once = local_instant(schedule.on_date, schedule.wall_time, zone).astimezone(zone)
        rules = [_Rule(once, {})]
    else:
        rules = _recurring(view, window)
    events = []
    for number, rule in enumerate(rules):
        event = Event()
        event.add("uid", f"{view.id}{f'-{number}' if number else ''}@groupmate")
        event.add("dtstamp", view.created_at)
        event.add("sequence", view.version)
        event.add("summary", view.content)
        event.add("description", describe(view))
        event.add("dtstart", rule.start)
        event.add("transp", "TRANSPARENT")  # a reminder does not make anyone busy
        if rule.parts:
            event.add("rrule", rule.parts)
        if rule.exdates:
            event.add("exdate", [_as_start(rule, moment) for moment in rule.exdates])
        if rule.rdates:
            event.add("rdate", rule.rdates)
        events.append(event)
    return events


def _as_start(rule: _Rule, moment: datetime) -> datetime:
    """An instant written as the rule's DTSTART is (same zone), as RFC 5545 asks of an
    EXDATE."""
    zone = rule.start.tzinfo
    return moment.astimezone(zone)


def feed_calendar(
    views: Iterable[ReminderView],
    *,
    name: str,
    window: FeedWindow,
    describe: Callable[[ReminderView], str],
) -> bytes:
    """The feed: every reminder's events, and a VTIMEZONE for each zone they use."""
    calendar = Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("method", "PUBLISH")
    calendar.add("x-wr-calname", name)
    calendar.add("refresh-interval", REFRESH, parameters={"VALUE": "DURATION"})
    calendar.add("x-published-ttl", REFRESH)
    starts = [window.start.date()]
    for view in views:
        for event in reminder_events(view, window, describe):
            calendar.add_component(event)
            starts.append(event.decoded("dtstart").date())
    calendar.add_missing_timezones(min(starts), window.end.date() + timedelta(days=1))
    feed: bytes = calendar.to_ical()
    return feed
