"""Resuming a paused repeat through the tool, on SQLite and PostgreSQL, on the fake
clock: one whose limit passed while it was paused ends as done (kept, its answer says so
in the user's language) and fires no more; one whose limit is still ahead resumes."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest

from groupmate.storage import ReminderService
from tests.conftest import FakeClock, Outbox, chat_ctx
from tests.test_delivery import make, scheduler
from tests.test_reminder_tools import call

MONDAY = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)  # 08:00 in Berlin


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("resume reminder 1", "⏹️ #1 has ended: its last time passed while it was paused"),
        ("恢复提醒 1", "⏹️ #1 已结束：暂停期间它的最后一次提醒时间已经过了"),
    ],
)
async def test_a_limit_that_passed_while_paused_ends_it_on_resume(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox, text: str, expected: str
) -> None:
    clock.set(MONDAY)
    reminder = await make(reminders, clock, "daily", time(9), on_date=date(2026, 11, 30), count=3)
    clock.advance(timedelta(hours=1))
    await scheduler(reminders).run_due()  # Monday 09:00, its first of three, goes out
    await call("reminder_pause", chat_ctx(reminders, clock), reminder_id="1")
    clock.advance(timedelta(days=4))  # Friday: its third and last time, Wednesday, passed
    result = await call("reminder_resume", chat_ctx(reminders, clock, text=text), reminder_id="1")
    assert (result.reply or "").startswith(expected)
    stored = await reminders.get(reminder.id)
    assert (stored.status, stored.next_fire_at) == ("done", None)
    clock.advance(timedelta(days=1))
    await scheduler(reminders).run_due()
    assert len(outbox.messages) == 1
    # Kept: its history still shows what went out.
    (entry,) = await reminders.history("chat-1")
    assert (entry.short_id, entry.outcome) == (1, "sent")


async def test_a_limit_still_ahead_resumes_as_usual(
    reminders: ReminderService, clock: FakeClock
) -> None:
    clock.set(MONDAY)
    reminder = await make(
        reminders, clock, "daily", time(9), on_date=date(2026, 11, 30), until=date(2026, 12, 4)
    )
    await call("reminder_pause", chat_ctx(reminders, clock), reminder_id="1")
    clock.advance(timedelta(days=2))  # Wednesday 08:00 Berlin
    result = await call("reminder_resume", chat_ctx(reminders, clock), reminder_id="1")
    assert (result.reply or "").startswith("▶️ Resumed reminder #1")
    stored = await reminders.get(reminder.id)
    assert stored.status == "active"
    assert stored.next_fire_at == datetime(2026, 12, 2, 8, 0, tzinfo=UTC)
