"""An "until done" reminder through a real bot, on SQLite and PostgreSQL: it shows who
has and who hasn't said done, repeats until each person named has, then stops; /history
and the dashboard's deliveries say who said done to which occurrence."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from groupmate.bot.presses import ButtonData, Press
from groupmate.storage import Member, NewReminder, Schedule
from groupmate.storage.reminder_rows import Audience
from groupmate.testing.bot import TestBot
from tests.test_presses import bot, reply

__all__ = ["bot"]  # the fixture: a bot on each backend

NOW = datetime(2026, 11, 24, 13, 5, tzinfo=UTC)  # Tue 14:05 in Berlin
START = datetime(2026, 11, 24, 13, 10, tzinfo=UTC)


async def until_done(bot: TestBot) -> None:
    """Alice's "remind Bob and me every 10 minutes until each of us says done"."""
    service = bot.app.reminders
    assert service is not None
    await bot.say("/tz Europe/Berlin")
    schedule = Schedule(
        "interval", time(14, 10), "Europe/Berlin", START.date(),
        every=timedelta(minutes=10), count=12,
    )  # fmt: skip
    people = Audience((Member("bob", "Bob"),), creator=True)
    await service.create(
        NewReminder("group-1", "group", "alice", "Alice", "pack the car", schedule, START, people,
                    ack="each")
    )  # fmt: skip


async def test_each_person_named_says_done_then_it_stops_and_history_shows_who(
    bot: TestBot,
) -> None:
    await until_done(bot)
    assert await bot.advance(timedelta(minutes=5)) == [
        "⏰ Reminder for @Alice, @Bob: pack the car\nWaiting for: Alice, Bob"
    ]
    first = bot.outbox[0]
    data = ButtonData.decode(first.buttons[0][0].data)
    assert data is not None
    bob = await bot.app.press(Press("group-1", "group", "bob", "Bob", data, "tg:1", "sent-1"))
    assert bob.answer == "✅ Noted. #1 still waits for Alice."
    assert bob.update is not None
    assert bob.update.text.splitlines()[1:] == [
        "Done: Bob · waiting for: Alice",
        "✅ Done by Bob 14:10",
    ]
    assert bob.update.buttons == first.buttons  # not done yet: every button still applies
    # Not before everyone named: it goes off again, and says who it waits for.
    assert await bot.advance(timedelta(minutes=10)) == [
        "⏰ Reminder for @Alice, @Bob: pack the car\nDone: Bob · waiting for: Alice"
    ]
    [answer] = await bot.app.handle(reply("done", to="sent-2"))
    assert answer.text == "✅ #1 is done: it won't remind again."
    assert await bot.advance(timedelta(hours=3)) == []
    history = await bot.say("/history")
    assert history[0].splitlines()[1:4] == [
        "Tue 24 Nov 14:20 · #1 pack the car · done by Alice",
        "Tue 24 Nov 14:20 · #1 pack the car · sent",
        "Tue 24 Nov 14:10 · #1 pack the car · done by Bob",
    ]
    service = bot.app.reminders
    assert service is not None
    rows = await service.deliveries_admin.deliveries(chat_id="group-1")
    assert [row.done_by for row in rows] == [("Alice",), ("Bob",)]


async def test_until_done_stops_at_its_cap_without_an_answer(bot: TestBot) -> None:
    await until_done(bot)
    sent = await bot.advance(timedelta(hours=5))
    assert len(sent) == 12
    service = bot.app.reminders
    assert service is not None
    [reminder] = await service.finished_for_chat("group-1")
    assert reminder.status == "done"
