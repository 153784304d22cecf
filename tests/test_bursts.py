"""Bursts: one sender's messages to the bot within `bot.burst_ms` of each other are
answered once, as one message, each logged once, and a redelivery answers nothing."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import create_engine

from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage, Reply
from groupmate.testing.stub_llm import StubLLM
from tests import bots
from tests.http_harness import echo_bot


def make_bot(database_url: str, stub: StubLLM, burst_ms: int) -> Bot:
    return echo_bot(database_url, stub, burst_ms=burst_ms)


def said(
    words: str, n: int, sender: str = "ann", chat: str = "g1", **fields: Any
) -> IncomingMessage:
    return bots.chat_message(
        words,
        chat_id=chat,
        sender_id=sender,
        sender_name=sender.title(),
        message_id=f"{sender}-{n}",
        **fields,
    )


async def typed(bot: Bot, *messages: IncomingMessage, gap: float = 0.05) -> list[list[Reply]]:
    """The messages sent `gap` seconds apart, each handled as it comes."""

    async def one(index: int, message: IncomingMessage) -> list[Reply]:
        await asyncio.sleep(index * gap)
        return await bot.handle(message)

    return await asyncio.gather(*(one(i, m) for i, m in enumerate(messages)))


async def logged(bot: Bot, chat: str = "g1") -> list[str]:
    assert bot.chatlog is not None
    return [m.text for m in await bot.chatlog.recent(chat, 100)]


async def test_three_quick_messages_one_answer(database_url: str, stub: StubLLM) -> None:
    async with make_bot(database_url, stub, burst_ms=300) as bot:
        burst = [said("@groupmate hi", 1), said("@groupmate can you", 2), said("!check it", 3)]
        results = await typed(bot, *burst)
        assert [[r.text for r in replies] for replies in results] == [
            [],
            [],
            ["echo: hi\ncan you\ncheck it"],
        ]
        assert results[2][0].mentions == ("ann",)
        assert len(stub.requests) == 1
        # Each message logged once, the answer once, in order.
        assert await logged(bot) == [
            "@groupmate hi",
            "@groupmate can you",
            "!check it",
            "echo: hi\ncan you\ncheck it",
        ]
        # The model got the earlier messages once, in the question, not in the history too.
        assert stub.requests[0]["messages"][-1]["content"].startswith("hi\ncan you\ncheck it")
        assert not any(
            "can you" in str(m.get("content")) for m in stub.requests[0]["messages"][1:-1]
        )


async def test_a_redelivered_message_of_a_burst_is_not_answered_again(
    database_url: str, stub: StubLLM
) -> None:
    sent: list[list[str]] = []

    async def deliver(replies: list[Reply]) -> None:
        sent.append([reply.text for reply in replies])

    async with make_bot(database_url, stub, burst_ms=300) as bot:
        first, second, third = said("@groupmate a", 1), said("@groupmate b", 2), said("!c", 3)

        async def handled(message: IncomingMessage, after: float) -> list[Reply]:
            await asyncio.sleep(after)
            return await bot.handle(message, deliver)

        # The webhook retries the second message while the burst is still open.
        await asyncio.gather(
            handled(first, 0), handled(second, 0.05), handled(second, 0.1), handled(third, 0.15)
        )
        assert sent == [["echo: a\nb\nc"]]
        for again in (first, second, third):
            assert await bot.handle(again, deliver) == []
        assert sent == [["echo: a\nb\nc"]]
        assert len(stub.requests) == 1
        assert await logged(bot) == ["@groupmate a", "@groupmate b", "!c", "echo: a\nb\nc"]


async def test_others_are_not_held_up_and_bursts_are_per_sender(
    database_url: str, stub: StubLLM
) -> None:
    async with make_bot(database_url, stub, burst_ms=400) as bot:
        loop = asyncio.get_running_loop()
        done: dict[str, float] = {}

        async def timed(name: str, message: IncomingMessage, after: float) -> list[Reply]:
            await asyncio.sleep(after)
            replies = await bot.handle(message)
            done[name] = loop.time()
            return replies

        began = loop.time()
        ann, bob, other, ann2 = await asyncio.gather(
            timed("ann", said("@groupmate one", 1), 0),
            timed("bob", said("@groupmate mine", 1, sender="bob"), 0.05),
            timed("other chat", said("/reminders", 1, sender="cy", chat="g2"), 0.1),
            timed("ann again", said("@groupmate two", 2), 0.3),
        )
        assert [r.text for r in bob] == ["echo: mine"]
        assert ann == [] and [r.text for r in ann2] == ["echo: one\ntwo"]
        assert [r.text for r in other] == ["There are no active reminders in this chat."]
        assert done["other chat"] - began < 0.3  # a command is answered at once
        assert done["bob"] < done["ann again"] - 0.15  # Bob's burst is his own


async def test_a_command_or_a_reply_is_answered_on_its_own_after_the_burst(
    database_url: str, stub: StubLLM
) -> None:
    async with make_bot(database_url, stub, burst_ms=300) as bot:
        results = await typed(bot, said("@groupmate hi", 1), said("/reminders", 2))
        assert [[r.text for r in replies] for replies in results] == [
            [],
            ["echo: hi", "There are no active reminders in this chat."],
        ]
        about = said("@groupmate and this?", 4, reply_to_message_id="bob-1")
        results = await typed(bot, said("@groupmate hello", 3), about)
        assert [[r.text for r in replies] for replies in results] == [
            [],
            ["echo: hello", "echo: and this?"],
        ]


async def test_without_burst_ms_each_message_is_answered(database_url: str, stub: StubLLM) -> None:
    async with make_bot(database_url, stub, burst_ms=0) as bot:
        burst = [said("@groupmate hi", 1), said("@groupmate can you", 2), said("!check it", 3)]
        results = await typed(bot, *burst)
        assert [[r.text for r in replies] for replies in results] == [
            ["echo: hi"],
            ["echo: can you"],
            ["echo: check it"],
        ]
        assert len(stub.requests) == 3


async def test_an_adapter_that_hands_over_one_at_a_time_is_never_held_for_a_burst(
    database_url: str, stub: StubLLM
) -> None:
    """Telegram's and Matrix's queues wait for each answer before the next message: a
    burst can't gather there, so none is waited for (each is answered as it comes)."""
    async with make_bot(database_url, stub, burst_ms=300) as bot:
        first = said("@groupmate hi", 1, one_at_a_time=True)
        second = said("@groupmate can you", 2, one_at_a_time=True)
        results = await typed(bot, first, second)
        assert [[r.text for r in replies] for replies in results] == [
            ["echo: hi"],
            ["echo: can you"],
        ]


