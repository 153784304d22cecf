"""`/edit` changes only what its words name and keeps the rest: a new rule without a
time keeps the reminder's time, a new time keeps its rule, and its text changes only when
text is given. Words that may be the rule or part of the text are asked about, with the
two readings as exact commands, and nothing changes (English and Chinese)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from groupmate.testing import BotFactory, FakeClock

NOW = datetime(2026, 11, 24, 13, 5, tzinfo=UTC)  # Tue 14:05 in Berlin
CONFIG: dict[str, Any] = {"bot": {"timezone": "Europe/Berlin"}}
ALICE: dict[str, Any] = {"sender": "u-alice", "sender_name": "Alice", "chat": "g1"}


async def listed(bot: Any, short_id: int) -> str:
    """The reminder's line in /reminders."""
    (text,) = await bot.say("/reminders", **ALICE)
    (line,) = [line for line in str(text).splitlines() if line.startswith(f"#{short_id} ·")]
    return line


async def test_daily_standup_is_asked_about_and_each_reading_changes_only_its_part(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot(config=CONFIG, clock=FakeClock(NOW))
    await bot.say("/remind tomorrow at 8 call mom", **ALICE)
    await bot.say("/remind every weekday at 9:30 do standup", **ALICE)
    before = await listed(bot, 2)
    assert before.endswith("every weekday (Mon-Fri) at 09:30 · do standup")

    (asked,) = await bot.say("/edit 2 daily standup", **ALICE)
    assert asked == (
        "Is “daily” the new time or repeat, or part of the new text? Nothing was changed. "
        'Send one of:\n/edit 2 daily "standup" (daily, keeping the time of day; text '
        '“standup”)\n/edit 2 "daily standup" (text “daily standup”; time unchanged)'
    )
    assert await listed(bot, 2) == before

    # The text reading: the rule and the time stay.
    await bot.say('/edit 2 "daily standup"', **ALICE)
    assert (await listed(bot, 2)).endswith("every weekday (Mon-Fri) at 09:30 · daily standup")
    # The rule reading: every day, at the reminder's own 09:30, not the default 09:00.
    await bot.say('/edit 2 daily "standup"', **ALICE)
    assert (await listed(bot, 2)).endswith("every day at 09:30 · standup")
    # A rule alone keeps the time and the text; a time alone keeps the rule and the text.
    await bot.say("/edit 2 every monday", **ALICE)
    assert (await listed(bot, 2)).endswith("every Monday at 09:30 · standup")
    await bot.say("/edit #2 at 10:15", **ALICE)
    assert (await listed(bot, 2)).endswith("every Monday at 10:15 · standup")
    # A new day for a one-time reminder keeps its time of day.
    await bot.say("/edit 1 friday", **ALICE)
    assert (await listed(bot, 1)).startswith("#1 · next Fri 27 Nov 08:00 ·")
    # A time named with the rule is no question: both change, and the text.
    (both,) = await bot.say("/edit 2 daily at 7:45 stand up", **ALICE)
    assert both.startswith("✏️ Updated reminder #2")
    assert (await listed(bot, 2)).endswith("every day at 07:45 · stand up")


async def test_a_chinese_edit_is_asked_about_in_chinese(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(config=CONFIG, clock=FakeClock(NOW))
    await bot.say("/remind 每个工作日上午9:30 站会", **ALICE)
    before = await listed(bot, 1)
    (asked,) = await bot.say("/edit 1 每天站会", **ALICE)
    assert asked.startswith("“每天”是新的时间或重复规则，还是新内容的一部分？这次什么都没有改动。")
    assert "\n/edit 1 每天 “站会”（" in asked and "\n/edit 1 “每天站会”（" in asked
    assert await listed(bot, 1) == before
    await bot.say("/edit 1 每天 “站会”", **ALICE)
    assert (await listed(bot, 1)).endswith("every day at 09:30 · 站会")
    await bot.say("/edit 1 “每天站会”", **ALICE)
    assert (await listed(bot, 1)).endswith("every day at 09:30 · 每天站会")
