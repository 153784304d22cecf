"""The answered mark: a redelivered message whose answer a crash lost is answered, once."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text as text_sql

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage, Reply
from groupmate.storage import Database, SendError, upgrade
from groupmate.storage.chatlog import ChatLog, LogEntry, Seen
from groupmate.testing.stub_llm import StubLLM, text
from tests import bots
from tests.conftest import eventually


def make_bot(database_url: str, stub: StubLLM) -> Bot:
    rate_limits = {"user_per_minute": 1000, "burst": 100}
    return bots.make_bot(database_url, stub, bot={"rate_limits": rate_limits})


def message(text: str, message_id: str = "m1") -> IncomingMessage:
    return bots.chat_message(text, message_id=message_id)


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
        with caplog.at_level(logging.INFO, logger="groupmate.bot.router"):
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
    database_url: str, stub: StubLLM
) -> None:
    async with make_bot(database_url, stub) as bot:
        assert await bot.handle(message("just chatting")) == []
    async with make_bot(database_url, stub) as bot:
        assert bot.chatlog is not None
        assert await bot.chatlog.count("g1") == 1  # written before the first bot closed
        assert await bot.handle(message("just chatting")) == []  # the redelivery
        assert await bot.chatlog.count("g1") == 1
        assert bot.reminders is not None
        with bot.reminders.database.read_session() as session:
            marks = session.execute(text_sql("SELECT answered_at, delivered_at FROM messages"))
            assert all(None not in row for row in marks)  # done with: never handled again
    assert stub.requests == []


@pytest.mark.parametrize(
    ("revision", "columns", "values"),
    [
        # Logged before the answered mark existed: dealt with under the old rule.
        ("0004", "", ""),
        # Answered before the delivered mark existed: sent under the old rule.
        ("0005", ", answered_at", ", '2026-11-20 10:00:01'"),
    ],
)
async def test_messages_from_before_a_mark_existed_count_as_answered(
    tmp_path: Path, revision: str, columns: str, values: str
) -> None:
    database = Database(f"sqlite:///{tmp_path / 'bot.db'}")
    upgrade(database, revision)
    with database.write_session() as session:
        session.execute(
            text_sql(
                "INSERT INTO messages (chat_id, message_id, sender_id, sender_name, text,"
                f" from_bot, created_at{columns}) VALUES ('g1', 'm1', 'u1', 'Ann',"
                f" '@groupmate hi', false, '2026-11-20 10:00:00'{values})"
            )
        )
    upgrade(database)
    chatlog = ChatLog(database, max_age=timedelta(days=30))
    redelivered = await chatlog.append(
        "g1", LogEntry("m1", "u1", "Ann", "@groupmate hi", datetime.now(UTC))
    )
    assert redelivered is Seen.ANSWERED
    database.close()


class Platform:
    """An adapter's `deliver`: records what reached the platform, or fails like a
    platform that is down."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.down = False

    async def deliver(self, replies: list[Reply]) -> None:
        if self.down:
            raise SendError("the platform is unreachable")
        self.sent.extend(reply.text for reply in replies)


async def test_an_answer_not_delivered_is_resent_on_redelivery_not_decided_again(
    database_url: str, stub: StubLLM
) -> None:
    platform = Platform()
    platform.down = True
    async with make_bot(database_url, stub) as bot:
        with pytest.raises(SendError):
            await bot.handle(message("/remind in 1 hour tea"), platform.deliver)
        assert platform.sent == []
    platform.down = False
    async with make_bot(database_url, stub) as bot:  # restarted; the platform redelivers
        replies = await bot.handle(message("/remind in 1 hour tea"), platform.deliver)
        assert bot.reminders is not None
        stored, total = await bot.reminders.list_for_chat("g1")
        # The logged answer went out; the command did not run a second time.
        assert total == 1 and stored[0].content == "tea"
        assert [r.text for r in replies] == platform.sent
        assert len(platform.sent) == 1 and f"#{stored[0].short_id}" in platform.sent[0]
        # Delivered now: a further redelivery is ignored.
        assert await bot.handle(message("/remind in 1 hour tea"), platform.deliver) == []
    assert len(platform.sent) == 1


async def test_a_crash_while_sending_resends_the_same_answer_after_restart(
    database_url: str, stub: StubLLM
) -> None:
    stub.fallback = text("hi Ann")
    sending = asyncio.Event()

    async def hangs(replies: list[Reply]) -> None:
        sending.set()
        await asyncio.sleep(30)  # the platform is slow while the process dies

    async with make_bot(database_url, stub) as bot:
        handling = asyncio.create_task(bot.handle(message("@groupmate hello"), hangs))
        await asyncio.wait_for(sending.wait(), 5)
        handling.cancel()
        with pytest.raises(asyncio.CancelledError):
            await handling
    stub.fallback = text("a different answer")
    platform = Platform()
    async with make_bot(database_url, stub) as bot:
        await bot.handle(message("@groupmate hello"), platform.deliver)
    assert platform.sent == ["hi Ann"]
    assert len(stub.requests) == 1  # the model was asked once


async def test_a_delivered_answer_is_logged_once_in_the_history(
    database_url: str, stub: StubLLM
) -> None:
    stub.fallback = text("hi Ann")
    platform = Platform()
    async with make_bot(database_url, stub) as bot:
        await bot.handle(message("@groupmate hello"), platform.deliver)
        await bot.handle(message("@groupmate hello"), platform.deliver)
        assert bot.chatlog is not None
        logged = await bot.chatlog.recent("g1", 10)
    assert [(m.from_bot, m.text) for m in logged] == [
        (False, "@groupmate hello"),
        (True, "hi Ann"),
    ]
    assert platform.sent == ["hi Ann"]


async def test_a_limited_message_is_answered_and_counts_as_delivered(
    database_url: str, stub: StubLLM
) -> None:
    data: dict[str, Any] = {
        "storage": {"url": database_url},
        "bot": {"rate_limits": {"command_per_minute": 1, "command_burst": 1}},
    }
    platform = Platform()
    async with Bot(parse_config(data, environ={})) as bot:
        for number in range(4):
            await bot.handle(message("/reminders", f"m{number}"), platform.deliver)
        assert bot.chatlog is not None
        # Each was answered or refused, and none is left waiting to be resent.
        for number in range(4):
            seen = await bot.chatlog.append(
                "g1", LogEntry(f"m{number}", "u1", "Ann", "/reminders", datetime.now(UTC))
            )
            assert seen is Seen.ANSWERED
    # The answer, then each limited message's notice, once each: none dropped.
    assert len(platform.sent) == 4 and all(text.startswith("⏳") for text in platform.sent[1:])
