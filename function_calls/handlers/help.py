"""`help`: what the bot can do in this chat, straight from the registry."""

from __future__ import annotations

from function_calls.context import MessageContext
from function_calls.policy import ToolPolicy, hidden_because
from function_calls.registry import ToolRegistry, tool_function
from function_calls.result import FunctionResult


@tool_function(
    name="help",
    effect="read",
    description="List what the bot can do in this chat.",
    examples=["what can you do?", "help"],
)
async def show_help(
    ctx: MessageContext, registry: ToolRegistry, policy: ToolPolicy | None
) -> FunctionResult:
    lines = ["Here is what I can do here:"]
    for tool in registry:
        if hidden_because(tool, ctx, policy) is not None:
            continue
        if tool.name == "help":
            continue
        example = f' (e.g. "{tool.examples[0].said}")' if tool.examples else ""
        lines.append(f"• {tool.name}: {tool.description}{example}")
    if len(lines) == 1:
        lines = ["I can chat with you here, but no tools are enabled in this chat."]
    return FunctionResult.direct("\n".join(lines), data={"tools": len(lines) - 1})
