"""Repeats within a day and repeat limits through a real Bot on SQLite and PostgreSQL:
/remind sets them and says when the last one will be, /reminders lists them so, /edit
adds and removes a limit (English and Chinese), and the chat's bounds
(`reminders.min_interval`, `reminders.max_per_day`) refuse a flood from every door, in
words that name the bound."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from groupmate.bot.app import Bot
from groupmate.testing import BotFactory
from groupmate.testing.clock import FakeClock
from tests import bots

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY_8 = datetime(2026, 11, 23, 8, 0, tzinfo=BERLIN)


def make_bot(database_url: str, **reminders: Any) -> Bot:
    return bots.make_bot(
        database_url,
        clock=FakeClock(MONDAY_8.astimezone(UTC)),
        bot={"timezone": "Europe/Berlin", "rate_limits": {"user_per_minute": 1000, "burst": 100}},
        reminders=reminders,
    )


async def say(bot: Bot, text: str) -> str:
    (reply,) = await bot.handle(bots.chat_message(text, message_id=text))
    return reply.text


async def listed(bot: Bot) -> list[str]:
    return (await say(bot, "/reminders")).splitlines()[1:]


async def test_remind_says_when_the_last_one_will_be(database_url: str) -> None:
    async with make_bot(database_url) as bot:
        assert await say(bot, "/remind every 2 hours from 9 to 17, 5 times, to drink water") == (
            "⏰ Reminder #1 set for Mon 23 Nov 09:00 (Europe/Berlin), every 2 hours from 09:00 "
            "to 17:00, 5 times (the last on Mon 23 Nov at 17:00): drink water"
        )
        assert await say(bot, "/remind every day at 9 until friday to take pills") == (
            "⏰ Reminder #2 set for Mon 23 Nov 09:00 (Europe/Berlin), every day at 09:00 until "
            "Fri 27 Nov (the last on Fri 27 Nov at 09:00): take pills"
        )
        assert await say(bot, "/提醒 工作日每小时 9点到17点 看工单") == (
            "⏰ 已设置提醒 #3：11月23日 周一 09:00（Europe/Berlin），"
            "工作日 09:00至17:00 每小时：看工单"
        )
        assert await say(bot, "/提醒 每天9点提醒我吃药，共3次") == (
            "⏰ 已设置提醒 #4：11月23日 周一 09:00（Europe/Berlin），每天 09:00，共3次"
            "（最后一次：11月25日 周三 09:00）：吃药"
        )
        assert await listed(bot) == [
            "#1 · next Mon 23 Nov 09:00 · every 2 hours from 09:00 to 17:00, 5 times (the last "
            "on Mon 23 Nov at 17:00) · drink water",
            "#2 · next Mon 23 Nov 09:00 · every day at 09:00 until Fri 27 Nov (the last on Fri "
            "27 Nov at 09:00) · take pills",
            "#3 · next Mon 23 Nov 09:00 · every hour from 09:00 to 17:00 on weekdays · 看工单",
            "#4 · next Mon 23 Nov 09:00 · every day at 09:00, 3 times (the last on Wed 25 Nov at "
            "09:00) · 吃药",
        ]


async def test_edit_adds_and_removes_a_limit(database_url: str) -> None:
    async with make_bot(database_url) as bot:
        await say(bot, "/remind every day at 9 to take pills")
        assert await say(bot, "/edit 1 until friday") == (
            "✏️ Updated reminder #1 · next Mon 23 Nov 09:00 · every day at 09:00 until Fri 27 "
            "Nov (the last on Fri 27 Nov at 09:00) · take pills"
        )
        # A new limit replaces the old one; the count starts at the next occurrence.
        assert await say(bot, "/edit 1 3 times") == (
            "✏️ Updated reminder #1 · next Mon 23 Nov 09:00 · every day at 09:00, 3 times (the "
            "last on Wed 25 Nov at 09:00) · take pills"
        )
        # A new time of day keeps the limit.
        assert await say(bot, "/edit 1 at 10") == (
            "✏️ Updated reminder #1 · next Mon 23 Nov 10:00 · every day at 10:00, 3 times (the "
            "last on Wed 25 Nov at 10:00) · take pills"
        )
        # A new rule keeps the limit too; only the words' own parts change.
        assert await say(bot, "/edit 1 every weekday") == (
            "✏️ Updated reminder #1 · next Mon 23 Nov 10:00 · every weekday (Mon-Fri) at 10:00, "
            "3 times (the last on Wed 25 Nov at 10:00) · take pills"
        )
        assert await say(bot, "/edit 1 no limit") == (
            "✏️ Updated reminder #1 · next Mon 23 Nov 10:00 · every weekday (Mon-Fri) at 10:00 · "
            "take pills"
        )
        assert await say(bot, "/edit 1 直到周五") == (
            "✏️ Updated reminder #1 · next Mon 23 Nov 10:00 · every weekday (Mon-Fri) at 10:00 "
            "until Fri 27 Nov (the last on Fri 27 Nov at 10:00) · take pills"
        )
        assert await say(bot, "/edit 1 不限次数") == (
            "✏️ Updated reminder #1 · next Mon 23 Nov 10:00 · every weekday (Mon-Fri) at 10:00 · "
            "take pills"
        )
        # Not a day: nothing changes.
        assert await say(bot, "/edit 1 until I get home") == (
            "I couldn't change that reminder: I can't end a reminder on “until I get home”: give "
            "a day or date, e.g. “until Friday”, or a number of times, e.g. “5 times”."
        )
        assert await listed(bot) == [
            "#1 · next Mon 23 Nov 10:00 · every weekday (Mon-Fri) at 10:00 · take pills"
        ]


async def test_edit_limits_a_repeat_within_a_day_and_keeps_its_hours(database_url: str) -> None:
    async with make_bot(database_url) as bot:
        await say(bot, "/remind every hour from 9 to 17 on weekdays to check the queue")
        assert await say(bot, "/edit 1 until wednesday") == (
            "✏️ Updated reminder #1 · next Mon 23 Nov 09:00 · every hour from 09:00 to 17:00 on "
            "weekdays until Wed 25 Nov (the last on Wed 25 Nov at 17:00) · check the queue"
        )


async def test_the_chats_bounds_refuse_a_flood_from_remind_and_edit(database_url: str) -> None:
    async with make_bot(database_url, min_interval="15m", max_per_day=20) as bot:
        too_often = "That repeats too often: the shortest repeat here is every 15 minutes."
        assert await say(bot, "/remind every 10 minutes to stretch") == too_often
        assert await say(bot, "/remind every hour to stretch") == (
            "That would fire 24 times a day; the most here is 20. Use a longer step, or hours "
            "(e.g. 'every hour from 9 to 17')."
        )
        assert await say(bot, "/提醒 每10分钟 喝水") == "重复得太频繁了：这里最短每15分钟一次。"
        # Within the bounds: set; edited past them: refused, and unchanged.
        assert (await say(bot, "/remind every hour from 9 to 17 to stretch")).startswith(
            "⏰ Reminder #1 set for Mon 23 Nov 09:00"
        )
        assert await say(bot, "/edit 1 every 5 minutes from 9 to 17") == too_often
        assert await listed(bot) == [
            "#1 · next Mon 23 Nov 09:00 · every hour from 09:00 to 17:00 · stretch"
        ]


async def test_a_counted_repeat_fires_that_many_times_then_is_done_and_kept_in_history(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot(
        config={"bot": {"timezone": "Europe/Berlin"}}, clock=FakeClock(MONDAY_8.astimezone(UTC))
    )
    (confirmed,) = await bot.say("/remind every 2 hours from 9 to 17, 3 times, to drink water")
    assert confirmed.endswith("3 times (the last on Mon 23 Nov at 13:00): drink water")
    assert await bot.advance(timedelta(days=2)) == ["⏰ Reminder for @Alice: drink water"] * 3
    assert await bot.say("/reminders") == ["There are no active reminders in this chat."]
    assert await bot.say("/history #1") == [
        "Reminder #1 (Europe/Berlin):\nMon 23 Nov 08:00 · set by Alice\n"
        "Mon 23 Nov 13:00 · #1 drink water · sent\nMon 23 Nov 11:00 · #1 drink water · sent\n"
        "Mon 23 Nov 09:00 · #1 drink water · sent"
    ]
