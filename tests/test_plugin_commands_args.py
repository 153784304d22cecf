"""The poll plugin written the new way, through the test kit: `/poll` takes a question
and a list, `/vote 2` a bare number, the model calls the same tools, and a word that
doesn't fit is answered in words. A handler reading its own words gets them untouched
(`CommandText`), and a command-only tool is no "ask me" example in /help."""

from __future__ import annotations

import sys

import pytest
from pydantic import BaseModel, Field

from groupmate import (
    CommandText,
    FunctionResult,
    MessageContext,
    Plugin,
    PluginStore,
    ToolDefinitionError,
    ToolError,
    build_tool,
    tool_function,
)
from groupmate.testing import BotFactory

THIS_MODULE = sys.modules[__name__]
plugin = Plugin("polls")


class PollArgs(BaseModel):
    question: str = Field(min_length=1, max_length=200, description="What the poll asks")
    options: list[str] = Field(min_length=2, max_length=10, description="The answers")


@tool_function(description="Start a poll in this chat.", command="poll")
async def poll(args: PollArgs, store: PluginStore) -> FunctionResult:
    await store.set("poll", {"question": args.question, "options": args.options})
    await store.set("votes", {})
    numbered = [f"{n}. {option}" for n, option in enumerate(args.options, 1)]
    return FunctionResult.direct("\n".join([args.question, *numbered]))


class VoteArgs(BaseModel):
    option: int = Field(ge=1, le=10, description="The number of the answer")


@tool_function(description="Vote in this chat's poll.", command="vote", examples=["I vote for 2"])
async def vote(ctx: MessageContext, args: VoteArgs, store: PluginStore) -> FunctionResult:
    current = await store.get("poll")
    if not isinstance(current, dict):
        raise ToolError("There is no poll in this chat. Start one with /poll.")
    options = current["options"]
    if args.option > len(options):
        raise ToolError(f"Pick a number from 1 to {len(options)}.")
    votes = await store.get("votes", {})
    assert isinstance(votes, dict)
    await store.set("votes", {**votes, ctx.sender_id: args.option})
    return FunctionResult.direct(f"{ctx.sender_name}, you voted for {options[args.option - 1]}.")


@tool_function(
    description="Show the poll's votes.",
    command="results",
    effect="read",
    for_model=False,
    examples=["how is the poll going"],
)
async def results(store: PluginStore) -> FunctionResult:
    votes = await store.get("votes", {})
    assert isinstance(votes, dict)
    return FunctionResult.direct(f"{len(votes)} vote(s).")


@tool_function(description="Roll dice written as 2d6.", command="roll")
async def roll(words: CommandText) -> FunctionResult:
    count, _, sides = words.partition("d")
    if not (count.isdigit() and sides.isdigit()):
        raise ToolError("Write the dice as 2d6.")
    return FunctionResult.direct(f"{words!r}: {int(count) * int(sides)} at most.")


PLUGIN = THIS_MODULE


async def test_bare_vote_and_a_list_argument(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(plugins=[PLUGIN])
    assert await bot.say('/poll "Lunch?" pizza, sushi, ramen') == [
        "Lunch?\n1. pizza\n2. sushi\n3. ramen"
    ]
    assert await bot.say("/vote 2") == ["Alice, you voted for sushi."]
    assert await bot.say("/vote option=3", sender="bob") == ["Bob, you voted for ramen."]
    store = bot.store("polls", chat="group-1")
    assert await store.get("votes") == {"alice": 2, "bob": 3}
    assert await bot.say("/poll 午饭？ 饺子，面条") == [
        '用法：/poll "<question>" <options：a, b, …>'
    ]
    assert await bot.say("/poll “午饭？” 饺子，面条") == ["午饭？\n1. 饺子\n2. 面条"]


async def test_a_misfit_value_is_answered_in_words(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(plugins=[PLUGIN])
    await bot.say('/poll "Lunch?" pizza | sushi')
    assert await bot.say("/vote sushi") == [
        "“sushi” doesn't fit option: it takes a whole number from 1 to 10."
    ]
    assert await bot.say("/vote 投寿司") == ["“投寿司”不适合 option：需要1 到 10 的整数。"]
    # The tool's own refusal, its full stop kept and not doubled.
    assert await bot.say("/vote 3") == ["That didn't work: Pick a number from 1 to 2."]
    assert await bot.say('/poll "Lunch?" pizza') == [
        "options takes 2 to 10 items, separated by commas: a, b"
    ]
    assert await bot.say("/vote") == ["Usage: /vote <option: 1–10>"]


async def test_the_model_calls_the_same_tools(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(plugins=[PLUGIN])
    bot.model.calls("poll", {"question": "Lunch?", "options": ["pizza", "sushi"]})
    assert await bot.say("start a poll: lunch, pizza or sushi") == ["Lunch?\n1. pizza\n2. sushi"]
    offered = bot.model.offered_tools()
    assert "poll" in offered and "results" not in offered and "roll" not in offered


async def test_help_lists_the_generated_usage_and_no_command_only_example(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot(plugins=[PLUGIN])
    (help_,) = await bot.say("/help")
    lines = help_.splitlines()
    assert '• /poll "<question>" <options: a, b, …>: Start a poll in this chat' in lines
    assert "• /vote <option: 1–10>: Vote in this chat's poll" in lines
    assert "• /results: Show the poll's votes" in lines
    # With the built-in families off, the plugin's plain examples are all /help shows:
    # the command-only tool's is none of them (plain words never reach it).
    families = ("reminders", "search", "links", "summary", "timezone", "budget", "memory")
    bare = await groupmate_bot(
        plugins=[PLUGIN], config={"builtins": dict.fromkeys(families, False)}
    )
    (help_,) = await bare.say("/help")
    assert "how is the poll going" not in help_
    assert "• I vote for 2" in help_.splitlines()


async def test_a_handler_reads_its_own_words(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(plugins=[PLUGIN])
    assert await bot.say("/roll 2d6") == ["'2d6': 12 at most."]
    assert await bot.say("/roll two dice") == ["That didn't work: Write the dice as 2d6."]


def test_command_text_is_for_a_command_without_arguments() -> None:
    async def no_command(words: CommandText) -> str:
        return words

    with pytest.raises(ToolDefinitionError, match="command="):
        build_tool(no_command, description="Reads its words.")

    async def both(words: CommandText, args: VoteArgs) -> str:
        return words

    with pytest.raises(ToolDefinitionError, match="no arguments model"):
        build_tool(both, description="Reads its words.", command="both")
    tool = build_tool(roll, description="Roll.", command="roll")
    assert tool.for_model is False and "words" not in tool.parameters["properties"]
