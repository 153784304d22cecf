"""Repeats within a day ("every 2 hours", "every hour from 9 to 17 on weekdays") and
repeat limits ("until Friday", "5 times"): the next occurrence and the last, exactly,
across DST. An interval is elapsed time; a window and a date limit are wall time."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from groupmate.storage.errors import RepeatTooOftenError
from groupmate.storage.recurrence import MAX_PER_DAY, MIN_EVERY, Schedule, check_rate

BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"
WEEKDAYS = (0, 1, 2, 3, 4)


def local(zone: str, *parts: int) -> datetime:
    return datetime(*parts, tzinfo=ZoneInfo(zone)).astimezone(UTC)  # type: ignore[arg-type,misc]


def walls(instants: list[datetime], zone: str) -> list[str]:
    return [i.astimezone(ZoneInfo(zone)).strftime("%a %d %H:%M") for i in instants]


def run(schedule: Schedule, after: datetime, n: int) -> list[datetime]:
    found: list[datetime] = []
    current: datetime | None = after
    while current is not None and len(found) < n:
        current = schedule.first_after(current)
        if current is not None:
            found.append(current)
    return found


def every(hours: float = 0, minutes: int = 0, **fields: object) -> Schedule:
    step = timedelta(hours=hours, minutes=minutes)
    start = fields.pop("wall_time", time(9))
    on = fields.pop("on_date", date(2026, 3, 27))
    zone = fields.pop("timezone", BERLIN)
    return Schedule("interval", start, zone, on_date=on, every=step, **fields)  # type: ignore[arg-type]


# --- the grid ------------------------------------------------------------------------


def test_an_interval_starts_at_its_first_occurrence_and_steps_by_elapsed_time() -> None:
    rule = every(2)
    got = run(rule, local(BERLIN, 2026, 3, 27, 0, 0), 4)
    assert walls(got, BERLIN) == ["Fri 27 09:00", "Fri 27 11:00", "Fri 27 13:00", "Fri 27 15:00"]
    # Strictly after: an occurrence itself is not returned again.
    assert rule.first_after(got[1]) == got[2]


def test_an_interval_is_elapsed_time_across_spring_forward() -> None:
    # Berlin skips 02:00-03:00 on Sun 29 Mar 2026: every 2 hours from 21:00 on Saturday
    # fires 2 hours apart in real time, so after 01:00 the wall clock shows 04:00.
    rule = every(2, wall_time=time(21), on_date=date(2026, 3, 28))
    got = run(rule, local(BERLIN, 2026, 3, 28, 20, 0), 4)
    assert walls(got, BERLIN) == ["Sat 28 21:00", "Sat 28 23:00", "Sun 29 01:00", "Sun 29 04:00"]
    assert {b - a for a, b in itertools.pairwise(got)} == {timedelta(hours=2)}


def test_an_interval_is_elapsed_time_across_fall_back() -> None:
    # New York repeats 01:00-02:00 on Sun 1 Nov 2026: hourly fires at both 01:00s.
    rule = every(1, wall_time=time(0), on_date=date(2026, 11, 1), timezone=NEW_YORK)
    got = run(rule, local(NEW_YORK, 2026, 10, 31, 23, 0), 4)
    assert walls(got, NEW_YORK) == ["Sun 01 00:00", "Sun 01 01:00", "Sun 01 01:00", "Sun 01 02:00"]


def test_nothing_fires_before_the_first_occurrence() -> None:
    assert every(1).first_after(local(BERLIN, 2026, 1, 1, 0, 0)) == local(BERLIN, 2026, 3, 27, 9, 0)


def test_a_days_filter_skips_to_the_next_allowed_day_on_the_same_grid() -> None:
    # Every 30 minutes, weekdays only, from Fri 27 Mar 09:00: after Friday's last step
    # the weekend is skipped and Monday starts at midnight, on the grid.
    rule = every(minutes=30, on_days=WEEKDAYS)
    got = run(rule, local(BERLIN, 2026, 3, 27, 23, 10), 2)
    assert walls(got, BERLIN) == ["Fri 27 23:30", "Mon 30 00:00"]


# --- windows: wall time in the chat's zone -----------------------------------------


def test_a_window_fires_from_its_start_to_its_end_inclusive_on_weekdays() -> None:
    rule = every(1, window_end=time(17), on_days=WEEKDAYS)
    got = run(rule, local(BERLIN, 2026, 3, 27, 8, 0), 10)
    assert walls(got, BERLIN) == [
        *(f"Fri 27 {h:02d}:00" for h in range(9, 18)),
        "Mon 30 09:00",
    ]
    assert rule.per_day() == 9


def test_a_window_restarts_at_its_wall_start_after_dst() -> None:
    # Friday is winter time in Berlin, Monday summer time: both start at 09:00 local.
    rule = every(4, window_end=time(17), on_days=WEEKDAYS)
    got = run(rule, local(BERLIN, 2026, 3, 27, 8, 0), 6)
    assert walls(got, BERLIN) == [
        "Fri 27 09:00",
        "Fri 27 13:00",
        "Fri 27 17:00",
        "Mon 30 09:00",
        "Mon 30 13:00",
        "Mon 30 17:00",
    ]


def test_a_window_step_that_does_not_divide_it_stops_before_the_end() -> None:
    rule = every(minutes=45, wall_time=time(9), window_end=time(10, 40))
    got = run(rule, local(BERLIN, 2026, 3, 27, 0, 0), 3)
    assert walls(got, BERLIN) == ["Fri 27 09:00", "Fri 27 09:45", "Fri 27 10:30"]


# --- limits ----------------------------------------------------------------------------


def test_a_count_ends_after_that_many_and_says_when() -> None:
    rule = every(2, count=5)
    got = run(rule, local(BERLIN, 2026, 3, 27, 0, 0), 10)
    assert walls(got, BERLIN) == [f"Fri 27 {h:02d}:00" for h in (9, 11, 13, 15, 17)]
    assert rule.last() == got[-1]
    assert rule.first_after(local(BERLIN, 2026, 3, 1, 0, 0)) == got[0]


def test_a_date_limit_keeps_every_occurrence_on_that_local_day() -> None:
    # "every day at 9 until Friday": Friday's 09:00 is the last.
    rule = Schedule("daily", time(9), BERLIN, until=date(2026, 4, 3))
    got = run(rule, local(BERLIN, 2026, 3, 30, 12, 0), 10)
    assert walls(got, BERLIN) == ["Tue 31 09:00", "Wed 01 09:00", "Thu 02 09:00", "Fri 03 09:00"]
    assert rule.last() == local(BERLIN, 2026, 4, 3, 9, 0)


def test_a_weekly_limit_until_a_month_ends_on_its_last_matching_day() -> None:
    # "every monday until March": the last Monday on or before 1 March 2027.
    rule = Schedule("weekly", time(9), BERLIN, weekday=0, until=date(2027, 3, 1))
    assert rule.last() == local(BERLIN, 2027, 3, 1, 9, 0)
    before = Schedule("weekly", time(9), BERLIN, weekday=0, until=date(2027, 2, 28))
    assert before.last() == local(BERLIN, 2027, 2, 22, 9, 0)


def test_an_instant_limit_is_inclusive() -> None:
    end = local(BERLIN, 2026, 3, 27, 13, 0)
    rule = every(2, until=end)
    assert rule.last() == end
    assert rule.first_after(end) is None
    assert every(2, until=end - timedelta(minutes=1)).last() == local(BERLIN, 2026, 3, 27, 11, 0)


def test_the_earlier_of_count_and_until_wins() -> None:
    assert every(1, count=3, until=date(2026, 3, 28)).last() == local(BERLIN, 2026, 3, 27, 11, 0)
    end = local(BERLIN, 2026, 3, 27, 10, 0)
    assert every(1, count=30, until=end).last() == end


def test_a_limit_with_a_window_and_days_lands_on_the_last_allowed_step() -> None:
    # Every hour 9-17 on weekdays until Sunday 29 Mar: the last is Friday 17:00.
    rule = every(1, window_end=time(17), on_days=WEEKDAYS, until=date(2026, 3, 29))
    assert rule.last() == local(BERLIN, 2026, 3, 27, 17, 0)
    assert rule.first_after(local(BERLIN, 2026, 3, 27, 17, 0)) is None


def test_a_limit_that_ends_before_the_first_occurrence_has_no_last() -> None:
    assert every(1, until=date(2026, 3, 26)).last() is None
    assert every(1, until=date(2026, 3, 26)).first_after(local(BERLIN, 2026, 3, 1, 0, 0)) is None


def test_a_count_over_a_dst_gap_counts_real_occurrences() -> None:
    rule = Schedule(
        "daily", time(2, 30), BERLIN, on_date=date(2026, 3, 28), count=3
    )  # Sun 29 Mar 02:30 is in the gap: it fires once, at 03:30
    got = run(rule, local(BERLIN, 2026, 3, 27, 0, 0), 5)
    assert walls(got, BERLIN) == ["Sat 28 02:30", "Sun 29 03:30", "Mon 30 02:30"]


def test_without_limit_removes_both_limits() -> None:
    rule = every(1, count=3, until=date(2026, 4, 1))
    assert not rule.without_limit().limited
    assert rule.without_limit().last() is None


# --- rules that are refused ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"kind": "interval"}, "positive step"),
        ({"kind": "interval", "every": timedelta(days=1)}, "under a day"),
        ({"kind": "interval", "every": timedelta(hours=1), "window_end": time(8)}, "ends after"),
        ({"kind": "interval", "every": timedelta(hours=1), "on_days": (4, 0)}, "in order"),
        ({"kind": "interval", "every": timedelta(hours=1), "on_days": (7,)}, r"0 \(Monday\)"),
        ({"kind": "daily", "every": timedelta(hours=1)}, "only an interval"),
        ({"kind": "once", "count": 3}, "only a repeating"),
        ({"kind": "daily", "count": 3, "on_date": None}, "first occurrence"),
        ({"kind": "daily", "count": 0}, "a count is 1"),
        ({"kind": "daily", "until": datetime(2026, 4, 1, 9)}, "timezone-aware"),
    ],
)
def test_malformed_rules_are_refused(fields: dict[str, object], says: str) -> None:
    base: dict[str, object] = {"on_date": date(2026, 3, 27)}
    kind = fields.pop("kind")
    with pytest.raises(ValueError, match=says):
        Schedule(kind, time(9), BERLIN, **{**base, **fields})  # type: ignore[arg-type]


def test_the_rate_check_refuses_a_step_under_the_minimum_and_says_it() -> None:
    with pytest.raises(RepeatTooOftenError) as refused:
        check_rate(every(minutes=2))
    assert refused.value.minimum == MIN_EVERY == timedelta(minutes=5)
    assert refused.value.every == timedelta(minutes=2)


def test_the_rate_check_refuses_more_per_day_than_the_cap() -> None:
    assert every(minutes=30).per_day() == MAX_PER_DAY == 48
    assert check_rate(every(minutes=30)) == every(minutes=30)
    with pytest.raises(RepeatTooOftenError) as refused:
        check_rate(every(minutes=20))
    assert (refused.value.per_day, refused.value.max_per_day) == (72, 48)
    # A window keeps a fast step within the cap: every 5 minutes from 9 to 10 is 13.
    assert check_rate(every(minutes=5, window_end=time(10))).per_day() == 13
    with pytest.raises(RepeatTooOftenError):
        check_rate(every(minutes=10, window_end=time(10)), max_per_day=6)


def test_the_tools_do_not_offer_a_kind_they_cannot_build_yet() -> None:
    # "interval" is a storage rule made from a step; until the tools read one, their
    # `type` names only the day kinds, so no model can send a rule it can't complete.
    from groupmate.function_calls.handlers.reminder_args import ReminderArgs
    from groupmate.function_calls.handlers.reminder_changes import ReminderUpdateArgs

    for model in (ReminderArgs, ReminderUpdateArgs):
        kinds = model.model_json_schema()["properties"]["type"]["anyOf"][0]["enum"]
        assert kinds == ["once", "daily", "weekly", "weekdays", "monthly"]
