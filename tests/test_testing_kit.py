"""The test kit for plugin authors (`groupmate.testing`), used as they would use it: the
real bot with a plugin defined here, the scripted model behind the real SDK, a SQLite
file, the fake clock, and what the bot sent on its own."""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel, Field

from groupmate import FunctionResult, MessageContext, Plugin, PluginStore, tool_function
from groupmate.testing import UNSCRIPTED_REPLY, BotFactory, FakeClock, TestBot
from groupmate.testing.stub_llm import earlier_chat

# --- a plugin of this module's own: what a plugin author's package would hold ----------

plugin = Plugin("tally")


class TallyArgs(BaseModel):
    word: str = Field(min_length=1, max_length=40, description="the word to count")


@tool_function(description="Count one more of a word in this chat.", command="tally")
async def tally(ctx: MessageContext, args: TallyArgs, store: PluginStore) -> FunctionResult:
    count = await store.update(args.word, lambda n: (n or 0) + 1)
    await store.global_.update("total", lambda n: (n or 0) + 1)
    return FunctionResult.direct(f"{args.word}: {count}")


@tool_function(description="How many of a word this chat counted, for the model to say.")
async def tally_read(ctx: MessageContext, args: TallyArgs, store: PluginStore) -> FunctionResult:
    return FunctionResult.for_model({"word": args.word, "count": await store.get(args.word, 0)})


THIS_MODULE = sys.modules[__name__]


# --- plugins ---------------------------------------------------------------------------