async def test_a_burst_whose_answer_was_cancelled_loses_no_message(
    database_url: str, stub: StubLLM
) -> None:
    """The handler answering the burst is cancelled (a client gone, a stop): the other
    messages of the burst are answered on their own, never dropped unlogged."""
    async with make_bot(database_url, stub, burst_ms=300) as bot:
        first = asyncio.create_task(bot.handle(said("@groupmate hi", 1)))
        await asyncio.sleep(0.05)
        last = asyncio.create_task(bot.handle(said("@groupmate can you", 2)))
        await asyncio.sleep(0.1)
        last.cancel()  # while the burst still gathers
        replies = await first
        assert [r.text for r in replies] == ["echo: hi"]
        assert "@groupmate hi" in await logged(bot)


async def test_a_burst_is_logged_as_it_comes_among_the_others(
    database_url: str, stub: StubLLM
) -> None:
    """Ann's two messages and Bob's between them stay in the order they were said; the
    model gets what was said up to Ann's last message, not what came after it."""
    async with make_bot(database_url, stub, burst_ms=300) as bot:
        results = await typed(
            bot,
            said("@groupmate hi", 1),
            said("lunch?", 1, sender="bob"),
            said("@groupmate can you", 2),
            said("after the question", 2, sender="bob"),
        )
        assert [[r.text for r in replies] for replies in results] == [
            [],
            [],
            ["echo: hi\ncan you"],
            [],
        ]
        assert await logged(bot) == [
            "@groupmate hi",
            "lunch?",
            "@groupmate can you",
            "after the question",
            "echo: hi\ncan you",
        ]
        sent = str(stub.requests[0]["messages"])
        assert "lunch?" in sent and "after the question" not in sent


async def test_a_burst_answer_that_fails_to_be_logged_leaves_every_message_unanswered(
    database_url: str, stub: StubLLM
) -> None:
    """The answer is logged against the last message, and the earlier ones are marked
    answered in the same transaction: when that write fails (here the database refuses
    the last message's mark), a redelivery of the burst is answered whole, not just its
    last message with the earlier ones lost."""
    refuse = (
        "CREATE TRIGGER refuse BEFORE UPDATE OF answered_at ON messages "
        "WHEN new.message_id = 'ann-3' BEGIN SELECT RAISE(ABORT, 'disk gone'); END"
    )
    if database_url.startswith("postgresql"):
        refuse = (
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'disk gone'; END $$; "
            "CREATE TRIGGER refuse BEFORE UPDATE OF answered_at ON messages FOR EACH ROW "
            "WHEN (new.message_id = 'ann-3') EXECUTE FUNCTION refuse()"
        )
    burst = [said("@groupmate a", 1), said("@groupmate b", 2), said("@groupmate c", 3)]
    async with make_bot(database_url, stub, burst_ms=300) as bot:
        engine = create_engine(database_url)
        with engine.begin() as connection:
            connection.exec_driver_sql(refuse)
        results = await typed(bot, *burst)
        assert results[:2] == [[], []]
        (failed,) = results[2]
        assert "echo" not in failed.text  # said it went wrong; nothing logged as answered
        with engine.begin() as connection:
            connection.exec_driver_sql(
                "DROP TRIGGER refuse" + (" ON messages" if "postgresql" in database_url else "")
            )
        engine.dispose()
        again = await typed(bot, *burst)  # the platform redelivers what was not answered
        assert [[r.text for r in replies] for replies in again] == [[], [], ["echo: a\nb\nc"]]


async def test_messages_in_a_thread_are_one_burst(database_url: str, stub: StubLLM) -> None:
    """In a Slack or Matrix thread every message names the thread's first one: that is
    where they were said, not a reply the sender picked, so they are joined as any are."""
    in_thread: dict[str, Any] = {"reply_to_message_id": "bob-1", "in_thread": True}
    async with make_bot(database_url, stub, burst_ms=300) as bot:
        results = await typed(
            bot, said("@groupmate hi", 1, **in_thread), said("@groupmate can you", 2, **in_thread)
        )
        assert [[r.text for r in replies] for replies in results] == [[], ["echo: hi\ncan you"]]
