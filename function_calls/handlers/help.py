"""`help`: what the bot can do in this chat, straight from the invoker's tool set."""

from __future__ import annotations

from function_calls.context import MessageContext
from function_calls.registry import tool_function
from function_calls.result import FunctionResult
from function_calls.toolsets import AbstractToolset


@tool_function(
    name="help",
    effect="read",
    description="List what the bot can do in this chat.",
    examples=["what can you do?", "help"],
)
async def show_help(ctx: MessageContext, tools: AbstractToolset) -> FunctionResult:
    # `tools` is the set of the invoker running this call: what it offers this sender
    # here (rights, scope, policy, switches) is what the model and /tools see too.
    lines = ["Here is what I can do here:"]
    for tool in tools.get_tools(ctx).values():
        if tool.name == "help":
            continue
        example = f' (e.g. "{tool.examples[0].said}")' if tool.examples else ""
        lines.append(f"• {tool.name}: {tool.description}{example}")
    if len(lines) == 1:
        lines = ["I can chat with you here, but no tools are enabled in this chat."]
    return FunctionResult.direct("\n".join(lines), data={"tools": len(lines) - 1})
