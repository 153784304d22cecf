"""`chat_data_delete`: delete everything the bot stored for this chat (reminders, logged
messages, usage, audit entries, settings, plugins' values). Chat admins, the API and
the dashboard; never offered to the model, which must not be talked into it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.reminders import refused
from groupmate.function_calls.registry import tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import ReminderService, StorageError


class ChatDataDeleteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    confirm: bool = Field(description="true: yes, delete this chat's data for good")


@tool_function(
    name="chat_data_delete",
    admin_only=True,
    for_model=False,
    description="Delete everything the bot stored for this chat, plugins' data included.",
)
async def chat_data_delete(
    ctx: MessageContext, args: ChatDataDeleteArgs, service: ReminderService
) -> FunctionResult:
    if not args.confirm:
        return FunctionResult.refused("Nothing was deleted: confirm it to delete.", "refused")
    try:
        deleted = await service.delete_chat_data(ctx.chat_id)
    except StorageError as exc:
        return refused(exc, ctx.text)
    return FunctionResult.direct(
        "🗑️ Deleted this chat's data: "
        f"{len(deleted.reminder_ids)} reminder(s), {deleted.messages} message(s), "
        f"{deleted.plugin_values} plugin value(s).",
        data={
            "reminders": len(deleted.reminder_ids),
            "messages": deleted.messages,
            "plugin_values": deleted.plugin_values,
        },
    )
