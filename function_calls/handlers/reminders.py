"""Reminder tools: set, list and delete, always scoped to the chat the message came from.

Chat and sender come from the message context, never from the model's arguments, so no
prompt can reach another chat's reminders.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import ToolError
from groupmate.function_calls.handlers.audience import (
    AudienceRefused,
    ReminderRules,
    asked_for_everyone,
    resolve_audience,
)
from groupmate.function_calls.handlers.reminder_actions import (
    ActionRefused,
    scheduled_action,
    shown,
)
from groupmate.function_calls.handlers.reminder_args import ReminderArgs
from groupmate.function_calls.handlers.reminder_refusals import refusal_text
from groupmate.function_calls.handlers.reminder_words import (
    confirmation,
    describe_rule,
    describe_schedule,
    format_local,
    outcome_words,
)
from groupmate.function_calls.handlers.until_done import scheduled
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import Failure, FunctionResult, Touched
from groupmate.function_calls.services import AudienceRules
from groupmate.storage import (
    NewReminder,
    ReminderChangedError,
    ReminderNotFoundError,
    ReminderPermissionError,
    ReminderReader,
    ReminderService,
    ReminderStateError,
    ReminderView,
    StorageError,
    StorageUnavailableError,
)
from groupmate.storage.changes import Requester
from groupmate.storage.reminder_rows import Audience
from groupmate.storage.repository import parse_reference

LIST_LIMIT = 50


def requester(ctx: MessageContext) -> Requester:
    """Who asks for a change: the message's sender, with the rights of the context."""
    return Requester(
        ctx.sender_id, ctx.is_admin, ctx.chat_type == "private", owner_only=ctx.owner_only
    )


def touched(reminder: ReminderView) -> Touched:
    return Touched(reminder.id, reminder.label)


def failure_of(exc: Exception) -> Failure:
    """What kind of refusal a domain error is (the REST layer's status code)."""
    if isinstance(exc, StorageUnavailableError):
        return "unavailable"
    if isinstance(exc, ReminderNotFoundError):
        return "not_found"
    if isinstance(exc, ReminderPermissionError):
        return "forbidden"
    if isinstance(exc, ReminderChangedError | ReminderStateError):
        return "conflict"
    return "refused"


def refused(exc: Exception, asked: str, data: object = None, *, prefix: str = "") -> FunctionResult:
    """A domain refusal (StorageError, AudienceRefused, or a ValueError: the time passed
    since validation) as the handler's answer: the sentence, and its kind. A storage
    error is said in the language of the user's message `asked` (`refusal_text`); the
    others' messages are already written for users, with `prefix` before them."""
    if isinstance(exc, StorageError):
        return FunctionResult.refused(refusal_text(exc, asked), failure_of(exc), data)
    sentence = f"{prefix}{exc}".strip()
    if not sentence.endswith((".", "!", "?", "。", "！", "？")):  # noqa: RUF001
        sentence += "."
    return FunctionResult.refused(sentence, failure_of(exc), data)


def reminder_service(ctx: MessageContext) -> ReminderService:
    service = ctx.deps.get(ReminderService)
    if service is None:
        raise ToolError("reminders are not enabled for this bot")
    return service


def describe_reminder(reminder: ReminderView, zone: ZoneInfo) -> str:
    """'#3 · next Mon 24 Nov 09:00 · every Monday at 09:00 · send the report'."""
    parts = [reminder.label]
    if reminder.status == "paused":
        parts.append("paused")
    elif reminder.next_fire_at is not None:
        parts.append(f"next {format_local(reminder.next_fire_at, zone)}")
    if reminder.schedule.recurring:
        parts.append(describe_rule(reminder))
    if reminder.snooze_of is not None:
        parts.append("snoozed")
    parts.append(shown(reminder.content, reminder.action))
    return " · ".join(parts)


def snapshot(reminder: ReminderView) -> dict[str, object]:
    return {
        "id": reminder.short_id,
        "full_id": reminder.id,
        "content": reminder.content,
        "action": reminder.action.columns() if reminder.action is not None else None,
        "rule": describe_schedule(reminder.schedule),
        "next": None
        if reminder.next_fire_at is None
        else reminder.next_fire_at.astimezone(reminder.schedule.zone).isoformat(),
    }


