"""What this chat's reminders did lately (sent, late, skipped, failed, snoozed), and for
one reminder also who set, changed, paused or deleted it, from the audit log."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.reminder_words import format_local, outcome_words
from groupmate.function_calls.handlers.reminders import check_reference, refused
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import ReminderReader, StorageError
from groupmate.storage.audit import MAX_PAGE, AuditEntry, AuditQuery, AuditReader
from groupmate.storage.changes import HistoryEntry
from groupmate.storage.repository import parse_reference


class ReminderHistoryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(10, ge=1, le=50, description="how many entries, newest first")
    reminder_id: str | None = Field(
        None, max_length=64, description="one reminder's ID: also who set or changed it"
    )

    _reference = field_validator("reminder_id")(check_reference)


# What an audited call did to a reminder, and where it came from when not the chat.
_DONE = {
    "reminder_set": "set",
    "reminder_update": "changed",
    "reminder_snooze": "snoozed",
    "reminder_pause": "paused",
    "reminder_resume": "resumed",
    "reminder_delete": "deleted",
}
_VIA = {
    "rest": " through the API",
    "mcp": " from an MCP client",
    "dashboard": " from the dashboard",
    "playground": " from the playground",
    "schedule": " by a scheduled action",
    "plugin": " by a plugin",
}
# Deliveries are searched this far back for one reminder's lines.
_SCAN = 200


def _delivery_line(entry: HistoryEntry, ctx: MessageContext) -> str:
    outcome = outcome_words(entry.outcome)
    if entry.outcome == "snoozed":
        outcome = f"snoozed until {entry.until:%a %d %b %H:%M}"
    elif entry.outcome == "done":
        outcome = f"done by {entry.detail}"
    elif entry.outcome == "failed" and entry.detail:
        outcome = f"failed ({entry.detail})"
    return f"{format_local(entry.at, ctx.zone)} · #{entry.short_id} {entry.content} · {outcome}"


def _change_line(entry: AuditEntry, ctx: MessageContext) -> str:
    who = entry.sender_name or entry.sender_id
    when = format_local(entry.at, ctx.zone)
    return f"{when} · {_DONE[entry.tool]} by {who}{_VIA.get(entry.source, '')}"


@tool_function(
    name="reminder_history",
    effect="read",
    description=(
        "What this chat's reminders did recently: sent, late, skipped, failed, snoozed, "
        "who said done; "
        "for one reminder, also who set or changed it."
    ),
    examples=[
        "did the standup reminder go out this morning?",
        Example("who set reminder #4?", {"reminder_id": "4"}),
    ],
)
async def reminder_history(
    ctx: MessageContext,
    args: ReminderHistoryArgs,
    service: ReminderReader,
    audit: AuditReader | None,
) -> FunctionResult:
    if args.reminder_id is not None:
        return await _one(ctx, service, audit, args.reminder_id, args.limit)
    own = ctx.sender_id if ctx.chat_type == "private" else None
    try:
        entries = await service.history(ctx.chat_id, limit=args.limit, created_by=own)
    except StorageError as exc:
        return refused(exc, ctx.text)
    if not entries:
        return FunctionResult.direct("No reminder has gone off in this chat yet.", data=[])
    lines = [f"Recent reminders ({ctx.timezone}):"]
    lines.extend(_delivery_line(entry, ctx) for entry in entries)
    data = [{"at": e.at.isoformat(), "id": e.short_id, "outcome": e.outcome} for e in entries]
    return FunctionResult.direct("\n".join(lines), data=data)


async def _one(
    ctx: MessageContext,
    service: ReminderReader,
    audit: AuditReader | None,
    reference: str,
    limit: int,
) -> FunctionResult:
    """One reminder: who set and changed it (the audit log), and what it did."""
    key = parse_reference(reference)
    if not isinstance(key, int):  # a full id is internal: users name reminders by number
        return FunctionResult.refused("Name the reminder by its number, e.g. #4.", "refused")
    own = ctx.sender_id if ctx.chat_type == "private" else None
    label = f"#{key}"
    try:
        changes: list[AuditEntry] = []
        if audit is not None:
            query = AuditQuery(
                chat_id=ctx.chat_id,
                target_label=label,
                tools=tuple(_DONE),
                outcome="ok",
                limit=MAX_PAGE,
            )
            changes = await audit.page(query)
        entries = await service.history(ctx.chat_id, limit=_SCAN, created_by=own)
    except StorageError as exc:
        return refused(exc, ctx.text)
    done = list(reversed(changes))
    if len(done) > limit:  # who set it, and the latest changes
        done = [done[0], *done[len(done) - limit + 1 :]]
    if own is not None:
        done = [e for e in done if e.sender_id == own]
    fired = [e for e in entries if e.short_id == key][:limit]
    if not done and not fired:
        return FunctionResult.refused(
            f"I have no record of reminder {label} in this chat.", "not_found", {"found": False}
        )
    lines = [f"Reminder {label} ({ctx.timezone}):"]
    lines.extend(_change_line(entry, ctx) for entry in done)
    lines.extend(_delivery_line(entry, ctx) for entry in fired)
    data = {
        "changes": [
            {"at": e.at.isoformat(), "action": _DONE[e.tool], "by": e.sender_name or e.sender_id}
            for e in done
        ],
        "deliveries": [{"at": e.at.isoformat(), "outcome": e.outcome} for e in fired],
    }
    return FunctionResult.direct("\n".join(lines), data=data)
