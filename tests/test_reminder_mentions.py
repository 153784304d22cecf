"""Who a reminder mentions when it fires: always the person who set it (in a muted
group a mention is what still notifies), the people it names, and everyone only when an
admin asked; the confirmation says who will be notified. Through the real bot (the test
kit's fake clock), the HTTP webhook's receiver, the console's terminal, and reminders
stored without the newer fields on SQLite and PostgreSQL. Each chat platform's own
mention is tested with its adapter (tests/test_*_remind_mentions.py, test_matrix.py)."""

from __future__ import annotations

import asyncio
import io
from datetime import UTC, datetime, time, timedelta
from typing import Any

from sqlalchemy import update

from groupmate.bot.adapters.console import GROUP_CHAT, ConsoleChat
from groupmate.function_calls.handlers.reminder_words import reminder_message
from groupmate.storage import Member, NewReminder, ReminderService, Schedule
from groupmate.storage.deliveries import Claim
from groupmate.storage.models import Reminder
from groupmate.storage.reminder_rows import Audience
from groupmate.testing import BotFactory, FakeClock
from tests.conftest import Outbox
from tests.http_harness import Servers
from tests.receiver import Receiver


async def test_a_members_remind_us_mentions_them_and_an_admins_mentions_everyone_too(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot()
    (member,) = await bot.say("remind us in 5 minutes to stretch")
    assert "for this chat, mentioning only you (only group admins can mention everyone" in member
    (admin,) = await bot.say("remind everyone in 5 minutes to run", sender="ada", admin=True)
    assert admin.startswith("⏰ Reminder #2 for everyone set for")
    await bot.advance(timedelta(minutes=6))
    stretch, run = sorted(bot.outbox, key=lambda m: m.text)  # "@Alice" before "everyone"
    assert (stretch.text, stretch.mentions, stretch.everyone) == (
        "⏰ Reminder for @Alice: stretch",
        ("alice",),
        False,
    )
    assert stretch.people == (Member("alice", "Alice"),)
    assert (run.text, run.mentions, run.everyone) == (
        "⏰ Reminder for everyone (set by @Ada): run",
        ("ada",),
        True,
    )


async def test_a_reminder_for_someone_else_mentions_the_one_who_set_it_too() -> None:
    claim = _claim(Audience(mentions=(Member("u-bob", "Bob"),), creator=False))
    message = reminder_message(claim, _NOW)
    assert message.text == "⏰ Reminder for @Bob (set by @Alice): call"
    assert message.people == (Member("u-alice", "Alice"), Member("u-bob", "Bob"))
    assert message.mentions == ("u-alice", "u-bob") and not message.everyone


async def test_the_webhook_is_told_who_to_mention_and_whether_everyone(
    servers: Servers, receiver: Receiver
) -> None:
    clock = FakeClock(datetime(2026, 11, 21, 13, 5, tzinfo=UTC))
    api = await servers.start(clock=clock, adapters={"webhook": {"outbound_url": receiver.url}})
    (member,) = await api.say("/remind us in 5 minutes to stretch")
    assert member["text"].startswith("⏰ Reminder #1 for this chat, mentioning only you (")
    await api.say("/remind everyone in 5 minutes to run", sender_id="u-ada",
                  sender_name="Ada", sender_is_admin=True)  # fmt: skip
    clock.set(datetime(2026, 11, 21, 13, 10, 30, tzinfo=UTC))
    assert api.bot.reminders is not None and api.bot.reminders.scheduler is not None
    api.bot.reminders.scheduler.wake()
    calls = await asyncio.to_thread(receiver.wait_for, 2, 15)
    bodies = sorted((c.body for c in calls), key=lambda b: str(b["text"]))
    assert [(b["text"], b["mentions"], b["everyone"]) for b in bodies] == [
        ("⏰ Reminder for @Alice: stretch", ["u-alice"], False),
        ("⏰ Reminder for everyone (set by @Ada): run", ["u-ada"], True),
    ]


async def test_the_console_shows_who_is_mentioned() -> None:
    shown = io.StringIO()
    chat = ConsoleChat(Any, user="ada", stdin=io.StringIO(), stdout=shown)  # type: ignore[arg-type]
    claim = _claim(Audience(everyone=True, creator=False), chat_id=GROUP_CHAT)
    await chat.deliver(reminder_message(claim, _NOW))
    assert (
        "[group] bot> @everyone ⏰ Reminder for everyone (set by @Alice): call" in shown.getvalue()
    )


async def test_a_reminder_stored_without_the_newer_fields_goes_to_its_creator(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    """A row as an older version left it: "remind us" stored for no one (no mentions, not
    the creator, not everyone), and one stored before names were kept."""
    schedule = Schedule("daily", time(9, 0), "Europe/Berlin")
    first = schedule.first_after(clock())
    assert first is not None
    for content in ("plan", "tidy"):
        new = NewReminder("chat-1", "group", "u-alice", "Alice", content, schedule, first,
                          audience=Audience(creator=False))  # fmt: skip
        await reminders.create(new)
    await reminders.database.write(
        lambda s: s.execute(
            update(Reminder).where(Reminder.content == "tidy").values(created_by_name="")
        )
    )
    clock.set(first)
    assert reminders.scheduler is not None
    await reminders.scheduler.run_due()
    sent = sorted((m.text, m.mentions) for m in outbox.messages)
    assert sent == [
        ("⏰ Reminder for @Alice: plan", ("u-alice",)),
        ("⏰ Reminder for @u-alice: tidy", ("u-alice",)),
    ]


_NOW = datetime(2026, 11, 24, 8, 0, tzinfo=UTC)


def _claim(audience: Audience, *, chat_id: str = "g1", **fields: Any) -> Claim:
    values: dict[str, Any] = {
        "delivery_id": 1, "reminder_id": "r1", "occurrence": _NOW, "attempts": 0,
        "late": False, "chat_id": chat_id, "chat_type": "group", "created_by": "u-alice",
        "created_by_name": "Alice", "content": "call", "kind": "once",
        "timezone": "Europe/Berlin", "audience": audience,
    }  # fmt: skip
    return Claim(**(values | fields))


async def test_a_member_snoozing_a_reminder_for_everyone_pings_no_one_else(
    groupmate_bot: BotFactory,
) -> None:
    """Anyone a reminder is for may snooze it; a reminder for everyone is for every
    member, but only an admin (or who set it) may bring back the ping to everyone."""
    bot = await groupmate_bot()
    await bot.say("remind everyone in 5 minutes to run", sender="ada", admin=True)
    await bot.advance(timedelta(minutes=6))
    (fired,) = bot.outbox
    assert fired.everyone
    (snoozed,) = await bot.say("/snooze 1 10m")  # Alice, a member
    assert snoozed.startswith("💤 Snoozed #1")
    await bot.advance(timedelta(minutes=11))
    again = bot.outbox[1]
    assert (again.text, again.everyone) == ("⏰ Reminder for @Ada: run", False)
    (by_admin,) = await bot.say("/snooze 1 10m", sender="ada", admin=True)
    assert by_admin.startswith("💤 Snoozed #1")
    await bot.advance(timedelta(minutes=11))
    assert bot.outbox[2].everyone
