"""Slash commands that tools declare: `@tool_function(command="weather")` makes
`/weather Berlin` work without a model, through the same invoker (validation, policy,
audit), with free text or key=value pairs, listed in /help."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field

from groupmate.bot.app import Bot
from groupmate.bot.command_fields import CommandWordsError
from groupmate.bot.messages import IncomingMessage
from groupmate.bot.tool_commands import ToolCommand
from groupmate.function_calls import (
    FunctionResult,
    MessageContext,
    ToolDefinitionError,
    ToolRegistry,
    build_tool,
)
from groupmate.function_calls.handlers import builtin_tools
from groupmate.storage.audit import AuditQuery
from tests import bots


class WeatherArgs(BaseModel):
    city: str = Field(min_length=1, max_length=80, description="the city")
    days: int = Field(1, ge=1, le=7, description="how many days")


class DiceArgs(BaseModel):
    sides: int = Field(6, ge=2, le=100)
    count: int = Field(1, ge=1, le=10)
    loud: bool = False


NOW = datetime(2026, 11, 28, 10, 0, tzinfo=UTC)


def registry() -> ToolRegistry:
    tools = ToolRegistry()

    @tools.tool(description="The weather in a city.", command="weather", effect="external")
    async def weather(ctx: MessageContext, args: WeatherArgs) -> FunctionResult:
        return FunctionResult.direct(f"{args.city}: sunny for {args.days} day(s).")

    @tools.tool(description="Roll dice.", command="dice")
    async def dice(ctx: MessageContext, args: DiceArgs) -> FunctionResult:
        total = args.sides * args.count  # a loaded die: the test knows the answer
        return FunctionResult.direct(
            f"{args.count}d{args.sides}: {total}{'!' if args.loud else ''}"
        )

    @tools.tool(description="Clashes with a built-in command.", command="remind")
    async def shadow(ctx: MessageContext) -> FunctionResult:
        return FunctionResult.direct("shadowed")

    return builtin_tools().merged(tools)


def message(text: str, sender: str = "u-alice") -> IncomingMessage:
    return bots.chat_message(text, sender_id=sender, sender_name="Alice")


async def said(bot: Bot, text: str) -> str:
    return "\n".join(reply.text for reply in await bot.handle(message(text)))


def make_bot(tmp_path: Path, **sections: Any) -> Bot:
    return bots.make_bot(tmp_path, registry=registry(), **sections)


async def test_a_tools_command_runs_it_without_a_model(tmp_path: Path) -> None:
    async with make_bot(tmp_path) as bot:
        assert await said(bot, "/weather Berlin") == "Berlin: sunny for 1 day(s)."
        assert await said(bot, "/weather city=Oslo days=3") == "Oslo: sunny for 3 day(s)."
        assert await said(bot, "/weather New York") == "New York: sunny for 1 day(s)."
        assert await said(bot, "/dice") == "1d6: 6"
        assert await said(bot, "/dice sides=20 count=2 loud=yes") == "2d20: 40!"
        assert await said(bot, "/dice sides=1") == (
            "“1” doesn't fit sides: it takes a whole number from 2 to 100."
        )
        assert await said(bot, "/dice lots") == (
            "Usage: /dice [sides=2–100] [count=1–10] [loud=yes|no]"
        )
        # The built-in command keeps its name; the clashing tool's command is left out.
        assert (await said(bot, "/remind in 10 minutes tea")).startswith("⏰")
        help_text = await said(bot, "/help")
        # After the built-in tools' own commands (/catchup…), the plugins'.
        listed = [line.split(":")[0] for line in help_text.splitlines()]
        assert listed[-3:-1] == [
            "• /weather <city> [days=1–7]",
            "• /dice [sides=2–100] [count=1–10] [loud=yes|no]",
        ]
        assert bot.audit is not None
        rows = await bot.audit.page(AuditQuery(chat_id="g1", tool="weather"))
        assert [(r.source, r.arguments["city"]) for r in rows] == [
            ("command", "New York"),
            ("command", "Oslo"),
            ("command", "Berlin"),
        ]


async def test_the_policy_and_switches_apply_to_tool_commands(tmp_path: Path) -> None:
    async with make_bot(tmp_path, tools={"policy": {"dice": {"who": "admins"}}}) as bot:
        assert await said(bot, "/dice") == "Sorry, that isn't available to you in this chat."
        assert "/dice" not in await said(bot, "/help")


def test_command_words_and_names() -> None:
    tools = {tool.name: tool for tool in registry()}
    weather = ToolCommand("weather", tools["weather"])
    assert weather.usage() == "/weather <city> [days=1–7]"
    with pytest.raises(CommandWordsError, match=r"^Usage: /weather <city> \[days=1–7\]$"):
        weather.arguments("", now=NOW)  # a required argument, and no words: say how
    assert weather.arguments('city="Rio de Janeiro"', now=NOW) == {"city": "Rio de Janeiro"}
    assert weather.arguments("it's raining=yes", now=NOW) == {"city": "it's raining=yes"}
    assert weather.arguments("Rio de Janeiro days=3", now=NOW) == {
        "city": "Rio de Janeiro",
        "days": 3,
    }
    dice = ToolCommand("dice", tools["dice"])
    assert dice.arguments("", now=NOW) == {}  # nothing required: the defaults
    with pytest.raises(CommandWordsError, match=r"^“x” doesn't fit sides"):
        dice.arguments("sides=x", now=NOW)
    with pytest.raises(CommandWordsError, match=r"^Usage: /dice"):
        dice.arguments("twenty", now=NOW)  # two number fields, none required: which?

    async def handler(ctx: MessageContext) -> str:
        return ""

    for bad in ("Weather", "1dice", "we ather", "x" * 33):
        with pytest.raises(ToolDefinitionError, match="command"):
            build_tool(handler, name="bad", description="Bad.", command=bad)


async def test_a_commands_number_out_of_range_is_said_in_words(tmp_path: Path) -> None:
    async with make_bot(tmp_path) as bot:
        assert await said(bot, "/budget 5") == (
            "A chat's budget is 1,000 to 100,000,000 tokens a day."
        )
        assert await said(bot, "/snooze 8d") == "A snooze can be 1 minute to a week."
        assert await said(bot, "/history 99") == (
            "/history shows 1 to 50 entries, e.g. /history 20"
        )
        assert await said(bot, "/summary 0") == "/summary reads the last 1 to 2,000 messages."