async def test_a_plugins_tool_called_by_the_model_and_by_its_command(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot(plugins=[THIS_MODULE])
    (status,) = [p for p in bot.plugins if p.name == "tally"]
    assert (status.state, status.tools) == ("loaded", ("tally", "tally_read"))

    bot.model.calls("tally", {"word": "tea"})
    assert await bot.say("count one more tea") == ["tea: 1"]  # a direct result: the turn ends
    assert "tally" in bot.model.offered_tools()
    assert await bot.say("/tally tea") == ["tea: 2"]  # the command: no model
    assert await bot.say("/tally tea", chat="group-2") == ["tea: 1"]  # per chat
    assert len(bot.model.requests) == 1

    bot.model.calls("tally_read", {"word": "tea"}).answers("Two teas so far.")
    assert await bot.say("how many teas?") == ["Two teas so far."]
    assert bot.model.tool_results() == [{"word": "tea", "count": 2}]  # what the model saw
    assert bot.model.pending == 0

    assert await bot.store("tally", chat="group-1").get("tea") == 2
    assert await bot.store("tally", chat="group-2").get("tea") == 1
    assert await bot.store("tally").get("total") == 3  # the plugin-wide store


async def test_the_config_narrows_a_plugin_and_bad_arguments_never_reach_it(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot(plugins=[{"module": THIS_MODULE.__name__, "tools": ["tally"]}])
    (status,) = [p for p in bot.plugins if p.name == "tally"]
    assert status.tools == ("tally",)
    (reply,) = await bot.say("/tally " + "x" * 41)
    assert reply == "word takes text of at most 40 characters."
    assert await bot.store("tally", chat="group-1").keys() == []


# --- built-in behaviour through the kit ----------------------------------------------


async def test_a_reminder_is_delivered_when_the_clock_reaches_it(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot()
    (confirmation,) = await bot.say("/remind me in 5 minutes to stretch")
    assert confirmation.startswith("⏰ Reminder #1 set for")
    assert await bot.advance(timedelta(minutes=4)) == []
    assert await bot.advance(timedelta(minutes=2)) == ["⏰ Reminder for @Alice: stretch"]
    (sent,) = bot.outbox
    assert (sent.chat_id, sent.mentions, sent.kind) == ("group-1", ("alice",), "reminder")
    assert await bot.advance(timedelta(days=1)) == []  # once only
    assert bot.sent == ["⏰ Reminder for @Alice: stretch"]
    assert bot.model.requests == []  # a command needs no model


async def test_advancing_days_delivers_each_occurrence_at_its_own_time(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot()  # the clock starts on Sat 21 Nov 2026 13:05 UTC
    (confirmation,) = await bot.say("/remind every day at 14:00 water the plants")
    assert "every day at 14:00" in confirmation
    delivered = await bot.advance(timedelta(days=2, hours=1))
    assert delivered == ["⏰ Reminder for @Alice: water the plants"] * 3
    assert [m.occurrence.day for m in bot.outbox if m.occurrence] == [21, 22, 23]
    assert bot.clock.now.isoformat() == "2026-11-23T14:05:00+00:00"


async def test_the_model_calls_a_built_in_tool(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot()
    await bot.say("/remind me in 1 hour to call Bob")
    bot.model.calls("reminder_list", {}).answers("never asked: the list answers directly")
    (listing,) = await bot.say("which reminders are set?")
    assert listing.startswith("Reminders in this chat (1, times in UTC):")
    assert "call Bob" in listing
    (request,) = bot.model.requests
    assert request["model"] == "groupmate-test-model"
    assert "reminder_list" in bot.model.offered_tools()
    assert bot.model.pending == 1  # the answer after a direct result is never asked for


async def test_a_message_with_no_reply_scripted_is_answered_at_once(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot()
    async with asyncio.timeout(10):
        assert await bot.say("hello?") == [UNSCRIPTED_REPLY]
    assert len(bot.model.unscripted) == 1
    bot.model.answers("Hi!")
    assert await bot.say("hello again") == ["Hi!"]
    assert len(bot.model.unscripted) == 1


async def test_messages_not_for_the_bot_are_read_not_answered(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot()
    assert await bot.say("I like green tea", sender="bob", mention=False) == []
    assert bot.model.requests == []
    bot.model.answers("Bob likes green tea.")
    assert await bot.say("what does Bob like?") == ["Bob likes green tea."]
    assert "Bob: I like green tea" in earlier_chat(bot.model.requests[-1])


async def test_admins_and_private_chats(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(config={"bot": {"admins": ["root"]}})
    bot.model.answers("Hello in private.")
    assert await bot.say("hi", sender="carol", private=True) == ["Hello in private."]
    (request,) = bot.model.requests
    assert "A private chat; the latest message is from Carol." in request["messages"][-1]["content"]
    # A group's time zone is its admins' to change: the platform's or the config's.
    refused = "Only a group admin can change this chat's time zone."
    assert await bot.say("/tz Europe/Berlin", sender="bob") == [refused]
    changed = await bot.say("/tz Europe/Berlin", sender="dave", admin=True)
    assert changed == ["🌍 This chat's time zone is now Europe/Berlin."]
    assert await bot.say("/tz Europe/Paris", sender="root") == [
        "🌍 This chat's time zone is now Europe/Paris."
    ]
    assert bot.app.reminders is not None
    assert await bot.app.reminders.timezone_of("group-1") == "Europe/Paris"


# --- without pytest fixtures ---------------------------------------------------------


async def test_the_test_bot_as_a_context_manager(tmp_path: Path) -> None:
    clock = FakeClock()
    start = clock.now
    config = {"bot": {"name": "helper", "timezone": "Europe/Berlin"}}
    async with TestBot(config=config, tmp_path=tmp_path, clock=clock) as bot:
        bot.model.answers("At your service.")
        assert await bot.say("@helper hi", mention=False) == ["At your service."]
        assert bot.config_data()["storage"]["url"] == f"sqlite:///{tmp_path / 'groupmate.db'}"
        assert bot.app.config.bot.timezone == "Europe/Berlin"
        server = bot.model.server
        await bot.say("/remind me in 2 minutes to breathe")
        assert await bot.advance(timedelta(minutes=2)) == ["⏰ Reminder for @Alice: breathe"]
        assert clock.now - start == timedelta(minutes=2)
    assert (tmp_path / "groupmate.db").exists()
    async with httpx.AsyncClient() as client:  # its own model server stopped with it
        with pytest.raises(httpx.ConnectError):
            await client.get(f"{server.base_url}/models")
