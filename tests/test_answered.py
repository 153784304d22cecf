"""The answered mark: a redelivered message whose answer a crash lost is answered, once."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text as text_sql

from bot.app import Bot
from bot.config import parse_config
from bot.messages import IncomingMessage
from storage import Database, upgrade
from storage.chatlog import ChatLog, Seen
from tests.conftest import eventually
from tests.stub_llm import StubLLM, text


def make_bot(database_url: str, stub: StubLLM) -> Bot:
    data: dict[str, Any] = {
        "storage": {"url": database_url},
        "llm": {"base_url": stub.base_url, "api_key": "sk-test"},
        "bot": {"rate_limits": {"user_per_minute": 1000, "burst": 100}},
    }
    return Bot(parse_config(data, environ={}))


def message(text: str, message_id: str = "m1") -> IncomingMessage:
    return IncomingMessage(
        chat_id="g1",
        chat_type="group",
        sender_id="u1",
        sender_name="Ann",
        text=text,
        message_id=message_id,
    )


async def test_a_message_whose_answer_a_crash_lost_is_answered_on_redelivery(
    database_url: str, stub: StubLLM
) -> None:
    stub.fallback = text("too late", delay=5)  # the model hangs while the process dies
    first = make_bot(database_url, stub)
    async with first:
        handling = asyncio.create_task(first.handle(message("@groupmate hello")))
        await eventually(lambda: len(stub.requests) == 1)  # logged, the model asked
        handling.cancel()  # stopped hard: nothing after this point runs
        with pytest.raises(asyncio.CancelledError):
            await handling
    stub.fallback = text("hi Ann")
    second = make_bot(database_url, stub)
    async with second:
        replies = await second.handle(message("@groupmate hello"))  # the redelivery
        assert [r.text for r in replies] == ["hi Ann"]
        assert await second.handle(message("@groupmate hello")) == []  # now answered
    assert len(stub.requests) == 2


async def test_an_answered_message_is_not_answered_again_after_a_restart(
    database_url: str, stub: StubLLM, caplog: pytest.LogCaptureFixture
) -> None:
    stub.fallback = text("hi Ann")
    async with make_bot(database_url, stub) as bot:
        assert [r.text for r in await bot.handle(message("@groupmate hello"))] == ["hi Ann"]
    async with make_bot(database_url, stub) as bot:
        with caplog.at_level(logging.INFO, logger="bot.router"):
            assert await bot.handle(message("@groupmate hello")) == []
    assert len(stub.requests) == 1
    assert "seen before" in caplog.text


async def test_a_duplicate_racing_the_first_delivery_is_answered_once(
    database_url: str, stub: StubLLM
) -> None:
    stub.fallback = text("hi Ann", delay=0.5)
    async with make_bot(database_url, stub) as bot:
        first = asyncio.create_task(bot.handle(message("@groupmate hello")))
        await eventually(lambda: len(stub.requests) == 1)
        # The webhook retry is dropped at once, not queued behind the first delivery.
        assert await bot.handle(message("@groupmate hello")) == []
        assert not first.done()
        assert [r.text for r in await first] == ["hi Ann"]
    assert len(stub.requests) == 1


async def test_a_group_message_not_for_the_bot_is_not_handled_again(
    database_url: str, stub: StubLLM, caplog: pytest.LogCaptureFixture
) -> None:
    async with make_bot(database_url, stub) as bot:
        assert await bot.handle(message("just chatting")) == []
    async with make_bot(database_url, stub) as bot:
        with caplog.at_level(logging.INFO, logger="bot.router"):
            assert await bot.handle(message("just chatting")) == []
        assert bot.chatlog is not None
        assert await bot.chatlog.count("g1") == 1
    assert "seen before" in caplog.text
    assert "never answered" not in caplog.text


async def test_messages_logged_before_the_mark_existed_count_as_answered(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'bot.db'}")
    upgrade(database, "0004")
    with database.write_session() as session:
        session.execute(
            text_sql(
                "INSERT INTO messages (chat_id, message_id, sender_id, sender_name, text,"
                " from_bot, created_at) VALUES ('g1', 'm1', 'u1', 'Ann', '@groupmate hi',"
                " false, '2026-11-20 10:00:00')"
            )
        )
    upgrade(database)
    chatlog = ChatLog(database, max_age=timedelta(days=30))
    redelivered = await chatlog.append(
        "g1",
        message_id="m1",
        sender_id="u1",
        sender_name="Ann",
        text="@groupmate hi",
        at=datetime.now(UTC),
    )
    assert redelivered is Seen.ANSWERED
    database.close()
