"""`chat_tools`: which tools this chat has, and a chat admin's switch to turn one off or
on again. A switched-off tool is not offered to the model, and a call of it is refused
on every path (the invoker's tool set hides what `ctx.tools_off` names)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.reminders import refused
from groupmate.function_calls.policy import ToolPolicy, tools_off
from groupmate.function_calls.registry import Tool, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.toolsets import AbstractToolset
from groupmate.storage import ReminderService, StorageError
from groupmate.storage.vocabulary import SETTING_TOOLS_OFF

NAME = "chat_tools"
_NAMES = Field(
    None,
    min_length=1,
    max_length=20,
    description="tool names, as /tools lists them",
)


class ChatToolsArgs(BaseModel):
    """Tools to switch off or on in this chat; with neither, the list."""

    model_config = ConfigDict(extra="forbid")

    off: list[str] | None = _NAMES
    on: list[str] | None = _NAMES


def _line(tool: Tool, policy: ToolPolicy | None, switched_off: bool) -> str:
    who = policy.who(tool.name, tool.effect) if policy else None
    state = "off" if switched_off else "on"
    rights = f" · {who}" if who not in (None, "members") else ""
    return f"• {tool.name} · {state} · {tool.effect}{rights}"


@tool_function(
    name=NAME,
    # `/tools`, the API and the dashboard switch tools; the model's prompt is spared it.
    for_model=False,
    description="List this chat's tools, or switch some off or on (chat admins only).",
)
async def chat_tools(
    ctx: MessageContext,
    args: ChatToolsArgs,
    service: ReminderService,
    tools: AbstractToolset,
    policy: ToolPolicy | None,
) -> FunctionResult:
    off, on = set(args.off or ()), set(args.on or ())
    changes = off | on
    known = set(tools.names())
    if changes and not ctx.is_admin:
        return FunctionResult.refused(
            "Only a chat admin can switch tools on or off.", "forbidden", {"changed": False}
        )
    unknown = sorted(changes - known)
    if unknown:
        return FunctionResult.refused(
            f"There is no tool called {', '.join(unknown)} here; /tools lists them.",
            "refused",
            {"changed": False},
        )
    if NAME in off:
        return FunctionResult.refused(
            "This switch can't switch itself off.", "refused", {"changed": False}
        )
    if off & on:
        return FunctionResult.refused(
            f"{', '.join(sorted(off & on))}: off or on? Name each tool once.",
            "refused",
            {"changed": False},
        )
    switched = set(ctx.tools_off)
    if changes:

        def switch(settings: dict[str, Any]) -> dict[str, Any]:
            # Under the chat row's lock: a concurrent switch is not lost.
            now_off = sorted((tools_off(settings) | off) - on)
            return {SETTING_TOOLS_OFF: now_off or None}

        try:
            stored = await service.chats.update_settings(ctx.chat_id, ctx.chat_type, switch)
            switched = set(tools_off(stored))
        except StorageError as exc:
            return refused(exc, ctx.text, {"changed": False})
    # `tools` is the invoker's set: the sender sees what it offers them here, and what
    # the chat switched off (which they may switch on again).
    listing = tools.listing(ctx)
    lines = []
    for tool in tools:
        shown = tool.name in listing.offered or listing.reason(tool.name) == "switched_off"
        if shown or tool.name in switched:
            lines.append(_line(tool, policy, tool.name in switched))
    head = "⚙️ Updated. " if changes else ""
    text = f"{head}Tools in this chat (name · on/off · effect):\n" + "\n".join(lines)
    if not changes:
        text += "\nA chat admin can write /tools off <name> or /tools on <name>."
    return FunctionResult.direct(
        text,
        data={"off": sorted(switched), "changed": bool(changes)},
        value=sorted(switched),
        changed=bool(changes),
    )
