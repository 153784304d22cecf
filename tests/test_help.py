"""`/help` and the help tool speak to people: what works for the asker in this setup, in
their language, with no tool names or model instructions. Through the router (offline
and with the stub model) and through the model's loop."""

from __future__ import annotations

import re

import groupmate.function_calls.handlers  # noqa: F401  (registers the built-in tools)
from groupmate.function_calls import FunctionResult, MessageContext, ToolRegistry
from groupmate.function_calls.handlers import builtin_tools
from groupmate.testing import stub_llm as s
from tests.conftest import make_ctx
from tests.test_catchup import Clock, make_bot, say

# A tool's name in a text: snake_case words ("token_budget"), as no person writes.
_TOOL_NAME = re.compile(r"\b[a-z]+_[a-z_]+\b")


def _for_people(text: str) -> None:
    assert _TOOL_NAME.findall(text.replace("<me_or_all>", "")) == [], text
    assert "Never" not in text and "the sender" not in text and "(e.g." not in text


async def test_help_without_a_model_lists_the_commands_that_work_with_examples(
    database_url: str,
) -> None:
    clock = Clock()
    async with make_bot(database_url, clock) as bot:
        (help_,) = await say(bot, clock, 0, "Alice", "/help")
        (chinese,) = await say(bot, clock, 1, "Alice", "/帮助")
    print(f"\n{help_}\n\n{chinese}\n")
    _for_people(help_)
    lines = help_.splitlines()
    assert lines[:4] == [
        "Here is what I can do in this chat.",
        "No language model is configured here, so I understand the commands below, not "
        "plain language.",
        "Commands:",
        "• /remind <when> <what>: set a reminder",
    ]
    assert "• /catchup: what you missed since your last message" in lines
    assert lines[-1] == "Try: /remind in 10 minutes tea · /reminders"
    assert "/search" not in help_  # search is off
    assert "/budget" not in help_  # no model to budget
    assert "in your own words" not in help_
    assert chinese.startswith("我在这个群里可以做这些：\n这里没有配置语言模型")
    assert "• /remind <when> <what>：设置提醒" in chinese
    assert chinese.endswith("试试：/提醒 10分钟后 喝水 · /reminders")


async def test_help_with_a_model_gives_plain_language_examples_and_the_commands(
    database_url: str, stub: s.StubLLM
) -> None:
    clock = Clock()
    async with make_bot(database_url, clock, stub) as bot:
        (help_,) = await say(bot, clock, 0, "Alice", "/help")
    print(f"\n{help_}\n")
    _for_people(help_)
    lines = help_.splitlines()
    assert lines[:2] == [
        "Here is what I can do in this chat.",
        "Ask me in your own words, for example:",
    ]
    assert "• remind us every Tuesday at 7pm to water the garden" in lines
    assert "• /budget: the language model's use today" in lines
    assert "No language model" not in help_ and "/search" not in help_
    assert stub.requests == []  # /help asks no model


async def test_plain_language_without_a_model_is_given_the_nearest_commands(
    database_url: str,
) -> None:
    clock = Clock()
    async with make_bot(database_url, clock) as bot:
        (zone,) = await say(bot, clock, 0, "Alice", "@groupmate change our time zone to Tokyo")
        (find,) = await say(bot, clock, 1, "Alice", "@groupmate find the messages about the budget")
        (summary,) = await say(bot, clock, 2, "Alice", "@groupmate 总结一下今天的聊天")
        (hello,) = await say(bot, clock, 3, "Alice", "@groupmate hello")
    print(f"\n{zone}\n\n{find}\n\n{summary}\n\n{hello}\n")
    for answer in (zone, find, summary, hello):
        _for_people(answer)
        assert 3 <= sum(line.startswith("• ") for line in answer.splitlines()) <= 4
    wall = "I can't understand plain language here: no language model is configured."
    assert zone.splitlines()[:3] == [
        wall,
        "The commands closest to that:",
        "• /tz <zone>: this chat's time zone",
    ]
    assert find.splitlines()[2] == "• /find <words>: find this chat's messages with these words"
    assert find.endswith("\nAll of them: /help")
    assert summary.startswith("这里没有配置语言模型，我看不懂自然语言。\n最接近的命令：\n")
    assert "• /summary [N]：总结聊天内容" in summary and summary.endswith("全部命令：/帮助")
    assert hello.splitlines()[:2] == [wall, "Some commands to try:"]


def _registry() -> ToolRegistry:
    extra = ToolRegistry()
    extra.tool(name="weather", description="Current weather", examples=["weather in Rome?"])(
        lambda ctx: FunctionResult.direct("sunny")
    )
    extra.tool(
        name="purge", description="Delete everything", admin_only=True, examples=["purge it all"]
    )(lambda ctx: None)
    extra.tool(name="diary", description="Private diary", scope="private", examples=["dear diary"])(
        lambda ctx: None
    )
    extra.tool(name="backing", description="Backs a command", examples=["/backing"])(
        lambda ctx: None
    )
    return ToolRegistry([builtin_tools().get("help")]).merged(extra)


async def test_help_lists_only_what_this_sender_may_use(stub, make_llm) -> None:
    stub.script(s.calls(("help", {})))
    result = await make_llm(_registry()).run(make_ctx(), "what can you do?")
    assert result.text == (
        "You can ask me in your own words, for example:\n• weather in Rome?\n"
        "Send /help for the commands."
    )
    assert result.llm_calls == 1


async def test_help_for_an_admin_in_private_chat(stub, make_llm) -> None:
    stub.script(s.calls(("help", {})))
    ctx: MessageContext = make_ctx(chat_type="private", is_admin=True)
    result = await make_llm(_registry()).run(ctx, "help")
    assert result.text.splitlines()[1:4] == ["• weather in Rome?", "• purge it all", "• dear diary"]
    assert "backing" not in result.text  # a command's helper is no ability of its own
