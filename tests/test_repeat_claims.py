"""Repeats within a day and repeat limits through claim_due, on SQLite and PostgreSQL,
on the fake clock: a backlog collapses to one late occurrence and the grid goes on; a
reminder past its limit is done, kept with its history, never deleted."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from groupmate.storage import ReminderService, ReminderView
from tests.conftest import FakeClock, Outbox
from tests.test_delivery import deliveries, make, outcomes, scheduler

HALF_HOUR = timedelta(minutes=30)
FRIDAY = date(2026, 3, 27)


async def interval(
    reminders: ReminderService, clock: FakeClock, step: timedelta, **rule: Any
) -> ReminderView:
    """A repeat within a day from Friday 27 March 2026, 09:00 in Berlin."""
    return await make(reminders, clock, "interval", time(9), on_date=FRIDAY, every=step, **rule)


def utc(day: int, hour: int, minute: int = 0, month: int = 3) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=UTC)


async def test_five_hours_down_on_every_30_minutes_fires_once_late_then_keeps_its_grid(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    clock.set(utc(27, 7))  # 08:00 in Berlin
    reminder = await interval(reminders, clock, HALF_HOUR)
    assert reminder.next_fire_at == utc(27, 8)
    # Down from before 09:00 until 14:10: ten occurrences missed, 14:00 the latest.
    clock.set(utc(27, 13, 10))
    await scheduler(reminders).run_due()
    assert outbox.texts() == [
        "⏰ Reminder for @Alice: stand-up\n(scheduled 14:00, delivered 14:10 after downtime)"
    ]
    rows = outcomes(await deliveries(reminders, reminder))
    assert rows[-1] == (utc(27, 13), "sent_late")
    assert rows[:-1] == [(utc(27, 8) + k * HALF_HOUR, "skipped_missed") for k in range(10)]
    # Then on its grid: 14:30 is next, not 14:40.
    stored = await reminders.get(reminder.id)
    assert stored.next_fire_at == utc(27, 13, 30)
    clock.set(utc(27, 13, 30))
    await scheduler(reminders).run_due()
    assert outbox.texts()[-1] == "⏰ Reminder for @Alice: stand-up"
    assert (await reminders.get(reminder.id)).next_fire_at == utc(27, 14)


async def test_a_count_limit_ends_done_and_kept_after_its_last(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    clock.set(utc(27, 7))
    reminder = await interval(reminders, clock, timedelta(hours=2), count=3)
    for hour in (8, 10, 12):  # 09:00, 11:00, 13:00 in Berlin
        clock.set(utc(27, hour))
        await scheduler(reminders).run_due()
    assert len(outbox.messages) == 3
    done = await reminders.get(reminder.id)
    assert (done.status, done.next_fire_at) == ("done", None)
    assert done.schedule.count == 3  # the rule is kept, for history
    assert await reminders.list_for_chat("chat-1") == ([], 0)
    clock.set(utc(28, 12))
    await scheduler(reminders).run_due()
    assert len(outbox.messages) == 3


async def test_a_date_limit_passed_while_down_sends_the_last_late_and_ends(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    # Daily at 09:00 until Monday 30 March (summer time: 07:00 UTC); down from Saturday
    # until Monday 09:10: Monday's is the last, sent late, and the reminder is done.
    clock.set(utc(27, 12))
    reminder = await make(reminders, clock, "daily", time(9), until=date(2026, 3, 30))
    clock.set(utc(30, 7, 10))
    await scheduler(reminders).run_due()
    assert outbox.texts() == [
        "⏰ Reminder for @Alice: stand-up\n(scheduled 09:00, delivered 09:10 after downtime)"
    ]
    assert outcomes(await deliveries(reminders, reminder)) == [
        (utc(28, 8), "skipped_missed"),
        (utc(29, 7), "skipped_missed"),
        (utc(30, 7), "sent_late"),
    ]
    assert (await reminders.get(reminder.id)).status == "done"


async def test_a_window_on_weekdays_skips_the_weekend_across_dst(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    # Every 4 hours from 9 to 17 on weekdays: Friday in winter time, Monday in summer time.
    clock.set(utc(27, 7))
    reminder = await interval(
        reminders, clock, timedelta(hours=4), window_end=time(17), on_days=(0, 1, 2, 3, 4)
    )
    moment = utc(27, 7)
    while moment <= utc(30, 16):
        clock.set(moment)
        await scheduler(reminders).run_due()
        moment += timedelta(minutes=30)
    fired = [row.occurrence for row in await deliveries(reminders, reminder)]
    assert fired == [utc(27, 8), utc(27, 12), utc(27, 16), utc(30, 7), utc(30, 11), utc(30, 15)]
    assert all("after downtime" not in text for text in outbox.texts())
