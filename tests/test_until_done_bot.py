"""“Until done” end to end through a real Bot, on SQLite and PostgreSQL, without a model:
/remind and a plain request set it with the rule and the cap stored and said in the
confirmation; /reminders shows it; it repeats until the rule is met and not after; a
refusal stores nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from groupmate.bot.app import Bot
from groupmate.storage import Member, OutgoingMessage
from groupmate.storage.recurrence import _count_end_of
from tests import bots
from tests.conftest import FakeClock

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 25, 10, 20, tzinfo=BERLIN)  # a Wednesday morning
NINE_PM = datetime(2026, 11, 25, 21, 0, tzinfo=BERLIN).astimezone(UTC)
TEN = timedelta(minutes=10)


def make_bot(
    database_url: str,
    clock: FakeClock | None = None,
    zone: str = "Europe/Berlin",
    **reminders: object,
) -> Bot:
    bot = {"timezone": zone, "rate_limits": {"user_per_minute": 100, "burst": 100}}
    clock = clock or FakeClock(NOW.astimezone(UTC))
    return bots.make_bot(database_url, bot=bot, reminders=reminders, clock=clock)


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


def delivering(
    database_url: str, start: datetime = NOW, zone: str = "Europe/Berlin"
) -> tuple[Bot, FakeClock, list[OutgoingMessage]]:
    """A bot on the fake clock from `start` whose sent reminders land in the list."""
    clock = FakeClock(start.astimezone(UTC))
    sent: list[OutgoingMessage] = []

    async def send(message: OutgoingMessage) -> str:
        sent.append(message)
        return f"m{len(sent)}"

    bot = make_bot(database_url, clock, zone)
    bot.on_outgoing(send)
    return bot, clock, sent


async def fire(bot: Bot, clock: FakeClock, at: datetime) -> None:
    assert bot.reminders is not None and bot.reminders.scheduler is not None
    clock.set(at)
    await bot.reminders.scheduler.run_due()


@pytest.mark.parametrize("who", ["asker", "anyone"])
async def test_it_repeats_until_the_rule_is_met_and_not_after(database_url: str, who: str) -> None:
    """Set with /remind; every 10 minutes it comes again; a /done by someone the rule
    doesn't wait for changes nothing; the right one's /done ends it: no more after."""
    bot, clock, sent = delivering(database_url)
    async with bot:
        rule = "until I say done" if who == "asker" else "until someone says done"
        assert (await say(bot, f"/remind me at 9pm to take pills {rule}")).startswith("⏰")
        assert bot.reminders is not None
        await fire(bot, clock, NINE_PM)
        await fire(bot, clock, NINE_PM + TEN)
        assert len(sent) == 2
        if who == "asker":
            assert (
                await say(bot, "/done 1", "u2", "Bob") == "Reminder #1 waits for Ann to say done."
            )
            await fire(bot, clock, NINE_PM + 2 * TEN)
            assert len(sent) == 3  # Bob's done is not Ann's: it goes on
            done = await say(bot, "/done 1")
        else:
            done = await say(bot, "/done 1", "u2", "Bob")
        assert done == "✅ #1 is done: it won't remind again."
        before = len(sent)
        for step in range(3, 13):
            await fire(bot, clock, NINE_PM + step * TEN)
        assert len(sent) == before  # done: never again
        assert (await bot.reminders.list_for_chat("g1"))[0] == []


async def test_unanswered_it_stops_at_its_cap(database_url: str) -> None:
    bot, clock, sent = delivering(database_url)
    async with bot:
        await say(bot, "/remind me at 9pm to take pills until I say done")
        for step in range(20):
            await fire(bot, clock, NINE_PM + step * TEN)
        assert len(sent) == 12  # the cap the confirmation named: the last at 22:50


async def test_edit_keeps_until_done(database_url: str) -> None:
    """A new time keeps the rule, its step and its cap; a rule it can't have is refused
    and the reminder stays as it was."""
    async with make_bot(database_url) as bot:
        await say(bot, "/remind me at 9pm to take pills until I say done")
        moved = await say(bot, "/edit 1 10pm")
        assert moved == (
            "✏️ Updated reminder #1 · next Wed 25 Nov 22:00 · every 10 minutes from 22:00 until "
            "Ann says done (at most 12 times: the last on Wed 25 Nov at 23:50) · take pills"
        )
        daily = await say(bot, "/edit 1 every day at 9")
        assert "can't go with a daily or weekly rule" in daily
        assert bot.reminders is not None
        (stored,), _ = await bot.reminders.list_for_chat("g1")
        assert (stored.ack, stored.schedule.count, f"{stored.schedule.wall_time:%H:%M}") == (
            "asker",
            12,
            "22:00",
        )


async def test_a_plain_request_with_a_step_is_set_without_the_model(database_url: str) -> None:
    async with make_bot(database_url) as bot:
        reply = await say(
            bot, "@groupmate remind me every 10 minutes until someone says done to check the oven"
        )
        assert reply == (
            "⏰ Reminder #1 set for Wed 25 Nov 10:30 (Europe/Berlin), every 10 minutes from "
            "10:30 until someone says done (at most 12 times: the last on Wed 25 Nov at 12:20): "
            "check the oven"
        )
        zh = await say(bot, "@groupmate 每5分钟提醒我吃药，直到我说好了")
        assert zh == (
            "⏰ 已设置提醒 #2：11月25日 周三 10:25（Europe/Berlin），每5分钟（10:25起），"
            "直到Ann说好了（最多12次，最后一次：11月25日 周三 11:20）：吃药"
        )


async def test_each_named_person_must_say_done(database_url: str) -> None:
    bot, clock, sent = delivering(database_url)
    bob, carol = Member("u2", "bob"), Member("u3", "carol")
    async with bot:
        message = bots.chat_message(
            "/remind @bob and @carol at 9pm to pay the rent until everyone says done",
            mentions=(bob, carol),
        )
        (reply,) = await bot.handle(message)
        assert "until everyone named says done (at most 12 times" in reply.text
        await fire(bot, clock, NINE_PM)
        assert await say(bot, "/done 1", "u2", "bob") != "✅ #1 is done: it won't remind again."
        await fire(bot, clock, NINE_PM + TEN)
        assert len(sent) == 2  # Carol hasn't: it goes on
        assert await say(bot, "/done 1", "u3", "carol") == "✅ #1 is done: it won't remind again."
        for step in range(2, 12):
            await fire(bot, clock, NINE_PM + step * TEN)
        assert len(sent) == 2


async def fire_all(bot: Bot, clock: FakeClock, most: int = 14) -> list[datetime]:
    """Fire the chat's one live reminder at each next time until it ends (or `most`
    times); the times it fired at."""
    assert bot.reminders is not None
    fired: list[datetime] = []
    for _ in range(most):
        live, _ = await bot.reminders.list_for_chat("g1")
        if not live:
            break
        at = live[0].next_fire_at
        assert at is not None
        await fire(bot, clock, at)
        fired.append(at)
    return fired


async def test_it_steps_ten_minutes_of_real_time_across_the_spring_change(
    database_url: str,
) -> None:
    """New York, 8 March 2026: 02:00 EST becomes 03:00 EDT. From 01:30, every 10 minutes
    of elapsed time, 12 times: no step lost or doubled, the last at 04:20 EDT."""
    york = ZoneInfo("America/New_York")
    evening = datetime(2026, 3, 7, 20, 0, tzinfo=york)
    bot, clock, sent = delivering(database_url, evening, "America/New_York")
    async with bot:
        reply = await say(bot, "/remind me tomorrow at 01:30 to check the furnace until I say done")
        assert "(at most 12 times: the last on Sun 8 Mar at 04:20)" in reply
        fired = [f"{at.astimezone(york):%H:%M}" for at in await fire_all(bot, clock)]
    assert fired == ["01:30", "01:40", "01:50", "03:00", "03:10", "03:20", "03:30", "03:40",
                     "03:50", "04:00", "04:10", "04:20"]  # fmt: skip
    assert len(sent) == 12


async def test_started_in_the_repeated_hour_it_fires_its_twelve_after_a_restart(
    database_url: str,
) -> None:
    """New York, 1 November 2026: 02:00 EDT becomes 01:00 EST, so 01:00-02:00 comes
    twice. Set at the second 01:10: the rule starts at the second 01:30 and, read back
    from its row (as after a restart), still fires 12 times, the last at 03:20 EST."""
    york = ZoneInfo("America/New_York")
    second_0110 = datetime(2026, 11, 1, 6, 10, tzinfo=UTC)
    assert second_0110.astimezone(york).fold == 1
    bot, clock, sent = delivering(database_url, second_0110, "America/New_York")
    async with bot:
        reply = await say(bot, "/remind me in 20 minutes to check the furnace until I say done")
        assert "(at most 12 times: the last on Sun 1 Nov at 03:20)" in reply
        _count_end_of.cache_clear()  # the process's cache, as after a restart
        fired = await fire_all(bot, clock)
    first = datetime(2026, 11, 1, 6, 30, tzinfo=UTC)  # the second 01:30, EST
    assert fired == [first + k * timedelta(minutes=10) for k in range(12)]
    assert len(sent) == 12
