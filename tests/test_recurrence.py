"""Reminder schedules across DST transitions (RFC 5545 semantics) and the calendar rules.

RFC 5545 §3.3.5: a local time in a spring-forward gap is read with the offset in force
before the gap, so it fires once at the shifted wall time; an ambiguous local time in a
fall-back overlap fires once, at its first occurrence.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from groupmate.function_calls.handlers.reminder_words import format_local
from groupmate.storage.recurrence import Kind, Schedule, local_instant

NEW_YORK = "America/New_York"
BERLIN = "Europe/Berlin"
LORD_HOWE = "Australia/Lord_Howe"  # +10:30 standard, +11:00 summer: a 30-minute shift


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def _local_dates(instants: list[datetime], zone: str) -> list[date]:
    return [instant.astimezone(ZoneInfo(zone)).date() for instant in instants]


# --- spring forward: a wall time inside the gap ---------------------------------------

# (zone, transition day, wall time in the gap, shifted wall time, UTC offset after the
#  shift, UTC instant the day before, on the day, and the day after)
GAPS: list[tuple[str, date, time, time, timedelta, datetime, datetime, datetime]] = [
    (
        NEW_YORK,
        date(2026, 3, 8),
        time(2, 30),
        time(3, 30),
        timedelta(hours=-4),
        utc(2026, 3, 7, 7, 30),  # 02:30 EST
        utc(2026, 3, 8, 7, 30),  # 03:30 EDT
        utc(2026, 3, 9, 6, 30),  # 02:30 EDT
    ),
    (
        BERLIN,
        date(2026, 3, 29),
        time(2, 30),
        time(3, 30),
        timedelta(hours=2),
        utc(2026, 3, 28, 1, 30),  # 02:30 CET
        utc(2026, 3, 29, 1, 30),  # 03:30 CEST
        utc(2026, 3, 30, 0, 30),  # 02:30 CEST
    ),
    (
        LORD_HOWE,
        date(2026, 10, 4),
        time(2, 15),
        time(2, 45),
        timedelta(hours=11),
        utc(2026, 10, 2, 15, 45),  # 02:15 +10:30
        utc(2026, 10, 3, 15, 45),  # 02:45 +11:00
        utc(2026, 10, 4, 15, 15),  # 02:15 +11:00
    ),
]
GAP_IDS = [case[0] for case in GAPS]


@pytest.mark.parametrize(
    ("zone", "day", "wall", "shifted", "offset", "before", "on_day", "after"), GAPS, ids=GAP_IDS
)
def test_gap_time_resolves_to_the_shifted_wall_time(
    zone: str,
    day: date,
    wall: time,
    shifted: time,
    offset: timedelta,
    before: datetime,
    on_day: datetime,
    after: datetime,
) -> None:
    instant = local_instant(day, wall, ZoneInfo(zone))
    assert instant == on_day
    assert instant.tzinfo is UTC
    local = instant.astimezone(ZoneInfo(zone))
    assert (local.date(), local.time()) == (day, shifted)
    assert local.utcoffset() == offset


@pytest.mark.parametrize(
    ("zone", "day", "wall", "shifted", "offset", "before", "on_day", "after"), GAPS, ids=GAP_IDS
)
def test_daily_gap_time_fires_once_shifted_then_resumes(
    zone: str,
    day: date,
    wall: time,
    shifted: time,
    offset: timedelta,
    before: datetime,
    on_day: datetime,
    after: datetime,
) -> None:
    schedule = Schedule("daily", wall, zone)
    fired = list(schedule.occurrences(before - timedelta(hours=1), after + timedelta(hours=1)))
    assert fired == [before, on_day, after]
    local = [instant.astimezone(ZoneInfo(zone)) for instant in fired]
    assert [moment.time() for moment in local] == [wall, shifted, wall]
    assert [moment.date() for moment in local] == [
        day - timedelta(days=1),
        day,
        day + timedelta(days=1),
    ]
    # Stepping one at a time gives the same chain, with nothing in between.
    assert schedule.first_after(before) == on_day
    assert schedule.first_after(on_day) == after
    assert schedule.first_after(on_day - timedelta(seconds=1)) == on_day


# --- fall back: an ambiguous wall time in the overlap ---------------------------------

# (zone, transition day, ambiguous wall time, UTC offset of the first occurrence,
#  UTC of the first and of the (skipped) second occurrence, UTC the day before / after)
OVERLAPS: list[tuple[str, date, time, timedelta, datetime, datetime, datetime, datetime]] = [
    (
        NEW_YORK,
        date(2026, 11, 1),
        time(1, 30),
        timedelta(hours=-4),
        utc(2026, 11, 1, 5, 30),  # 01:30 EDT
        utc(2026, 11, 1, 6, 30),  # 01:30 EST
        utc(2026, 10, 31, 5, 30),  # 01:30 EDT
        utc(2026, 11, 2, 6, 30),  # 01:30 EST
    ),
    (
        BERLIN,
        date(2026, 10, 25),
        time(2, 30),
        timedelta(hours=2),
        utc(2026, 10, 25, 0, 30),  # 02:30 CEST
        utc(2026, 10, 25, 1, 30),  # 02:30 CET
        utc(2026, 10, 24, 0, 30),  # 02:30 CEST
        utc(2026, 10, 26, 1, 30),  # 02:30 CET
    ),
    (
        LORD_HOWE,
        date(2026, 4, 5),
        time(1, 45),
        timedelta(hours=11),
        utc(2026, 4, 4, 14, 45),  # 01:45 +11:00
        utc(2026, 4, 4, 15, 15),  # 01:45 +10:30
        utc(2026, 4, 3, 14, 45),  # 01:45 +11:00
        utc(2026, 4, 5, 15, 15),  # 01:45 +10:30
    ),
]
OVERLAP_IDS = [case[0] for case in OVERLAPS]


@pytest.mark.parametrize(
    ("zone", "day", "wall", "offset", "first", "second", "before", "after"),
    OVERLAPS,
    ids=OVERLAP_IDS,
)
def test_ambiguous_time_resolves_to_its_first_occurrence(
    zone: str,
    day: date,
    wall: time,
    offset: timedelta,
    first: datetime,
    second: datetime,
    before: datetime,
    after: datetime,
) -> None:
    instant = local_instant(day, wall, ZoneInfo(zone))
    assert instant == first
    local = instant.astimezone(ZoneInfo(zone))
    assert (local.date(), local.time()) == (day, wall)
    assert local.utcoffset() == offset
    # The second reading really is the same wall time, later, with the later offset.
    repeat = second.astimezone(ZoneInfo(zone))
    assert (repeat.date(), repeat.time()) == (day, wall)
    assert repeat.utcoffset() != offset
    # A daily reminder at that wall time fires once that day: at the first reading.
    schedule = Schedule("daily", wall, zone)
    fired = list(schedule.occurrences(before - timedelta(hours=1), after + timedelta(hours=1)))
    assert fired == [before, first, after]
    assert second not in fired
    assert fired[1].astimezone(ZoneInfo(zone)).utcoffset() == offset
    # Asked at the first occurrence, or anywhere in the repeated hour before the second
    # reading, the next fire is the following day, not the second reading.
    assert schedule.first_after(before) == first
    assert schedule.first_after(first) == after
    assert schedule.first_after(first + (second - first) / 2) == after
    assert schedule.first_after(second - timedelta(seconds=1)) == after
    assert schedule.first_after(second) == after


# --- every local date exactly once across each transition -----------------------------

TRANSITIONS: list[tuple[str, date]] = [
    (NEW_YORK, date(2026, 3, 8)),
    (NEW_YORK, date(2026, 11, 1)),
    (BERLIN, date(2026, 3, 29)),
    (BERLIN, date(2026, 10, 25)),
    (LORD_HOWE, date(2026, 4, 5)),
    (LORD_HOWE, date(2026, 10, 4)),
]
WALL_TIMES = [
    time(0, 0),
    time(0, 30),
    time(1, 0),
    time(1, 30),
    time(1, 45),
    time(2, 0),
    time(2, 15),
    time(2, 30),
    time(3, 0),
    time(9, 0),
    time(23, 59),
]


@pytest.mark.parametrize("wall", WALL_TIMES, ids=lambda wall: f"{wall:%H%M}")
@pytest.mark.parametrize(("zone", "transition"), TRANSITIONS, ids=lambda v: str(v))
def test_daily_fires_once_per_local_date_across_transition(
    zone: str, transition: date, wall: time
) -> None:
    tz = ZoneInfo(zone)
    first_day = transition - timedelta(days=5)
    last_day = transition + timedelta(days=5)
    # (after, until] covers the local dates first_day..last_day, midnight included.
    second = timedelta(seconds=1)
    after = datetime.combine(first_day, time(0), tzinfo=tz).astimezone(UTC) - second
    end = datetime.combine(last_day + timedelta(days=1), time(0), tzinfo=tz)
    until = end.astimezone(UTC) - second
    fired = list(Schedule("daily", wall, zone).occurrences(after, until))
    expected_days = [first_day + timedelta(days=n) for n in range(11)]
    assert _local_dates(fired, zone) == expected_days
    assert fired == sorted(set(fired))
    assert fired == [local_instant(day, wall, tz) for day in expected_days]
    # Off the transition day the wall time is kept exactly.
    for instant in fired:
        local = instant.astimezone(tz)
        if local.date() != transition:
            assert local.time() == wall


@pytest.mark.parametrize("zone", [NEW_YORK, BERLIN, LORD_HOWE])
@pytest.mark.parametrize("wall", [time(1, 45), time(2, 15), time(2, 30)], ids=str)
def test_daily_fires_once_on_every_local_date_of_a_year(zone: str, wall: time) -> None:
    tz = ZoneInfo(zone)
    after = datetime(2026, 1, 1, tzinfo=tz).astimezone(UTC)
    until = datetime(2027, 1, 1, tzinfo=tz).astimezone(UTC)
    fired = list(Schedule("daily", wall, zone).occurrences(after, until))
    days = _local_dates(fired, zone)
    assert len(fired) == 365
    assert Counter(days).most_common(1)[0][1] == 1
    assert days[0] == date(2026, 1, 1)
    assert days[-1] == date(2026, 12, 31)


def test_weekly_and_weekdays_keep_wall_time_across_transition() -> None:
    # Berlin springs forward on Sunday 29 March 2026.
    weekly = Schedule("weekly", time(9, 0), BERLIN, weekday=6)
    fired = list(weekly.occurrences(utc(2026, 3, 20), utc(2026, 4, 6)))
    assert fired == [utc(2026, 3, 22, 8, 0), utc(2026, 3, 29, 7, 0), utc(2026, 4, 5, 7, 0)]
    workdays = Schedule("weekdays", time(8, 30), NEW_YORK)
    fired = list(workdays.occurrences(utc(2026, 3, 6), utc(2026, 3, 10)))
    # Fri 6 Mar 08:30 EST, then (weekend, with the switch) Mon 9 Mar 08:30 EDT.
    assert fired == [utc(2026, 3, 6, 13, 30), utc(2026, 3, 9, 12, 30)]


# --- calendar rules ------------------------------------------------------------------


def test_weekly_fires_on_its_weekday_only() -> None:
    schedule = Schedule("weekly", time(9, 0), BERLIN, weekday=0)
    now = utc(2026, 11, 21, 13, 5)  # Saturday
    assert schedule.first_after(now) == utc(2026, 11, 23, 8, 0)
    fired = list(schedule.occurrences(now, utc(2026, 12, 21)))
    assert fired == [
        utc(2026, 11, 23, 8, 0),
        utc(2026, 11, 30, 8, 0),
        utc(2026, 12, 7, 8, 0),
        utc(2026, 12, 14, 8, 0),
    ]
    assert {instant.astimezone(ZoneInfo(BERLIN)).weekday() for instant in fired} == {0}
    # At the very instant of an occurrence, the next one is a week later.
    assert schedule.first_after(utc(2026, 11, 23, 8, 0)) == utc(2026, 11, 30, 8, 0)


def test_weekly_sunday_is_weekday_six() -> None:
    schedule = Schedule("weekly", time(18, 0), BERLIN, weekday=6)
    assert schedule.first_after(utc(2026, 11, 21, 13, 5)) == utc(2026, 11, 22, 17, 0)


def test_weekdays_skip_saturday_and_sunday() -> None:
    schedule = Schedule("weekdays", time(8, 30), BERLIN)
    # From Thursday 19 Nov 2026 to Wednesday 25 Nov (after its 08:30).
    fired = list(schedule.occurrences(utc(2026, 11, 19), utc(2026, 11, 25, 12, 0)))
    local = [instant.astimezone(ZoneInfo(BERLIN)) for instant in fired]
    assert [moment.date() for moment in local] == [
        date(2026, 11, 19),
        date(2026, 11, 20),
        date(2026, 11, 23),
        date(2026, 11, 24),
        date(2026, 11, 25),
    ]
    assert all(moment.time() == time(8, 30) for moment in local)
    assert all(moment.weekday() < 5 for moment in local)
    # Asked on Saturday, the next one is Monday.
    assert schedule.first_after(utc(2026, 11, 21, 13, 5)) == utc(2026, 11, 23, 7, 30)
    # Asked on Friday after 08:30, too.
    assert schedule.first_after(utc(2026, 11, 20, 7, 31)) == utc(2026, 11, 23, 7, 30)


# (day of month, window, expected local dates)
MONTHLY: list[tuple[int, tuple[datetime, datetime], list[date]]] = [
    (
        31,
        (utc(2027, 1, 1), utc(2027, 7, 1)),
        [
            date(2027, 1, 31),
            date(2027, 2, 28),
            date(2027, 3, 31),
            date(2027, 4, 30),
            date(2027, 5, 31),
            date(2027, 6, 30),
        ],
    ),
    (
        29,
        (utc(2028, 1, 1), utc(2028, 4, 1)),
        [date(2028, 1, 29), date(2028, 2, 29), date(2028, 3, 29)],
    ),
    (
        29,
        (utc(2027, 1, 1), utc(2027, 4, 1)),
        [date(2027, 1, 29), date(2027, 2, 28), date(2027, 3, 29)],
    ),
    (
        30,
        (utc(2028, 1, 1), utc(2028, 4, 1)),
        [date(2028, 1, 30), date(2028, 2, 29), date(2028, 3, 30)],
    ),
    (
        1,
        (utc(2026, 11, 21), utc(2027, 3, 2)),
        [date(2026, 12, 1), date(2027, 1, 1), date(2027, 2, 1), date(2027, 3, 1)],
    ),
]


@pytest.mark.parametrize(
    ("day", "window", "expected"),
    MONTHLY,
    ids=["31st-2027", "29th-leap-2028", "29th-2027", "30th-leap-2028", "1st"],
)
def test_monthly_clips_to_the_last_day_of_shorter_months(
    day: int, window: tuple[datetime, datetime], expected: list[date]
) -> None:
    schedule = Schedule("monthly", time(10, 0), BERLIN, day=day)
    fired = list(schedule.occurrences(*window))
    local = [instant.astimezone(ZoneInfo(BERLIN)) for instant in fired]
    assert [moment.date() for moment in local] == expected
    assert all(moment.time() == time(10, 0) for moment in local)


def test_monthly_31st_concrete_instants() -> None:
    schedule = Schedule("monthly", time(9, 0), BERLIN, day=31)
    fired = list(schedule.occurrences(utc(2027, 1, 1), utc(2027, 5, 1)))
    # Berlin switches to summer time on 28 March 2027.
    assert fired == [
        utc(2027, 1, 31, 8, 0),
        utc(2027, 2, 28, 8, 0),
        utc(2027, 3, 31, 7, 0),
        utc(2027, 4, 30, 7, 0),
    ]
    # After the clipped Feb occurrence comes 31 March, not some day in between.
    assert schedule.first_after(utc(2027, 2, 28, 8, 0)) == utc(2027, 3, 31, 7, 0)


# --- once -----------------------------------------------------------------------------

ONCE = Schedule("once", time(9, 0), BERLIN, on_date=date(2026, 11, 22))
ONCE_AT = utc(2026, 11, 22, 8, 0)


@pytest.mark.parametrize(
    ("asked", "expected"),
    [
        (utc(2026, 11, 21, 13, 5), ONCE_AT),
        (ONCE_AT - timedelta(seconds=1), ONCE_AT),
        (utc(2025, 1, 1), ONCE_AT),  # long before: still found, without a search limit
        (ONCE_AT, None),  # strictly after
        (ONCE_AT + timedelta(seconds=1), None),
        (utc(2027, 1, 1), None),
    ],
    ids=["day-before", "second-before", "year-before", "at", "second-after", "long-after"],
)
def test_once_first_after(asked: datetime, expected: datetime | None) -> None:
    assert ONCE.first_after(asked) == expected


def test_once_occurrences_yield_a_single_instant() -> None:
    assert not ONCE.recurring
    assert list(ONCE.occurrences(utc(2026, 11, 1), utc(2027, 1, 1))) == [ONCE_AT]
    assert list(ONCE.occurrences(ONCE_AT, utc(2027, 1, 1))) == []
    assert list(ONCE.occurrences(utc(2026, 11, 1), ONCE_AT - timedelta(seconds=1))) == []
    assert list(ONCE.occurrences(utc(2026, 11, 1), ONCE_AT)) == [ONCE_AT]  # until inclusive


def test_once_in_a_gap_fires_at_the_shifted_time() -> None:
    schedule = Schedule("once", time(2, 30), BERLIN, on_date=date(2026, 3, 29))
    assert schedule.first_after(utc(2026, 3, 1)) == utc(2026, 3, 29, 1, 30)


# --- validation and words -------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "weekly"}, "weekday"),
        ({"kind": "weekly", "weekday": 7}, "weekday"),
        ({"kind": "weekly", "weekday": -1}, "weekday"),
        ({"kind": "monthly"}, "day"),
        ({"kind": "monthly", "day": 0}, "day from 1 to 31"),
        ({"kind": "monthly", "day": 32}, "day from 1 to 31"),
        ({"kind": "once"}, "needs a date"),
        ({"kind": "hourly"}, "unknown schedule kind"),
    ],
    ids=[
        "weekly-no-weekday",
        "weekday-7",
        "weekday-negative",
        "monthly-no-day",
        "monthly-day-0",
        "monthly-day-32",
        "once-no-date",
        "unknown-kind",
    ],
)
def test_schedule_rejects_incomplete_rules(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Schedule(wall_time=time(9, 0), timezone=BERLIN, **kwargs)


def test_with_timezone_keeps_the_rule() -> None:
    schedule = Schedule("monthly", time(9, 0), BERLIN, day=31)
    moved = schedule.with_timezone(NEW_YORK)
    assert moved == Schedule("monthly", time(9, 0), NEW_YORK, day=31)
    assert moved.zone == ZoneInfo(NEW_YORK)


def test_format_local() -> None:
    instant = utc(2026, 11, 23, 8, 0)
    assert format_local(instant, ZoneInfo(BERLIN)) == "Mon 23 Nov 09:00"
    assert format_local(instant, ZoneInfo(BERLIN), with_year=True) == "Mon 23 Nov 2026 09:00"
    assert format_local(instant, ZoneInfo(LORD_HOWE)) == "Mon 23 Nov 19:00"


KIND_SAMPLES: list[tuple[Kind, dict[str, Any]]] = [
    ("once", {"on_date": date(2026, 11, 22)}),
    ("daily", {}),
    ("weekly", {"weekday": 2}),
    ("weekdays", {}),
    ("monthly", {"day": 31}),
]


@pytest.mark.parametrize(("kind", "extra"), KIND_SAMPLES, ids=[kind for kind, _ in KIND_SAMPLES])
def test_every_kind_finds_a_next_occurrence_in_the_future(
    kind: Kind, extra: dict[str, Any]
) -> None:
    now = utc(2026, 11, 21, 13, 5)
    for zone in (NEW_YORK, BERLIN, LORD_HOWE):
        schedule = Schedule(kind, time(9, 0), zone, **extra)
        upcoming = schedule.first_after(now)
        assert upcoming is not None
        assert upcoming > now
        assert upcoming - now <= timedelta(days=32)
        assert upcoming.astimezone(ZoneInfo(zone)).time() == time(9, 0)
