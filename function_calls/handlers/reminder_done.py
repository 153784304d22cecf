"""Saying done to a reminder that went off, and "remind me too".

`reminder_done` records the sender's done for the reminder they name, else the one
whose message they replied to (or pressed a button under), else the one that went off
lately: a reminder that repeats until done stops once its rule is met. `reminder_me_too`
adds the sender to a group reminder's people (or takes them off), from its next
occurrence on; the asker can switch that off for their reminder. Like every reminder
tool they act only in the chat of the message, as its sender.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.ack_words import done_answer, me_too_answer
from groupmate.function_calls.handlers.audience import ReminderRules, allowed_by
from groupmate.function_calls.handlers.reminders import (
    check_reference,
    refused,
    requester,
    snapshot,
    touched,
)
from groupmate.function_calls.language import PlainSentence
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.schema import COMPACT_HIDDEN
from groupmate.function_calls.services import AudienceRules
from groupmate.storage import ReminderService, StorageError
from groupmate.storage.vocabulary import AckVia

_WHICH = "the ID; leave out for the reminder just delivered (or replied to)"


class ReminderDoneArgs(BaseModel):
    """Which delivered reminder is done."""

    model_config = ConfigDict(extra="forbid")

    reminder_id: str | None = Field(None, max_length=64, description=_WHICH)

    _reference = field_validator("reminder_id")(check_reference)


def via_of(ctx: MessageContext) -> AckVia:
    """How the sender said done: a button or a reaction (the press's source), /done,
    or words (a reply "done", or a sentence the model read)."""
    if ctx.source in ("button", "reaction"):
        return "button" if ctx.source == "button" else "reaction"
    return "command" if ctx.text.lstrip().startswith("/") else "reply"


def shown_name(ctx: MessageContext) -> str:
    return ctx.sender_name or ctx.sender_id


@tool_function(
    name="reminder_done",
    description=(
        "Mark a reminder that went off as done (for the sender); "
        "a reminder that repeats until done stops."
    ),
    examples=[
        Example("done", {}),
        Example("好了", {}),
        Example("mark reminder 3 as done", {"reminder_id": "3"}),
    ],
)
async def reminder_done(
    ctx: MessageContext, args: ReminderDoneArgs, service: ReminderService
) -> FunctionResult:
    try:
        result = await service.acts.acknowledge(
            ctx.chat_id,
            requester(ctx),
            shown_name(ctx),
            via_of(ctx),
            reference=args.reminder_id,
            message_id=None if args.reminder_id else ctx.reply_to,
            occurrence=ctx.occurrence,
        )
    except StorageError as exc:
        return refused(exc, ctx.text, {"done": False})
    return FunctionResult.direct(
        done_answer(result).for_message(ctx.text),
        data={"done": True, "new": result.new, "ended": result.ended, **snapshot(result.reminder)},
        value=result,
        touched=touched(result.reminder),
    )


class ReminderMeTooArgs(BaseModel):
    """Which group reminder, and whether the sender is to be reminded by it too."""

    model_config = ConfigDict(extra="forbid")

    reminder_id: str | None = Field(None, max_length=64, description=_WHICH)
    on: bool | None = Field(
        None, description="true: remind me too; false: stop reminding me; leave out to switch"
    )
    allow: bool | None = Field(
        None,
        description="for the reminder's setter: true lets members add themselves, false not",
        json_schema_extra=COMPACT_HIDDEN,
    )

    _reference = field_validator("reminder_id")(check_reference)


_NAME_IT = PlainSentence(
    "Say which reminder, e.g. /metoo #3 allow=false.",
    "请说明是哪个提醒，例如 /metoo #3 allow=false。",
)


@tool_function(
    name="reminder_me_too",
    description='Add the sender to a group reminder\'s people ("me too"), or take them off.',
    examples=[
        Example("me too", {}),
        Example("也算我一个", {}),
        Example("leave me out of reminder #4", {"reminder_id": "4", "on": False}),
    ],
)
async def reminder_me_too(
    ctx: MessageContext, args: ReminderMeTooArgs, service: ReminderService
) -> FunctionResult:
    acts = service.acts
    try:
        if args.allow is not None:
            if args.reminder_id is None:
                return FunctionResult.refused(_NAME_IT.for_message(ctx.text), "refused")
            reminder = await acts.allow_me_too(
                ctx.chat_id, args.reminder_id, requester(ctx), allowed=args.allow
            )
            said = PlainSentence(
                f"OK: members {'can' if args.allow else 'can no longer'} add themselves to "
                f"{reminder.label}.",
                f"好的：成员{'可以' if args.allow else '不能再'}把自己加到 {reminder.label}。",
            )
            return FunctionResult.direct(
                said.for_message(ctx.text),
                data={"me_too_allowed": args.allow, **snapshot(reminder)},
                value=reminder,
                touched=touched(reminder),
            )
        rules = (ctx.deps.get(AudienceRules) or ReminderRules()).for_chat(
            await service.settings_of(ctx.chat_id)
        )
        result = await acts.me_too(
            ctx.chat_id,
            requester(ctx),
            shown_name(ctx),
            args.on,
            rules_allow=allowed_by(rules.remind_others, ctx),
            reference=args.reminder_id,
            message_id=None if args.reminder_id else ctx.reply_to,
        )
    except StorageError as exc:
        return refused(exc, ctx.text, {"me_too": None})
    return FunctionResult.direct(
        me_too_answer(result).for_message(ctx.text),
        data={"me_too": result.on, "changed": result.changed, **snapshot(result.reminder)},
        value=result,
        touched=touched(result.reminder),
    )
