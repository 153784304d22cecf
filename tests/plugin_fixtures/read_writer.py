"""A plugin with a tool declared a read that asks for the reminder service: refused."""

from __future__ import annotations

from groupmate import MessageContext, Plugin, tool_function
from groupmate.storage import ReminderService

plugin = Plugin("readwriter")


@tool_function(description="Count this chat's reminders.", effect="read")
async def count_reminders(ctx: MessageContext, service: ReminderService) -> str:
    return str((await service.list_for_chat(ctx.chat_id))[1])
