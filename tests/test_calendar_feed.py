"""The calendar feed as a calendar app reads it: each reminder's VEVENTs, parsed with
`icalendar` and expanded with `recurring-ical-events` (as Thunderbird-like clients do),
give exactly the occurrences groupmate's own `Schedule.first_after` gives, over a year:
daily, weekdays, the 31st (the month's last day), weekdays on China's calendar (holidays
skipped, make-up Saturdays worked), on Germany's, repeats within a day's window (also
one across the DST changes), an elapsed-time grid, and count and until limits, in
Europe/Berlin and America/New_York."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import icalendar
import pytest
import recurring_ical_events

from groupmate.storage import ReminderView, Schedule
from groupmate.storage.ical import FeedWindow, feed_calendar
from groupmate.storage.workdays import work_calendar

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
YEAR = timedelta(days=365)
BERLIN = "Europe/Berlin"


def view(schedule: Schedule, number: int = 1, **fields: Any) -> ReminderView:
    values: dict[str, Any] = {
        "id": f"{number:032x}",
        "short_id": number,
        "chat_id": "g1",
        "chat_type": "group",
        "created_by": "u-alice",
        "created_by_name": "Alice",
        "content": f"reminder {number}",
        "schedule": schedule,
        "status": "active",
        "next_fire_at": None,
        "version": 1,
        "created_at": NOW,
    }
    values.update(fields)
    return ReminderView(**values)


def feed(*views: ReminderView, now: datetime = NOW) -> icalendar.Calendar:
    body = feed_calendar(
        views, name="groupmate reminders", window=FeedWindow.around(now), describe=lambda v: ""
    )
    return icalendar.Calendar.from_ical(body)


def expanded(calendar: icalendar.Calendar, start: datetime, end: datetime) -> list[datetime]:
    """Every occurrence in [start, end), in UTC, as recurring-ical-events expands it."""
    events = recurring_ical_events.of(calendar).between(start, end)
    return sorted(event.start.astimezone(UTC) for event in events)


def rule_text(event: icalendar.Event) -> str:
    text = event["RRULE"].to_ical()
    return text.decode() if isinstance(text, bytes) else str(text)


def start_of(event: icalendar.Event) -> datetime:
    start = event.start
    assert isinstance(start, datetime)  # reminders are at a time of day, never all-day
    return start


def own(schedule: Schedule, start: datetime, end: datetime) -> list[datetime]:
    """groupmate's own next fire times in [start, end): first_after, again and again."""
    found, current = [], schedule.first_after(start - timedelta(microseconds=1))
    while current is not None and current < end:
        found.append(current)
        current = schedule.first_after(current)
    return found


def repeat(
    minutes: int, start: time, end: time | None = None, days: tuple[int, ...] = ()
) -> Schedule:
    """Every `minutes` from `start` (to `end` each day, on `days`), from 5 January."""
    step = timedelta(minutes=minutes)
    return Schedule(
        "interval", start, BERLIN, date(2026, 1, 5), every=step, window_end=end, on_days=days
    )


