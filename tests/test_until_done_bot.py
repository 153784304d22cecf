"""“Until done” end to end through a real Bot, on SQLite and PostgreSQL, without a model:
/remind and a plain request set it with the rule and the cap stored and said in the
confirmation; /reminders shows it; a refusal stores nothing."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from groupmate.bot.app import Bot
from tests import bots

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 25, 10, 20, tzinfo=BERLIN)  # a Wednesday morning


def make_bot(database_url: str, **reminders: object) -> Bot:
    bot = {"timezone": "Europe/Berlin", "rate_limits": {"user_per_minute": 100, "burst": 100}}
    return bots.make_bot(database_url, bot=bot, reminders=reminders, clock=lambda: NOW)


async def say(bot: Bot, words: str, sender: str = "u1", name: str = "Ann") -> str:
    (reply,) = await bot.handle(bots.chat_message(words, sender_id=sender, sender_name=name))
    return reply.text


async def test_remind_until_i_say_done_is_stored_and_confirmed_with_its_cap(
    database_url: str,
) -> None:
    async with make_bot(database_url) as bot:
        reply = await say(bot, "/remind me at 9pm to take pills until I say done")
        assert reply == (
            "⏰ Reminder #1 set for Wed 25 Nov 21:00 (Europe/Berlin), every 10 minutes from "
            "21:00 until Ann says done (at most 12 times: the last on Wed 25 Nov at 22:50): "
            "take pills"
        )
        zh = await say(bot, "@groupmate 晚上9点提醒我喂猫，直到有人说好了")
        assert zh == (
            "⏰ 已设置提醒 #2：11月25日 周三 21:00（Europe/Berlin），每10分钟（21:00起），"
            "直到有人说好了（最多12次，最后一次：11月25日 周三 22:50）：喂猫"
        )
        assert bot.reminders is not None
        stored, _ = await bot.reminders.list_for_chat("g1")
        assert [(r.ack, r.schedule.count, r.content) for r in stored] == [
            ("asker", 12, "take pills"),
            ("anyone", 12, "喂猫"),
        ]
        listed = await say(bot, "/reminders")
        assert "every 10 minutes from 21:00 until Ann says done (at most 12 times" in listed
        assert "every 10 minutes from 21:00 until someone says done (at most 12 times" in listed


async def test_the_cap_is_the_chats_config(database_url: str) -> None:
    async with make_bot(database_url, until_done_cap=3) as bot:
        reply = await say(bot, "/remind us at 9pm to feed the cat until someone says done")
        assert "until someone says done (at most 3 times: the last on Wed 25 Nov at 21:20)" in reply


async def test_an_unclear_until_done_is_refused_and_nothing_is_stored(database_url: str) -> None:
    async with make_bot(database_url) as bot:
        reply = await say(bot, "/remind me at 5pm to work on the slides until done with the report")
        assert "part of the reminder, or should it repeat until someone acknowledges" in reply
        daily = await say(bot, "/remind me every day at 9 to take pills until I say done")
        assert "can't go with a daily or weekly rule" in daily
        assert "ack'" not in daily and "Value error" not in daily  # no internals
        assert bot.reminders is not None
        assert (await bot.reminders.list_for_chat("g1"))[0] == []