@tool_function(
    name="reminder_set",
    description=(
        "Set a reminder in this chat: once (at a local date and time, or in N minutes) or "
        "repeating daily, on weekdays, weekly, monthly or every N minutes or hours, until a "
        "day or N times if asked. Times are the chat's local time. "
        "To run a command on a schedule (a daily summary, a weekly search), the content is "
        "the command: /summary, /catchup, /search <query>."
    ),
    examples=[
        Example(
            "remind us every Tuesday at 7pm to water the garden",
            {"when": "every Tuesday at 7pm", "content": "water the garden"},
        ),
        Example(
            "remind me on thursday at 14:30 to book the flights",
            {"when": "on thursday at 14:30", "content": "book the flights"},
        ),
        Example(
            "in 45 minutes remind me to take the cake out",
            {"when": "in 45 minutes", "content": "take the cake out"},
        ),
        Example(
            "remind @bob tomorrow at noon to bring the projector",
            {"when": "tomorrow at noon", "content": "bring the projector", "who": ["@bob"]},
        ),
        Example("每天早上7点提醒我跑步", {"when": "每天早上7点", "content": "跑步"}),
        Example(
            "remind me at 9pm to take my pills until I say done",
            {"when": "at 9pm until I say done", "content": "take my pills"},
        ),
        Example(
            "post a summary of the day every evening at 6",
            {"when": "every day at 18:00", "content": "/summary"},
        ),
    ],
)
async def reminder_set(
    ctx: MessageContext,
    args: ReminderArgs,
    service: ReminderService,
) -> FunctionResult:
    try:
        reminder = await add_reminder(ctx, args)
    except (AudienceRefused, ActionRefused) as exc:
        return refused(exc, ctx.text, {"set": False})
    except ValueError as exc:  # the moment passed between validation and now
        return refused(exc, ctx.text, {"set": False}, prefix="I couldn't set that reminder: ")
    except StorageError as exc:
        return refused(exc, ctx.text, {"set": False})
    reply = confirmation(reminder, ctx, everyone_asked=asked_for_everyone(args.who))
    return FunctionResult.direct(
        reply, data=snapshot(reminder), value=reminder, touched=touched(reminder)
    )


async def add_reminder(ctx: MessageContext, args: ReminderArgs) -> ReminderView:
    """Store a validated reminder, set by the message's sender in the message's chat.

    Raises ValueError (the time passed since validation), AudienceRefused, ActionRefused,
    StorageError.
    """
    service = reminder_service(ctx)
    action = scheduled_action(ctx, args.content)
    schedule, first = scheduled(args, ctx)
    audience = await audience_for(ctx, service, args.who)
    new = NewReminder(
        chat_id=ctx.chat_id,
        chat_type=ctx.chat_type,
        created_by=ctx.sender_id,
        created_by_name=ctx.sender_name,
        content=args.content,
        schedule=schedule,
        first_fire_at=first,
        audience=audience,
        action=action,
        ack=args.ack,
    )
    return await service.create(new)


async def audience_for(
    ctx: MessageContext, service: ReminderService, who: list[str] | None
) -> Audience:
    """Resolve `who` under the chat's rules; raises AudienceRefused."""
    if not who or who == ["me"]:
        return Audience()
    rules = ctx.deps.get(AudienceRules) or ReminderRules()
    settings = await service.settings_of(ctx.chat_id)
    return await resolve_audience(ctx, who, rules.for_chat(settings))


@tool_function(
    name="reminder_list",
    effect="read",
    description="List this chat's active reminders with their IDs and next times.",
    examples=[Example("which reminders are set?", {})],
)
async def reminder_list(ctx: MessageContext, service: ReminderReader) -> FunctionResult:
    own = ctx.sender_id if ctx.chat_type == "private" else None
    try:
        reminders, total = await service.list_for_chat(
            ctx.chat_id, created_by=own, limit=LIST_LIMIT
        )
        # A scheduled action's last result, beside it: did last evening's digest run?
        acting = [r.id for r in reminders if r.action is not None]
        results = await service.last_outcomes(acting) if acting else {}
    except StorageError as exc:
        return refused(exc, ctx.text)
    if not reminders:
        return FunctionResult.direct("There are no active reminders in this chat.", data=[])
    lines = [f"Reminders in this chat ({total}, times in {ctx.timezone}):"]
    for reminder in reminders:
        line = describe_reminder(reminder, ctx.zone)
        if reminder.id in results:
            at, outcome = results[reminder.id]
            line += f" (last run {format_local(at, ctx.zone)}: {outcome_words(outcome)})"
        lines.append(line)
    if total > len(reminders):
        lines.append(f"…and {total - len(reminders)} more.")
    return FunctionResult.direct("\n".join(lines), data=[snapshot(r) for r in reminders])


def check_reference(value: str | None) -> str | None:
    if value is not None and parse_reference(value) is None:
        raise ValueError("not a reminder ID; use the number shown in the reminder list, e.g. 3")
    return None if value is None else value.strip()


class ReminderRefArgs(BaseModel):
    """Which reminder."""

    model_config = ConfigDict(extra="forbid")

    reminder_id: str = Field(
        min_length=1,
        max_length=64,
        description="the reminder's ID as shown in the list, e.g. 3 or #3 (or its full id)",
    )

    _reference = field_validator("reminder_id")(check_reference)


@tool_function(
    name="reminder_delete",
    description="Delete (cancel) one of this chat's reminders by the ID shown in the list.",
    examples=[Example("cancel #7", {"reminder_id": "7"})],
)
async def reminder_delete(
    ctx: MessageContext,
    args: ReminderRefArgs,
    service: ReminderService,
) -> FunctionResult:
    try:
        reminder = await service.delete(ctx.chat_id, args.reminder_id, requester(ctx))
    except StorageError as exc:
        return refused(exc, ctx.text, {"deleted": False})
    rule = describe_schedule(reminder.schedule)
    reply = f"🗑️ Deleted reminder {reminder.label} ({rule}): {reminder.content}"
    return FunctionResult.direct(
        reply,
        data={"deleted": True, **snapshot(reminder)},
        value=reminder,
        touched=touched(reminder),
    )
