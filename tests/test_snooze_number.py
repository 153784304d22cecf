"""A snoozed reminder keeps its number: `/snooze 1 10m` answers "Snoozed #1", and #1 is
what /reminders, /history and /edit show and reach after it (not a new #5). A snoozed
occurrence of a repeating reminder fires once, at the snoozed time, and the series goes
on at its own times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from groupmate.storage.audit import AuditQuery
from groupmate.testing import BotFactory, FakeClock

NOW = datetime(2026, 11, 24, 13, 5, tzinfo=UTC)  # Tue 14:05 in Berlin
CONFIG: dict[str, Any] = {"bot": {"timezone": "Europe/Berlin"}}
ALICE: dict[str, Any] = {"sender": "u-alice", "sender_name": "Alice", "chat": "g1"}


async def lines(bot: Any, command: str) -> list[str]:
    (text,) = await bot.say(command, **ALICE)
    return str(text).splitlines()[1:]


async def test_a_snoozed_reminder_keeps_its_number(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(config=CONFIG, clock=FakeClock(NOW))
    await bot.say("/remind in 5 minutes stretch", **ALICE)
    for n in range(2, 5):
        await bot.say(f"/remind every day at 18:00 task {n}", **ALICE)
    assert await bot.advance(timedelta(minutes=5)) == ["⏰ Reminder for @Alice: stretch"]
    (snoozed,) = await bot.say("/snooze 1 10m", **ALICE)
    assert snoozed.startswith("💤 Snoozed #1 until")
    listed = await lines(bot, "/reminders")
    assert listed[0] == "#1 · next Tue 24 Nov 14:20 · snoozed · stretch"
    assert not any(line.startswith("#5") for line in listed)
    # /edit reaches the same reminder by its number, and the snooze says the new words.
    (edited,) = await bot.say("/edit 1 stretch and drink water", **ALICE)
    assert edited.startswith("✏️ Updated reminder #1")
    assert await bot.advance(timedelta(minutes=10)) == [
        "⏰ Reminder for @Alice: stretch and drink water"
    ]
    assert await lines(bot, "/history") == [
        "Tue 24 Nov 14:20 · #1 stretch and drink water · sent",
        "Tue 24 Nov 14:10 · #1 stretch · sent",
        "Tue 24 Nov 14:10 · #1 stretch and drink water · snoozed until Tue 24 Nov 14:20",
    ]
    # Its own history and the audit log speak of #1 throughout.
    own = await lines(bot, "/history #1")
    assert own[:3] == [
        "Tue 24 Nov 14:05 · set by Alice",
        "Tue 24 Nov 14:10 · snoozed by Alice",
        "Tue 24 Nov 14:10 · changed by Alice",
    ]
    assert bot.app.audit is not None
    rows = await bot.app.audit.page(AuditQuery(chat_id="g1"))
    assert [(row.tool, row.target_label) for row in rows][:3] == [
        ("reminder_update", "#1"),
        ("reminder_snooze", "#1"),
        ("reminder_set", "#4"),
    ]
    # The next reminder set takes the next number: none was used up by the snooze.
    (set_next,) = await bot.say("/remind in 1 hour call back", **ALICE)
    assert set_next.startswith("⏰ Reminder #5 set")


async def test_a_snoozed_repeat_fires_once_then_keeps_its_rule(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(config=CONFIG, clock=FakeClock(NOW))
    await bot.say("/remind every day at 14:10 take pills", **ALICE)
    assert await bot.advance(timedelta(minutes=5)) == ["⏰ Reminder for @Alice: take pills"]
    (snoozed,) = await bot.say("/snooze #1 30m", **ALICE)
    assert snoozed.startswith("💤 Snoozed #1 until Tue 24 Nov 14:40")
    listed = await lines(bot, "/reminders")
    assert [line.split(" · ")[0] for line in listed] == ["#1", "#1"]
    # The snooze once at 14:40, then the rule's own 14:10 each day, and nothing else.
    sent = await bot.advance(timedelta(days=2))
    assert sent == ["⏰ Reminder for @Alice: take pills"] * 3
    listed = await lines(bot, "/reminders")
    assert listed == ["#1 · next Fri 27 Nov 14:10 · every day at 14:10 · take pills"]
