"""One way for the /settings tools (who may remind others, follow-ups, quiet digests) to
read or change a chat's settings: a change is for the group's admins (in a private chat,
for its one member), and a refusal is said the same way by each."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.reminders import refused
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import ReminderService, StorageError


async def settings_after(
    ctx: MessageContext,
    service: ReminderService,
    changes: Mapping[str, object],
    *,
    what: str,
) -> dict[str, Any] | FunctionResult:
    """The chat's settings once `changes` are made (none: as they are), or the refusal
    to answer with: the sender may not change `what` ("how follow-ups work here"), or
    the database refused."""
    try:
        if changes and ctx.chat_type == "group" and not ctx.is_admin:
            return FunctionResult.refused(
                f"Only a group admin can change {what}.", "forbidden", {"changed": False}
            )
        if changes:
            return await service.chats.update_settings(ctx.chat_id, ctx.chat_type, dict(changes))
        return await service.settings_of(ctx.chat_id)
    except StorageError as exc:
        return refused(exc, ctx.text, {"changed": False})
