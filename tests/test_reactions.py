"""Reactions: a platform's reports of people's emoji on logged messages are kept once per
person and emoji, taken back, and gone with their message (retention, /forget); the
offline digest counts them. Through a real Bot on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import create_engine, text

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage, IncomingReaction
from tests import bots
from tests.conftest import FakeClock, eventually
from tests.digest_reading import engaged, line_of

START = datetime(2026, 11, 24, 1, 0, tzinfo=UTC)


def make_bot(database_url: str, clock: FakeClock, **storage: Any) -> Bot:
    return bots.make_bot(
        database_url, storage=storage, bot={"timezone": "Asia/Shanghai"}, clock=clock
    )


async def say(bot: Bot, sender: str, words: str, mid: str | None = None) -> list[str]:
    message = IncomingMessage(
        chat_id="g1",
        chat_type="group",
        sender_id=sender,
        sender_name=sender.title(),
        text=words,
        message_id=mid,
    )
    return [reply.text for reply in await bot.handle(message)]


def reaction(sender: str, mid: str, emoji: str = "👍", **fields: Any) -> IncomingReaction:
    return IncomingReaction(
        chat_id="g1", chat_type="group", sender_id=sender, message_id=mid, emoji=emoji, **fields
    )


def kept(database_url: str) -> list[tuple[str, str, str]]:
    engine = create_engine(database_url)
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT message_id, sender_id, emoji FROM reactions ORDER BY id")
        ).all()
    engine.dispose()
    return [(row[0], row[1], row[2]) for row in rows]


def digest_line(digest: str, words: str) -> str:
    return line_of(engaged(digest), words)


async def test_reactions_are_counted_once_taken_back_and_shown_in_the_digest(
    database_url: str, clock: FakeClock
) -> None:
    clock.set(START)
    async with make_bot(database_url, clock) as bot:
        await say(bot, "ann", "launch moved to friday", "m1")
        await say(bot, "bob", "which time?", "m2")
        for sender, emoji in (("bob", "👍"), ("cy", "👍"), ("cy", "🎉"), ("dee", "😕")):
            await bot.react(reaction(sender, "m1", emoji))
        await bot.react(reaction("bob", "m1"))  # the platform sent it again
        await bot.react(reaction("dee", "m1", "😕", added=False))  # taken back
        await bot.react(reaction("bob", "not-logged"))  # nothing to count it on
        await bot.react(IncomingReaction("g2", "group", "bob", "m1", "👍"))  # another chat
        clock.advance(timedelta(minutes=5))
        (digest,) = await say(bot, "ann", "/summary")
    assert digest_line(digest, "launch moved to friday").endswith("(👍 2 🎉 1)")
    assert "which time?" not in digest.split("💬")[1]  # no reply, no reaction
    assert kept(database_url) == [("m1", "bob", "👍"), ("m1", "cy", "👍"), ("m1", "cy", "🎉")]


async def test_a_reaction_taken_back_by_its_own_id(database_url: str, clock: FakeClock) -> None:
    """Matrix takes a reaction back by redacting its event: the id alone finds it."""
    clock.set(START)
    async with make_bot(database_url, clock) as bot:
        await say(bot, "ann", "lunch?", "m1")
        await bot.react(reaction("bob", "m1", reaction_id="$r1"))
        await bot.react(reaction("cy", "m1", reaction_id="$r2"))
        await bot.react(reaction("bob", "", "", added=False, reaction_id="$r1"))
    assert kept(database_url) == [("m1", "cy", "👍")]


async def test_reactions_go_with_their_messages(database_url: str, clock: FakeClock) -> None:
    """/forget me takes the sender's reactions and those to their messages; /forget all
    the chat's; a message pruned by retention (count or age) takes its reactions."""
    clock.set(START)
    async with make_bot(database_url, clock) as bot:
        await say(bot, "ann", "first", "m1")
        await say(bot, "bob", "second", "m2")
        await bot.react(reaction("bob", "m1"))  # to Ann's
        await bot.react(reaction("ann", "m2"))  # Ann's own
        await bot.react(reaction("cy", "m2"))
        await say(bot, "ann", "/forget me")
        assert (await say(bot, "ann", "yes"))[0].startswith("🗑")
        assert kept(database_url) == [("m2", "cy", "👍")]
        clock.advance(timedelta(days=29))
        await bot.react(reaction("bob", "m2", "🎉"))  # late, to a message about to age out
        clock.advance(timedelta(days=2))  # past retention (30 days): "second" goes
        await say(bot, "cy", "a month later", "m9")
        await bot.react(reaction("ann", "m9"))
        assert bot.chatlog is not None
        assert await bot.chatlog.prune_expired(clock()) >= 1
        assert kept(database_url) == [("m9", "ann", "👍")]


async def test_retention_by_count_takes_the_reactions_of_what_it_prunes(
    database_url: str, clock: FakeClock
) -> None:
    clock.set(START)
    retention = {"max_messages_per_chat": 100}
    data = {"storage": {"url": database_url}, "bot": {"retention": retention}}
    async with Bot(parse_config(data, environ={}), clock=clock) as bot:
        await say(bot, "ann", "the oldest", "m0")
        await bot.react(reaction("bob", "m0"))
        for n in range(1, 101):  # the log keeps 100: "the oldest" goes
            await say(bot, "cy", f"message {n}", f"m{n}")
        await bot.react(reaction("bob", "m100"))

        async def pruned() -> bool:
            return kept(database_url) == [("m100", "bob", "👍")]

        await eventually(pruned, within=10)


async def test_forget_all_takes_the_chats_reactions(database_url: str, clock: FakeClock) -> None:
    clock.set(START)
    async with make_bot(database_url, clock) as bot:
        await say(bot, "ann", "hello", "m1")
        await bot.react(reaction("bob", "m1"))
        await bot.react(IncomingReaction("g2", "group", "bob", "x", "👍"))  # no such message
        admin = IncomingMessage("g1", "group", "boss", "Boss", "/forget all", sender_is_admin=True)
        await bot.handle(admin)
        yes = IncomingMessage("g1", "group", "boss", "Boss", "yes", sender_is_admin=True)
        assert (await bot.handle(yes))[0].text.startswith("🗑")
    assert kept(database_url) == []
