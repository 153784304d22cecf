"""No claim without a deed: a reminder asked for but not set by the model is offered as
the grammar read it, and "yes" from the same sender within ten minutes sets exactly that."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.handlers.reminder_words import describe_schedule
from groupmate.testing import BotFactory, FakeClock
from groupmate.testing.stub_llm import StubLLM, calls, text
from tests import bots

NOW = datetime(2026, 11, 24, 13, 5, tzinfo=UTC)  # Tue 14:05 in Berlin


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


def make_bot(tmp_path: Path, stub: StubLLM, clock: Clock) -> Bot:
    bot = {"timezone": "Europe/Berlin", "rate_limits": {"user_per_minute": 100, "burst": 100}}
    return bots.make_bot(
        tmp_path,
        stub,
        llm={"tool_mode": "native"},
        # The model's turn is under test: requests the grammar reads whole would skip it.
        reminders={"fast_path": False},
        bot=bot,
        clock=clock,
    )


def said(text: str, sender: str = "u-alice", name: str = "Alice") -> IncomingMessage:
    return bots.chat_message(text, sender_id=sender, sender_name=name)


async def texts(bot: Bot, message: IncomingMessage) -> list[str]:
    return [reply.text for reply in await bot.handle(message)]


async def stored(bot: Bot) -> list[tuple[str, str]]:
    assert bot.reminders is not None
    reminders, _ = await bot.reminders.list_for_chat("g1")
    return [(describe_schedule(r.schedule), r.content) for r in reminders]


# The kit's settings for the same bot: Alice in chat g1; "yes" needs no mention.
KIT_CONFIG: dict[str, Any] = {
    "reminders": {"fast_path": False},
    "bot": {"timezone": "Europe/Berlin"},
}
ALICE: dict[str, Any] = {"sender": "u-alice", "sender_name": "Alice", "chat": "g1"}


async def test_a_claimed_reminder_becomes_an_offer_and_yes_sets_exactly_it(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot(config=KIT_CONFIG, clock=FakeClock(NOW))
    bot.model.answers("Okay, tomorrow at 09:00 (UTC+01:00) in Europe/Berlin.")
    (offer,) = await bot.say("remind me tomorrow at 9 to call the dentist", **ALICE)
    assert offer == (
        "Nothing is set yet. Set 'call the dentist' for Wed 25 Nov 09:00 (Europe/Berlin)?"
        " Reply yes."
    )
    assert await stored(bot.app) == []
    not_bobs = await bot.say("yes", sender="u-bob", chat="g1", mention=False)
    assert not_bobs == []
    await bot.advance(timedelta(minutes=2))
    (confirmation,) = await bot.say("yes", mention=False, **ALICE)  # no mention needed
    assert confirmation.startswith("⏰ Reminder #1 set for Wed 25 Nov 09:00 (Europe/Berlin)")
    assert await stored(bot.app) == [("once, on Wed 25 Nov 2026 at 09:00", "call the dentist")]
    assert await bot.say("yes", mention=False, **ALICE) == []  # the offer was used up
    assert len(bot.model.requests) == 1


async def test_an_offer_expires_after_ten_minutes(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(config=KIT_CONFIG, clock=FakeClock(NOW))
    bot.model.answers("Sure!")
    (offer,) = await bot.say("remind me every monday at 9 to send the report", **ALICE)
    assert "every Monday at 09:00" in offer and offer.endswith("Reply yes.")
    await bot.advance(timedelta(minutes=11))
    assert await bot.say("yes", mention=False, **ALICE) == []
    assert await stored(bot.app) == []
    assert bot.sent == []


async def test_a_reminder_the_model_set_passes_its_answer_on(tmp_path: Path, stub: StubLLM) -> None:
    stub.script(calls(("reminder_set", {"when": "in 30 minutes", "content": "check the oven"})))
    async with make_bot(tmp_path, stub, Clock()) as bot:
        (answer,) = await texts(bot, said("@groupmate remind me in 30 minutes to check the oven"))
        assert answer.startswith("⏰ Reminder #1 set for Tue 24 Nov 14:35")
        assert await texts(bot, said("yes")) == []  # nothing was offered


async def test_messages_that_ask_for_no_reminder_keep_the_models_answer(
    tmp_path: Path, stub: StubLLM
) -> None:
    stub.script(text("Hello!"), text("I can't tell when."))
    async with make_bot(tmp_path, stub, Clock()) as bot:
        assert await texts(bot, said("@groupmate hi, see you tomorrow at 9")) == ["Hello!"]
        # Asks for a reminder, but the grammar reads no exact time: no offer either, and
        # what the model said instead is not a question back: plainly, nothing was set.
        (nothing,) = await texts(bot, said("@groupmate remind me sometime"))
        assert nothing.startswith("Nothing was set: I couldn't read that as a reminder.")


async def test_a_chinese_request_gets_a_chinese_offer(tmp_path: Path, stub: StubLLM) -> None:
    stub.script(text("好的"))
    async with make_bot(tmp_path, stub, Clock()) as bot:
        (offer,) = await texts(bot, said("@groupmate 10分钟后提醒我喝水"))
        assert offer.startswith("还没有设置任何提醒。要设置“喝水”：11月24日 周二 14:15")
        (confirmation,) = await texts(bot, said("好"))
        assert confirmation == "⏰ 已设置提醒 #1：11月24日 周二 14:15（Europe/Berlin）：喝水"


async def test_a_claimed_snooze_edit_or_delete_that_no_tool_made_is_not_passed_on(
    tmp_path: Path, stub: StubLLM
) -> None:
    stub.script(
        text("Sure, I'll remind you again in an hour!"),
        text("Reminder #1 has been moved to 10:00."),
        text("好的，已修改到早上8点。"),
        text("Reminder #2 deleted."),
        text("已删除提醒2。"),
        text("Sure, see you!"),
    )
    async with make_bot(tmp_path, stub, Clock()) as bot:
        refused = "Nothing was changed: I couldn't turn that into a reminder action."
        (snooze,) = await texts(bot, said("@groupmate remind me again in an hour"))
        assert snooze.startswith(refused)
        (edit,) = await texts(bot, said("@groupmate move reminder 1 to 10am"))
        assert edit.startswith(refused)
        (zh,) = await texts(bot, said("@groupmate 把提醒1改到早上8点"))
        assert zh.startswith("什么都没有改动")
        (delete,) = await texts(bot, said("@groupmate cancel reminder #2"))
        assert delete.startswith(refused)
        (zh_delete,) = await texts(bot, said("@groupmate 删除提醒2"))
        assert zh_delete.startswith("什么都没有改动")
        # Small talk without a claim keeps the model's words.
        assert await texts(bot, said("@groupmate bye")) == ["Sure, see you!"]
        assert await stored(bot) == []


async def test_a_time_the_users_own_words_put_in_the_past_is_refused_with_the_reason(
    tmp_path: Path, stub: StubLLM
) -> None:
    # At 14:05 "today at 9" has passed; a small model answered only "I can't assist".
    stub.script(text("I apologize, but I can't assist with that."), text("抱歉。"))
    async with make_bot(tmp_path, stub, Clock()) as bot:
        (answer,) = await texts(bot, said("@groupmate remind me today at 9am to stretch"))
        assert answer.startswith("Nothing is set: Tue 24 Nov 2026 09:00 is in the past")
        assert "it is now Tue 24 Nov 2026 14:05" in answer
        (chinese,) = await texts(bot, said("@groupmate 今天早上9点提醒我吃药"))
        assert chinese.startswith("没有设置提醒：Tue 24 Nov 2026 09:00 is in the past")
        assert await stored(bot) == []
        assert await texts(bot, said("yes")) == []  # nothing was offered
