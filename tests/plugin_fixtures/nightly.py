"""A plugin whose background work changes state: its service reads the reminders
through the read-only view and sets one through `PluginTools`, as the plugin."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import ClassVar

from groupmate import FunctionResult, MessageContext, Plugin, tool_function
from groupmate.function_calls.plugin_calls import PluginTools
from groupmate.storage import ReminderReader

plugin = Plugin("nightly")


class Nightly:
    """The service; the running one is `Nightly.running` (a test calls it)."""

    running: ClassVar[Nightly | None] = None

    def __init__(self, tools: PluginTools, reminders: ReminderReader) -> None:
        self.tools = tools
        self.reminders = reminders

    async def remind(self, chat_id: str, content: str) -> FunctionResult:
        return await self.tools.call(
            chat_id, "reminder_set", {"when": "in 2 hours", "content": content}
        )

    async def count(self, chat_id: str) -> int:
        return (await self.reminders.list_for_chat(chat_id))[1]


@plugin.service
async def nightly(tools: PluginTools, reminders: ReminderReader) -> AsyncIterator[Nightly]:
    Nightly.running = Nightly(tools, reminders)
    try:
        yield Nightly.running
    finally:
        Nightly.running = None


@tool_function(description="How many reminders this chat has.", effect="read")
async def nightly_count(ctx: MessageContext, service: Nightly) -> str:
    return f"{await service.count(ctx.chat_id)} reminders"
