"""A repeating reminder moved by the chat's new zone or work-day calendar, on both
backends: when the move leaves it no occurrence before its end it is done (kept, not an
active row that never fires), and a paused one follows the new calendar too."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from groupmate.storage import ReminderService
from groupmate.storage.changes import Requester
from groupmate.storage.recurrence import Schedule
from groupmate.storage.reminder_rows import NewReminder, ReminderView
from groupmate.storage.workdays import work_calendar
from tests.conftest import FakeClock

SHANGHAI = "Asia/Shanghai"
ALICE = Requester("u-alice")


async def make(service: ReminderService, clock: FakeClock, schedule: Schedule) -> ReminderView:
    first = schedule.first_after(clock())
    assert first is not None
    new = NewReminder("chat-1", "group", "u-alice", "Alice", "stand-up", schedule, first)
    return await service.create(new)


async def test_a_calendar_that_leaves_no_day_before_its_end_makes_it_done(
    reminders: ReminderService, clock: FakeClock
) -> None:
    # Tuesday 30 September 2025, 10:00 in Shanghai: every weekday at 9 until Friday 3
    # October. China's calendar makes 1 to 8 October days off: no day is left.
    clock.set(datetime(2025, 9, 30, 2, 0, tzinfo=UTC))
    rule = Schedule("weekdays", time(9), SHANGHAI, until=date(2025, 10, 3))
    reminder = await make(reminders, clock, rule)
    assert reminder.next_fire_at == datetime(2025, 10, 1, 1, 0, tzinfo=UTC)
    await reminders.set_calendar("chat-1", "group", "CN")
    stored = await reminders.get(reminder.id)
    assert (stored.status, stored.next_fire_at) == ("done", None)
    assert stored.schedule.calendar == work_calendar("CN")
    active, _ = await reminders.list_for_chat("chat-1")
    assert active == []


async def test_a_zone_that_moves_its_hours_past_its_end_makes_it_done(
    reminders: ReminderService, clock: FakeClock
) -> None:
    # 08:05 in Shanghai: every 30 minutes from 08:00 until 12:00 Shanghai time (04:00 UTC).
    clock.set(datetime(2026, 3, 2, 0, 5, tzinfo=UTC))
    end = datetime(2026, 3, 2, 4, 0, tzinfo=UTC)
    rule = Schedule(
        "interval", time(8), SHANGHAI, date(2026, 3, 2), every=timedelta(minutes=30), until=end
    )
    reminder = await make(reminders, clock, rule)
    assert reminder.next_fire_at == datetime(2026, 3, 2, 0, 30, tzinfo=UTC)
    # In Los Angeles 08:00 is 16:00 UTC, past the end: nothing is left of it.
    await reminders.set_timezone("chat-1", "group", "America/Los_Angeles")
    stored = await reminders.get(reminder.id)
    assert (stored.status, stored.next_fire_at) == ("done", None)


async def test_a_paused_weekday_reminder_follows_the_new_calendar_when_resumed(
    reminders: ReminderService, clock: FakeClock
) -> None:
    clock.set(datetime(2026, 2, 13, 2, 0, tzinfo=UTC))  # Friday 13 February, 10:00
    reminder = await make(reminders, clock, Schedule("weekdays", time(9), SHANGHAI))
    await reminders.set_paused("chat-1", "1", ALICE, paused=True)
    assert await reminders.set_calendar("chat-1", "group", "CN") == []  # none moved now
    assert (await reminders.get(reminder.id)).schedule.calendar == work_calendar("CN")
    resumed = await reminders.set_paused("chat-1", "1", ALICE, paused=False)
    # Saturday 14 February is a make-up work day in China's calendar.
    assert resumed.next_fire_at == datetime(2026, 2, 14, 1, 0, tzinfo=UTC)
