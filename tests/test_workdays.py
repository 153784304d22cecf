"""Work-day calendars for "every weekday": China's official 2026 schedule (holidays and
make-up work days), another country's public holidays skipped, the operator's days
winning over the package, and a chat's setting moving its reminders, on both backends."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, date, datetime, time

import pytest

from groupmate.function_calls.handlers.reminder_words import describe_schedule, describe_schedule_zh
from groupmate.storage import ReminderService
from groupmate.storage.errors import UnknownCalendarError
from groupmate.storage.recurrence import Schedule
from groupmate.storage.reminder_rows import NewReminder, ReminderView
from groupmate.storage.workdays import calendar_named, configure_calendars, work_calendar
from tests.conftest import FakeClock, Outbox
from tests.test_delivery import scheduler

SHANGHAI = "Asia/Shanghai"
CN = work_calendar("CN")

# The State Council's 2026 schedule (published November 2025), as chinesecalendar encodes it.
SPRING_FESTIVAL = [date(2026, 2, day) for day in range(15, 24)]  # 2月15日至23日放假
NATIONAL_DAY = [date(2026, 10, day) for day in range(1, 8)]  # 10月1日至7日放假
# 调休上班: Saturday 14 and 28 February, Sunday 20 September, Saturday 10 October.
MAKEUP_DAYS = [date(2026, 2, 14), date(2026, 2, 28), date(2026, 9, 20), date(2026, 10, 10)]


@pytest.fixture(autouse=True)
def no_overrides() -> Iterator[None]:
    configure_calendars({})
    yield
    configure_calendars({})


def weekdays_at_nine(calendar: str | None, zone: str = SHANGHAI) -> Schedule:
    return Schedule("weekdays", time(9, 0), zone, calendar=calendar_named(calendar))


def fire_days(schedule: Schedule, start: date, end: date) -> list[date]:
    zone = schedule.zone
    after = datetime.combine(start, time(0, 0), tzinfo=zone)
    until = datetime.combine(end, time(23, 59), tzinfo=zone)
    return [moment.astimezone(zone).date() for moment in schedule.occurrences(after, until)]


def test_china_2026_holidays_are_off_and_makeup_weekends_are_work() -> None:
    for day in SPRING_FESTIVAL + NATIONAL_DAY:
        assert not CN.is_workday(day), day
    for day in MAKEUP_DAYS:
        assert day.weekday() >= 5 and CN.is_workday(day), day


def test_every_workday_around_2026_spring_festival_follows_the_official_calendar() -> None:
    days = fire_days(weekdays_at_nine("CN"), date(2026, 2, 9), date(2026, 3, 2))
    assert days == [
        *(date(2026, 2, day) for day in (9, 10, 11, 12, 13, 14)),  # Saturday 14th: work
        *(date(2026, 2, day) for day in (24, 25, 26, 27, 28)),  # back on the 24th; Sat 28th
        date(2026, 3, 2),
    ]


def test_every_workday_around_2026_national_day_follows_the_official_calendar() -> None:
    days = fire_days(weekdays_at_nine("CN"), date(2026, 9, 18), date(2026, 10, 12))
    assert days == [
        date(2026, 9, 18),
        date(2026, 9, 20),  # Sunday: make-up work day
        *(date(2026, 9, day) for day in (21, 22, 23, 24)),  # 中秋: 25th to 27th off
        date(2026, 9, 28),
        date(2026, 9, 29),
        date(2026, 9, 30),
        date(2026, 10, 8),
        date(2026, 10, 9),
        date(2026, 10, 10),  # Saturday: make-up work day
        date(2026, 10, 12),
    ]


def test_without_a_calendar_every_weekday_is_monday_to_friday() -> None:
    days = fire_days(weekdays_at_nine(None), date(2026, 2, 13), date(2026, 2, 17))
    assert days == [date(2026, 2, 13), date(2026, 2, 16), date(2026, 2, 17)]


def test_germany_skips_its_public_holidays_and_keeps_weekends_off() -> None:
    schedule = weekdays_at_nine("DE", "Europe/Berlin")
    # Good Friday 3 April and Easter Monday 6 April 2026; Christmas Friday 25 December.
    assert fire_days(schedule, date(2026, 4, 2), date(2026, 4, 7)) == [
        date(2026, 4, 2),
        date(2026, 4, 7),
    ]
    assert fire_days(schedule, date(2026, 12, 24), date(2026, 12, 28)) == [
        date(2026, 12, 24),
        date(2026, 12, 28),
    ]


def test_the_operators_days_win_over_the_package() -> None:
    # 2027 is not in chinesecalendar yet: the operator adds that year's days in config.
    workday, holiday = date(2027, 2, 6), date(2027, 2, 8)  # a Saturday, a Monday
    before = fire_days(weekdays_at_nine("CN"), date(2027, 2, 5), date(2027, 2, 9))
    assert before == [date(2027, 2, 5), date(2027, 2, 8), date(2027, 2, 9)]
    configure_calendars({"cn": ([workday], [holiday, date(2026, 2, 24)])})
    after = fire_days(weekdays_at_nine("CN"), date(2027, 2, 5), date(2027, 2, 9))
    assert after == [date(2027, 2, 5), workday, date(2027, 2, 9)]
    # A correction to a year the package has wins too.
    assert not weekdays_at_nine("CN").calendar.is_workday(date(2026, 2, 24))  # type: ignore[union-attr]


def test_an_unknown_country_is_refused() -> None:
    with pytest.raises(UnknownCalendarError) as caught:
        work_calendar("XX")
    assert caught.value.code == "XX"
    with pytest.raises(UnknownCalendarError):
        configure_calendars({"Narnia": ([], [])})


async def make_weekdays(service: ReminderService, clock: FakeClock) -> ReminderView:
    schedule = Schedule("weekdays", time(9, 0), SHANGHAI)
    first = schedule.first_after(clock())
    assert first is not None
    new = NewReminder("chat-1", "group", "u-alice", "Alice", "stand-up", schedule, first)
    return await service.create(new)


def shanghai(month: int, day: int) -> datetime:
    return datetime(2026, month, day, 1, 0, tzinfo=UTC)  # 09:00 in Shanghai


async def test_setting_the_chat_calendar_moves_the_next_date_and_the_claims(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    clock.set(datetime(2026, 2, 13, 2, 0, tzinfo=UTC))  # Friday 13th, 10:00 in Shanghai
    reminder = await make_weekdays(reminders, clock)
    assert reminder.next_fire_at == shanghai(2, 16)  # Monday: the Spring Festival, unknown
    (moved,) = await reminders.set_calendar("chat-1", "group", "cn")
    assert moved.id == reminder.id
    assert moved.next_fire_at == shanghai(2, 14)  # Saturday: a make-up work day
    assert (await reminders.settings_of("chat-1"))["workdays"] == "CN"
    # The dispatcher claims the make-up Saturday, then nothing until the 24th.
    for moment in (shanghai(2, 14), shanghai(2, 16), shanghai(2, 20), shanghai(2, 23)):
        clock.set(moment)
        await scheduler(reminders).run_due()
    assert len(outbox.messages) == 1
    assert outbox.messages[0].idempotency_key == f"{reminder.id}:{shanghai(2, 14).isoformat()}"
    (stored,), _ = await reminders.list_for_chat("chat-1")
    assert stored.next_fire_at == shanghai(2, 24)
    assert stored.schedule.calendar == CN
    # Off again: back to Monday to Friday, from now.
    (back,) = await reminders.set_calendar("chat-1", "group", None)
    assert back.next_fire_at == shanghai(2, 24) and back.schedule.calendar is None
    assert (await reminders.settings_of("chat-1"))["workdays"] == "off"


async def test_an_unknown_calendar_changes_nothing(
    reminders: ReminderService, clock: FakeClock
) -> None:
    clock.set(datetime(2026, 2, 13, 2, 0, tzinfo=UTC))
    await make_weekdays(reminders, clock)
    with pytest.raises(UnknownCalendarError):
        await reminders.set_calendar("chat-1", "group", "XX")
    (stored,), _ = await reminders.list_for_chat("chat-1")
    assert stored.next_fire_at == shanghai(2, 16) and stored.schedule.calendar is None
    assert "workdays" not in await reminders.settings_of("chat-1")


def test_the_rule_names_the_calendar_in_english_and_chinese() -> None:
    china, germany = weekdays_at_nine("CN"), weekdays_at_nine("DE", "Europe/Berlin")
    plain = weekdays_at_nine(None)
    assert describe_schedule(china) == "every workday (China's calendar) at 09:00"
    assert describe_schedule_zh(china) == "每个工作日（中国法定节假日） 09:00"
    assert describe_schedule(germany) == (
        "every weekday at 09:00, skipping Germany's public holidays"
    )
    assert describe_schedule_zh(germany) == "每个工作日（跳过DE的公共假日） 09:00"
    assert describe_schedule(plain) == "every weekday (Mon-Fri) at 09:00"
    assert describe_schedule_zh(plain) == "每个工作日（周一至周五） 09:00"


def test_the_tools_and_a_country_check_load_no_countrys_holidays() -> None:
    """Building the tools (set_workdays' example is checked) and checking a code read
    python-holidays' registry, never its ~300 country modules: those stayed in every
    bot's memory (15 MB) and lengthened the garbage collections of a burst of reminders
    (bench.reminders' stall)."""
    code = (
        "import sys\n"
        "from groupmate.function_calls.handlers import builtin_tools\n"
        "from groupmate.storage.workdays import country_name, work_calendar\n"
        "builtin_tools()\n"
        "work_calendar('DE'), work_calendar('CN'), country_name('US')\n"
        "print(sorted(m for m in sys.modules if m.startswith('holidays.countries.')))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"
