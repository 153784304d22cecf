"""`help`: what the bot can do in this chat, straight from the invoker's tool set."""

from __future__ import annotations

from collections.abc import Iterable

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.language import is_chinese
from groupmate.function_calls.registry import Tool, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.toolsets import AbstractToolset


def plain_examples(tools: Iterable[Tool], *, chinese: bool = False) -> list[str]:
    """What people may say to the bot, one example of each tool that has one in plain
    words (a Chinese one first for a Chinese asker). A tool with none, or only a command,
    is no ability of its own to people: it backs a command, which /help lists. Nor is a
    tool kept from the model (`for_model=False`): plain words never reach it."""
    found = []
    for tool in tools:
        said = [e.said for e in tool.examples if not e.said.startswith("/")]
        if tool.name == "help" or not tool.for_model or not said:
            continue
        in_chinese = [text for text in said if is_chinese(text)]
        found.append((in_chinese or said)[0] if chinese else said[0])
    return found


@tool_function(
    name="help",
    effect="read",
    description="List what the bot can do in this chat.",
    examples=["what can you do?", "help"],
)
async def show_help(ctx: MessageContext, tools: AbstractToolset) -> FunctionResult:
    # `tools` is the set of the invoker running this call: what it offers this sender
    # here (rights, scope, policy, switches) is what the model and /tools see too. The
    # answer goes to the person as it is: in their words, never the tools' names.
    chinese = is_chinese(ctx.text)
    examples = plain_examples(tools.get_tools(ctx).values(), chinese=chinese)
    if chinese:
        head, tail = "可以直接用自己的话问我，例如：", "发送 /help 查看命令。"
    else:
        head, tail = (
            "You can ask me in your own words, for example:",
            "Send /help for the commands.",
        )
    lines = [head, *(f"• {text}" for text in examples)] if examples else []
    return FunctionResult.direct("\n".join([*lines, tail]), data={"examples": len(examples)})