CN = work_calendar("CN")
CASES = {
    "daily": Schedule("daily", time(7, 30), BERLIN),
    # 02:30 does not exist on 29 March (03:30 CEST) and happens twice on 25 October.
    "daily-in-the-dst-gap": Schedule("daily", time(2, 30), BERLIN),
    "every-3-days": Schedule("daily", time(8), BERLIN, on_date=date(2026, 1, 7), interval=3),
    "weekday": Schedule("weekdays", time(9), BERLIN),
    "every-2-weeks": Schedule(
        "weekly", time(18), "America/New_York", on_date=date(2026, 1, 7), weekday=4, interval=2
    ),
    "monthly-last-day": Schedule("monthly", time(9), BERLIN, day=31),
    "monthly-30th-every-2-months": Schedule(
        "monthly", time(9), BERLIN, on_date=date(2026, 1, 30), day=30, interval=2
    ),
    "weekday-china": Schedule("weekdays", time(9), "Asia/Shanghai", calendar=CN),
    "weekday-germany-skips-holidays": Schedule(
        "weekdays", time(9), BERLIN, calendar=work_calendar("DE")
    ),
    "every-90-minutes-9-to-17": repeat(90, time(9), time(17)),
    "every-30-minutes-1-to-4-at-night": repeat(30, time(1), time(4), days=tuple(range(7))),
    "every-45-minutes-day-and-night": repeat(45, time(0, 10)),
    "every-30-minutes-on-mondays-and-wednesdays": repeat(30, time(0, 10), days=(0, 2)),
    "daily-10-times": Schedule("daily", time(8), "America/New_York", on_date=NOW.date(), count=10),
    "weekly-until-june": Schedule(
        "weekly", time(8), "America/New_York", weekday=2, until=date(2026, 6, 30)
    ),
    "weekday-china-40-times": Schedule(
        "weekdays", time(9), "Asia/Shanghai", on_date=date(2026, 2, 1), calendar=CN, count=40
    ),
    "hourly-until-an-instant": replace(
        repeat(60, time(8)), on_date=date(2026, 3, 27), until=datetime(2026, 3, 30, 12, tzinfo=UTC)
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_a_year_of_the_feed_is_groupmates_own_next_fire_times(name: str) -> None:
    schedule = CASES[name]
    calendar = feed(view(schedule))
    wanted = own(schedule, NOW, NOW + YEAR)
    assert wanted, name
    assert expanded(calendar, NOW, NOW + YEAR) == wanted


def test_rules_are_written_as_calendar_apps_know_them() -> None:
    calendar = feed(
        view(CASES["weekday"], 1),
        view(CASES["monthly-last-day"], 2),
        view(CASES["daily-10-times"], 3),
        view(CASES["weekly-until-june"], 4),
    )
    rules = [rule_text(event) for event in calendar.events]
    assert rules == [
        "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR",
        "FREQ=MONTHLY;BYMONTHDAY=28,29,30,31;BYSETPOS=-1",
        "FREQ=DAILY;COUNT=10",
        "FREQ=WEEKLY;UNTIL=20260624T120000Z;BYDAY=WE",
    ]
    first = calendar.events[0]
    # In the reminder's zone, with that zone's VTIMEZONE in the feed.
    assert first["DTSTART"].params["TZID"] == BERLIN
    assert first.decoded("DTSTART") == datetime(2026, 1, 6, 9, 0, tzinfo=start_of(first).tzinfo)
    zones = {str(zone["TZID"]) for zone in calendar.walk("VTIMEZONE")}
    assert zones == {BERLIN, "America/New_York"}
    assert str(first["SUMMARY"]) == "reminder 1"


def test_china_s_holidays_are_exceptions_and_its_make_up_days_added() -> None:
    (event,) = feed(view(CASES["weekday-china"])).events
    zone = start_of(event).tzinfo
    skipped = {moment.astimezone(zone).date() for moment in event.exdates}
    added = {start.astimezone(zone).date() for start, _ in event.rdates}
    # National Day week is off; Saturday 10 October 2026 is a make-up work day.
    assert {date(2026, 10, 1), date(2026, 10, 2), date(2026, 2, 16)} <= skipped
    assert {date(2026, 10, 10), date(2026, 2, 14)} <= added
    # Checked only over the window: the rule ends with it.
    assert event.decoded("RRULE")["UNTIL"] == [NOW + timedelta(days=366)]


def test_a_one_time_reminder_is_one_event_and_snoozes_are_too() -> None:
    once = Schedule("once", time(15, 45), BERLIN, on_date=date(2026, 3, 29))
    snooze = Schedule.once_at(datetime(2026, 2, 1, 9, 10, tzinfo=UTC), BERLIN)
    calendar = feed(view(once, 1), view(snooze, 2, snooze_of=f"{1:032x}"))
    events = calendar.events
    assert [event.get("RRULE") for event in events] == [None, None]
    assert expanded(calendar, NOW, NOW + YEAR) == [
        datetime(2026, 2, 1, 9, 10, tzinfo=UTC),
        datetime(2026, 3, 29, 13, 45, tzinfo=UTC),  # CEST from that morning on
    ]
    assert len({str(event["UID"]) for event in events}) == 2


def test_a_reminder_made_long_ago_shows_from_a_year_back() -> None:
    made = NOW - 3 * YEAR
    schedule = CASES["weekday-germany-skips-holidays"]
    calendar = feed(view(schedule, created_at=made))
    (event,) = calendar.events
    assert start_of(event).astimezone(UTC) >= NOW - timedelta(days=366)
    assert expanded(calendar, NOW - YEAR, NOW + YEAR) == own(schedule, NOW - YEAR, NOW + YEAR)


def test_a_finished_reminder_keeps_its_past_and_nothing_after() -> None:
    schedule = CASES["daily-10-times"]
    later = NOW + timedelta(days=40)
    calendar = feed(view(schedule, status="done"), now=later)
    assert expanded(calendar, NOW - YEAR, later + YEAR) == own(schedule, NOW, later)


def test_a_repeat_made_mid_window_shows_nothing_before_it_was_made() -> None:
    made = datetime(2026, 1, 7, 12, 10, tzinfo=UTC)  # a Wednesday, 13:10 in Berlin
    schedule = repeat(90, time(9), time(17), days=(0, 2))
    calendar = feed(view(schedule, created_at=made), now=made)
    shown = expanded(calendar, made - timedelta(days=30), made + YEAR)
    assert shown[0] == datetime(2026, 1, 7, 12, 30, tzinfo=UTC)  # 13:30, the next step
    assert shown == own(schedule, made, made + YEAR)
    # Each step's rule starts at its own first time: no exceptions for the steps gone by.
    assert not any(event.exdates for event in calendar.events)
