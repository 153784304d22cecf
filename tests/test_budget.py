"""Token budgets and usage, on SQLite and PostgreSQL: a spent budget stops model calls
with one notice and the reset time; commands keep working; an admin raises the limit."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage
from groupmate.storage.usage import UsageLog
from groupmate.testing.stub_llm import Reply, StubLLM, calls, text
from tests import bots

NOW = datetime(2026, 11, 24, 13, 5, tzinfo=UTC)


def make_bot(database_url: str, stub: StubLLM, **budget: int) -> Bot:
    bot = {"timezone": "Europe/Berlin", "admins": ["u-admin"]}
    return bots.make_bot(database_url, stub, llm={"budget": budget}, bot=bot, clock=lambda: NOW)


def said(text: str, sender: str = "u-alice", chat_type: str = "group") -> IncomingMessage:
    return bots.chat_message(
        text,
        chat_id="g1" if chat_type == "group" else "p1",
        chat_type=chat_type,
        sender_id=sender,
        sender_name=sender.removeprefix("u-").title(),
    )


async def texts(bot: Bot, message: IncomingMessage) -> list[str]:
    return [reply.text for reply in await bot.handle(message)]


async def test_usage_is_recorded_per_chat_and_day(database_url: str, stub: StubLLM) -> None:
    stub.script(text("hi there"), Reply(content="no usage reported", no_usage=True))
    async with make_bot(database_url, stub) as bot:
        await texts(bot, said("@groupmate hello"))
        first = stub.requests[0]
        await texts(bot, said("@groupmate again"))
        assert bot.reminders is not None
        spent = await UsageLog(bot.reminders.database).spent("g1", NOW.date())
        other = await UsageLog(bot.reminders.database).spent("g2", NOW.date())
    # The first as reported (characters / 4 in the stub), the second estimated.
    assert spent.chat > len(str(first["messages"])) // 8
    assert spent.total == spent.chat and other.chat == 0


async def test_a_spent_chat_budget_stops_the_model_with_one_notice(
    database_url: str, stub: StubLLM
) -> None:
    stub.fallback = text("an answer " * 50)
    async with make_bot(database_url, stub, tokens_per_chat_per_day=1000) as bot:
        while len(stub.requests) < 20 and (await texts(bot, said("@groupmate talk")))[0].startswith(
            "an answer"
        ):
            pass
        asked = len(stub.requests)
        assert asked >= 1
        notice = await texts(bot, said("@groupmate talk"))
        assert notice == []  # told once already (the message that hit the limit)
        assert len(stub.requests) == asked  # the model is not called any more
        # Slash commands still work.
        (confirmation,) = await texts(bot, said("/remind in 10 minutes tea"))
        assert confirmation.startswith("⏰ Reminder #1 set")
        (refused,) = await texts(bot, said("/budget 200000"))
        assert refused == "Only a group admin can change this chat's budget."
        (raised,) = await texts(bot, said("/budget 200000", sender="u-admin"))
        assert "(200,000 tokens a day)" in raised and "resets Wed 25 Nov 01:00" in raised
        (answer,) = await texts(bot, said("@groupmate talk"))
        assert answer.startswith("an answer") and len(stub.requests) == asked + 1


async def test_the_notice_names_the_reset_and_private_chats_hear_it_each_time(
    database_url: str, stub: StubLLM
) -> None:
    stub.fallback = text("an answer " * 50)
    async with make_bot(database_url, stub, tokens_per_day=200) as bot:
        await texts(bot, said("@groupmate talk"))  # spends the whole bot's budget
        for _ in range(2):
            (notice,) = await texts(bot, said("hello", sender="u-bob", chat_type="private"))
            assert notice == (
                "I've used up the bot's language-model budget for today; it resets at "
                "Wed 25 Nov 01:00 (Europe/Berlin). Slash commands like /remind still work."
            )
    assert len(stub.requests) == 1


async def test_a_summarys_own_requests_count_for_the_chat(database_url: str, stub: StubLLM) -> None:
    summarized = "They planned the picnic. " * 40  # a long answer: many completion tokens
    stub.script(calls(("summary", {})), text(summarized), text("unused"))
    async with make_bot(database_url, stub) as bot:
        for line in ("picnic on Saturday?", "yes, at noon", "I'll bring drinks"):
            await bot.handle(said(line, sender="u-bob"))
        (answer,) = await texts(bot, said("@groupmate summarize the chat"))
        assert bot.reminders is not None
        spent = await UsageLog(bot.reminders.database).spent("g1", NOW.date())
    assert answer.startswith("📝 Summary of the last 3 messages:\nThey planned the picnic.")
    assert stub.pending == 1  # two requests: the turn's and the summary's own
    # The stub reports tokens as characters / 4. Without the summary's own request the
    # chat would have spent the turn's prompt and a short tool call only.
    turn = stub.requests[0]
    turn_prompt = len(json.dumps(turn["messages"]) + json.dumps(turn["tools"])) // 4
    assert spent.chat >= turn_prompt + len(summarized) // 4
