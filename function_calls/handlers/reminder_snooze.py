"""Putting a reminder off: snooze it to fire once more later, or pause it until resumed.

Like the other reminder tools they act only in the chat the message came from, as the
sender of that message; the model names a reminder, never a chat or a user.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from groupmate.function_calls.context import MESSAGE_CONTEXT_KEY, MessageContext, validation_context
from groupmate.function_calls.grammar import parse_duration
from groupmate.function_calls.handlers.reminder_args import MAX_WHEN, ReminderArgs
from groupmate.function_calls.handlers.reminder_words import format_local
from groupmate.function_calls.handlers.reminder_words_check import phrase_rule, read_phrase
from groupmate.function_calls.handlers.reminders import (
    ReminderRefArgs,
    check_reference,
    describe_reminder,
    refused,
    reminder_service,
    requester,
    snapshot,
    touched,
)
from groupmate.function_calls.language import PlainSentence
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.schema import COMPACT_HIDDEN
from groupmate.storage import ReminderService, ReminderView, StorageError

MAX_SNOOZE_MINUTES = 7 * 24 * 60
DEFAULT_SNOOZE_MINUTES = 10


@dataclass(frozen=True, slots=True)
class Snoozed:
    """What a snooze made: the reminder snoozed, and the one-time reminder that fires
    again."""

    reminder: ReminderView
    snooze: ReminderView


class ReminderSnoozeArgs(BaseModel):
    """Which delivered reminder to fire again, and when."""

    model_config = ConfigDict(extra="forbid")

    reminder_id: str | None = Field(
        None,
        max_length=64,
        description="the ID; leave out for the reminder just delivered (or replied to)",
    )
    when: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_WHEN,
        description="when to fire again, as the user said it: 'in 10 minutes', '1h', 'at 5pm'",
    )
    minutes: int | None = Field(
        None,
        ge=1,
        le=MAX_SNOOZE_MINUTES,
        description=f"without when: minutes to wait (default {DEFAULT_SNOOZE_MINUTES})",
        json_schema_extra=COMPACT_HIDDEN,
    )

    _reference = field_validator("reminder_id")(check_reference)

    @model_validator(mode="after")
    def _check_when(self, info: ValidationInfo) -> Self:
        ctx = validation_context(info)
        if ctx is not None:
            self.until(ctx)
        return self

    def until(self, ctx: MessageContext) -> datetime:
        """When the snooze fires; ValueError for a phrase that is not one future moment,
        or that disagrees with `minutes`."""
        now = ctx.clock()
        by_minutes = now + timedelta(minutes=self.minutes or DEFAULT_SNOOZE_MINUTES)
        if self.when is None:
            return by_minutes
        minutes = parse_duration(self.when)
        if minutes is not None:
            until = now + timedelta(minutes=minutes)
        else:
            fields = phrase_rule(read_phrase(self.when), ctx, None)
            if fields["type"] != "once":
                raise ValueError("a snooze fires once; give one time, e.g. 'in 10 minutes'")
            until = ReminderArgs.model_validate(
                {**fields, "content": "-"}, context={MESSAGE_CONTEXT_KEY: ctx}
            ).resolve(ctx)[1]
        if until - now > timedelta(minutes=MAX_SNOOZE_MINUTES):
            raise ValueError("a snooze can be at most a week")
        if self.minutes is not None and abs(until - by_minutes) >= timedelta(minutes=1):
            raise ValueError(
                f"when {self.when!r} means {format_local(until, ctx.zone)}, but minutes "
                f"says {self.minutes}; send only when"
            )
        return until


@tool_function(
    name="reminder_snooze",
    description="Snooze a reminder that just went off: it fires again after some minutes.",
    examples=[
        Example("snooze it for 20 minutes", {"when": "in 20 minutes"}),
        Example("ping me again in 2 hours", {"when": "in 2 hours"}),
        Example("15分钟后再提醒一次", {"when": "15分钟后"}),
    ],
)
async def reminder_snooze(
    ctx: MessageContext,
    args: ReminderSnoozeArgs,
    service: ReminderService,
) -> FunctionResult:
    try:
        until = args.until(ctx)
    except ValueError as exc:  # the moment passed between validation and now
        return refused(exc, ctx.text, {"snoozed": False}, prefix="I couldn't snooze that: ")
    return await snooze_until(ctx, until, args.reminder_id)


async def snooze_until(
    ctx: MessageContext, until: datetime, reference: str | None
) -> FunctionResult:
    """Snooze by reference, else the replied-to reminder, else the only recent one."""
    service = reminder_service(ctx)
    try:
        root, snoozed = await service.snooze(
            ctx.chat_id,
            requester(ctx),
            until,
            reference=reference,
            message_id=None if reference else ctx.reply_to,
        )
    except StorageError as exc:
        return refused(exc, ctx.text, {"snoozed": False})
    when = format_local(until, ctx.zone)
    return FunctionResult.direct(
        f"💤 Snoozed {root.label} until {when}: {root.content}",
        data={"snoozed": True, "of": root.short_id, **snapshot(snoozed)},
        value=Snoozed(root, snoozed),
        touched=touched(root),
    )


async def _pause(ctx: MessageContext, reference: str, paused: bool) -> FunctionResult:
    service = reminder_service(ctx)
    try:
        reminder = await service.set_paused(ctx.chat_id, reference, requester(ctx), paused=paused)
    except StorageError as exc:
        return refused(exc, ctx.text)
    if paused or reminder.status != "done":
        verb = "⏸️ Paused" if paused else "▶️ Resumed"
        answer = f"{verb} reminder {describe_reminder(reminder, ctx.zone)}"
    else:  # its limit passed while it was paused: resuming ended it
        answer = ended_while_paused(reminder.label).for_message(ctx.text)
    return FunctionResult.direct(
        answer,
        data=snapshot(reminder),
        value=reminder,
        touched=touched(reminder),
    )


def ended_while_paused(label: str) -> PlainSentence:
    """A resumed repeat whose last time ("until Friday", "5 times") passed meanwhile."""
    return PlainSentence(
        f"⏹️ {label} has ended: its last time passed while it was paused, so it won't "
        "remind again. Set a new reminder if you still need it.",
        f"⏹️ {label} 已结束：暂停期间它的最后一次提醒时间已经过了，不会再提醒。"
        "如果还需要，请重新设置一个提醒。",
    )


@tool_function(
    name="reminder_pause",
    description="Pause a repeating reminder of this chat until it is resumed.",
    examples=["pause the standup reminder"],
)
async def reminder_pause(
    ctx: MessageContext,
    args: ReminderRefArgs,
    service: ReminderService,
) -> FunctionResult:
    return await _pause(ctx, args.reminder_id, True)


@tool_function(
    name="reminder_resume",
    description="Resume a paused reminder of this chat.",
    examples=["resume reminder 3"],
)
async def reminder_resume(
    ctx: MessageContext,
    args: ReminderRefArgs,
    service: ReminderService,
) -> FunctionResult:
    return await _pause(ctx, args.reminder_id, False)
