"""The embedding API and router details: retention, ordering per chat, correlation ids."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from groupmate.bot.app import Bot
from groupmate.bot.logs import new_correlation_id, setup_logging
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.handlers.summary import asks_about_the_chat, summarize
from groupmate.storage import OutgoingMessage
from groupmate.testing.stub_llm import Reply, StubLLM, calls, earlier_chat, latest_message, text
from tests import bots
from tests.conftest import eventually


def make_bot(tmp_path: Path, **sections: Any) -> Bot:
    return bots.make_bot(tmp_path, **sections)


def message(text: str, n: int, chat: str = "g1", **fields: Any) -> IncomingMessage:
    return bots.chat_message(text, **{"chat_id": chat, "message_id": f"m{n}", **fields})


async def test_retention_keeps_the_newest_messages(tmp_path: Path) -> None:
    bot = make_bot(tmp_path, bot={"retention": {"max_messages_per_chat": 150, "max_days": 30}})
    async with bot:
        for n in range(300):
            assert await bot.handle(message(f"chatter {n}", n)) == []
        log = bot.chatlog
        assert log is not None
        assert await log.count("g1") <= 250  # pruned every 100 messages down to 150
        newest = await log.recent("g1", 1)
        assert newest[0].text == "chatter 299"
        oldest_kept = (await log.recent("g1", 1000))[0].text
        assert oldest_kept != "chatter 0"


def _slow_first_step(body: dict[str, Any]) -> Reply:
    step = latest_message(body).rsplit(" ", 1)[-1]
    # The first message takes longest: handled side by side, the later ones overtake it.
    return text(f"answer {step}", delay=0.5 if step == "0" else 0.0)


async def test_one_chat_in_order_many_chats_at_once(tmp_path: Path, stub: StubLLM) -> None:
    stub.fallback = text("ok", delay=0.5)
    bot = make_bot(
        tmp_path,
        llm={"base_url": stub.base_url, "api_key": "sk-test"},
        bot={"rate_limits": {"user_per_minute": 1000, "burst": 100}},
    )
    async with bot:
        loop = asyncio.get_running_loop()
        began = loop.time()
        chats = [bot.handle(message(f"@groupmate q{n}", n, chat=f"chat-{n}")) for n in range(10)]
        await asyncio.gather(*chats)
        # Ten chats in parallel, not one after another (10 x 0.5 s): the margin is wide
        # enough for a loaded machine (1.8 s seen with 0.2 s each).
        assert loop.time() - began < 3.0
        stub.requests.clear()
        stub.fallback = _slow_first_step
        same_chat = [bot.handle(message(f"@groupmate step {n}", 100 + n)) for n in range(3)]
        await asyncio.gather(*same_chat)
        assert bot.chatlog is not None
        logged = [m.text for m in await bot.chatlog.recent("g1", 10)]
    assert logged == [
        "@groupmate step 0",
        "answer 0",
        "@groupmate step 1",
        "answer 1",
        "@groupmate step 2",
        "answer 2",
    ]
    asked = [latest_message(r) for r in stub.requests]
    assert [a.rsplit(" ", 1)[-1] for a in asked] == ["0", "1", "2"]
    # Each message was handled after the previous answer: it is in the model's history.
    for step, request in enumerate(stub.requests[1:], 1):
        assert f"groupmate: answer {step - 1}" in earlier_chat(request)


async def test_outgoing_messages_go_to_the_callback(tmp_path: Path) -> None:
    delivered: list[OutgoingMessage] = []

    async def callback(outgoing: OutgoingMessage) -> None:
        delivered.append(outgoing)

    bot = make_bot(tmp_path)
    bot.on_outgoing(callback)
    async with bot:
        await bot.outbound(OutgoingMessage(chat_id="g1", text="hello", kind="notice"))
        await bot.handle(message("dup", 1))
        await bot.handle(message("dup", 1))  # a redelivery: logged once
        assert bot.chatlog is not None
        logged = [m.text for m in await bot.chatlog.recent("g1", 10)]
    assert [m.text for m in delivered] == ["hello"]
    assert logged.count("dup") == 1


def test_log_lines_carry_the_message_correlation_id(capsys: pytest.CaptureFixture[str]) -> None:
    setup_logging("INFO")
    try:
        cid = new_correlation_id()
        logging.getLogger("bot.test").info("handled")
        assert f"cid={cid} handled" in capsys.readouterr().err
    finally:
        logging.getLogger().handlers.clear()
        logging.getLogger().setLevel(logging.WARNING)


async def test_quiet_chats_lose_messages_past_retention_at_startup(tmp_path: Path) -> None:
    old = datetime.now(UTC) - timedelta(days=90)
    async with make_bot(tmp_path) as bot:
        for n in range(5):
            await bot.handle(message(f"old {n}", n, timestamp=old))
    async with make_bot(tmp_path) as bot:
        chatlog = bot.chatlog
        assert chatlog is not None

        async def pruned() -> bool:
            return await chatlog.count("g1") == 0

        await eventually(pruned)  # the retention sweep runs at startup, in the background


async def test_naive_timestamps_and_nul_bytes_are_fine(tmp_path: Path) -> None:
    async with make_bot(tmp_path) as bot:
        naive = datetime(2026, 11, 21, 10, 0)
        assert await bot.handle(message("hi all", 1, timestamp=naive)) == []
        assert await bot.handle(message("a\x00b", 2)) == []
        assert bot.chatlog is not None
        assert [m.text for m in await bot.chatlog.recent("g1", 5)] == ["hi all", "ab"]


async def test_commands_for_another_bot_are_ignored(tmp_path: Path) -> None:
    async with make_bot(tmp_path) as bot:
        assert await bot.handle(message("/help@otherbot", 1)) == []
        (reply,) = await bot.handle(message("/help@groupmate", 2))
        assert "/remind <when> <what>" in reply.text


class _Verbose:
    """A stand-in model that always writes long partial summaries."""

    def __init__(self) -> None:
        self.calls = 0
        self.in_flight = 0
        self.most_in_flight = 0

    async def complete_text(self, system: str, user: str) -> str:
        self.calls += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(0)
        self.in_flight -= 1
        return "x" * 7000


async def test_summaries_stay_bounded_whatever_the_model_writes() -> None:
    model = _Verbose()
    lines = [f"[Mon 10:{n % 60:02d}] U: " + "word " * 200 for n in range(2000)]
    result = await summarize(model, lines)
    assert result
    assert model.calls < 100
    assert model.most_in_flight <= 4


@pytest.mark.parametrize("small_talk", ["good morning!", "早上好", "what's 12 times 3?"])
async def test_a_summary_the_message_did_not_ask_for_is_sent_back(
    tmp_path: Path, stub: StubLLM, small_talk: str
) -> None:
    # Measured on a 1.5B model: "good morning" became a summary call.
    stub.script(calls(("summary", {})), text("Good morning to you too!"))
    bot = make_bot(tmp_path, llm={"base_url": stub.base_url, "api_key": "sk-test"})
    async with bot:
        await bot.handle(message("we meet at noon", 1, sender_id="u2", sender_name="Bo"))
        replies = await bot.handle(message(f"@groupmate {small_talk}", 2))
    assert [reply.text for reply in replies] == ["Good morning to you too!"]
    report = json.dumps(stub.requests[1]["messages"][-1], ensure_ascii=False)
    assert "does not ask about the conversation" in report


@pytest.mark.parametrize(
    "asks",
    [
        "summarize what was said",
        "tl;dr of the chat?",
        "can you sum up the discussion?",
        "what did I miss?",
        "catch me up",
        "总结一下刚才的聊天",
        "帮我总结一下大家说了什么",
        "刚才你们聊了什么",
    ],
)
def test_the_words_that_ask_for_a_summary(asks: str) -> None:
    assert asks_about_the_chat(asks)


@pytest.mark.parametrize(
    ("said", "replied", "words"),
    [
        (
            "summarize this https://news.example/a",
            "",
            "call read_url with url='https://news.example/a'",
        ),
        ("summarize this", "look https://news.example/a", "call read_url with url="),
        ("总结一下这个", "https://news.example/a", "call read_url"),
        ("what did I miss?", "look https://news.example/a", None),
        ("summarize what we discussed about https://news.example/a", "", None),
        ("总结一下大家聊了什么", "https://news.example/a", None),
    ],
)
def test_a_summary_is_not_a_links_summary(said: str, replied: str, words: str | None) -> None:
    from pydantic import ValidationError

    from groupmate.function_calls.context import MESSAGE_CONTEXT_KEY
    from groupmate.function_calls.handlers.summary import SummaryArgs
    from tests.conftest import make_ctx

    ctx = make_ctx(text=said, reply_text=replied)
    if words is None:
        SummaryArgs.model_validate({}, context={MESSAGE_CONTEXT_KEY: ctx})
        return
    with pytest.raises(ValidationError, match=re.escape(words)):
        SummaryArgs.model_validate({}, context={MESSAGE_CONTEXT_KEY: ctx})
