"""Reminder tools after creation: edit, snooze, pause, resume and the delivery history.

Like the other reminder tools they act only in the chat the message came from, as the
sender of that message; the model names a reminder, never a chat or a user.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from function_calls.context import MESSAGE_CONTEXT_KEY, MessageContext, validation_context
from function_calls.grammar import GrammarError, parse_duration, split_when
from function_calls.handlers.audience import (
    AudienceRefused,
    Permission,
    ReminderRules,
    rule_changes,
)
from function_calls.handlers.reminder_args import (
    MAX_CONTENT,
    MAX_WHEN,
    SCHEDULE_FIELDS,
    ReminderArgs,
    bare_clock,
    check_agreement,
    check_edit_words,
    phrase_rule,
    read_phrase,
)
from function_calls.handlers.reminders import (
    UNAVAILABLE,
    ReminderRefArgs,
    audience_for,
    check_reference,
    describe_reminder,
    reminder_service,
    snapshot,
)
from function_calls.registry import Example, tool_function
from function_calls.result import FunctionResult
from function_calls.schema import COMPACT_HIDDEN
from storage import ReminderView, StorageError, StorageUnavailableError
from storage.changes import ReminderChange, Requester
from storage.recurrence import Kind, format_local

MAX_SNOOZE_MINUTES = 7 * 24 * 60
DEFAULT_SNOOZE_MINUTES = 10


def requester(ctx: MessageContext) -> Requester:
    return Requester(ctx.sender_id, ctx.is_admin, ctx.chat_type == "private")


class ReminderUpdateArgs(BaseModel):
    """A reminder's new time or rule, content, or who it is for; what is left out stays."""

    model_config = ConfigDict(extra="forbid")

    reminder_id: str = Field(min_length=1, max_length=64, description="the ID, e.g. 3 or #3")
    when: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_WHEN,
        description=(
            "the new time in the user's own words, e.g. 'at 10' (keeps the day or rule), "
            "'tomorrow at 9', 'every friday at 5pm'"
        ),
    )
    type: Kind | None = Field(
        None,
        description="without when, with a new time: as for reminder_set",
        json_schema_extra=COMPACT_HIDDEN,
    )
    time: str | None = Field(
        None, description="as for reminder_set", json_schema_extra=COMPACT_HIDDEN
    )
    in_minutes: int | None = Field(
        None, ge=1, description="as for reminder_set", json_schema_extra=COMPACT_HIDDEN
    )
    weekday: int | None = Field(
        None, ge=0, le=6, description="as for reminder_set", json_schema_extra=COMPACT_HIDDEN
    )
    day: int | None = Field(
        None, ge=1, le=31, description="as for reminder_set", json_schema_extra=COMPACT_HIDDEN
    )
    interval: int | None = Field(
        None, ge=1, le=52, description="as for reminder_set", json_schema_extra=COMPACT_HIDDEN
    )
    content: str | None = Field(
        None, min_length=1, max_length=MAX_CONTENT, description="the new text, if it changes"
    )
    who: list[str] | None = Field(None, min_length=1, max_length=10)

    _reference = field_validator("reminder_id")(check_reference)

    @model_validator(mode="after")
    def _check_change(self, info: ValidationInfo) -> Self:
        given = [name for name in SCHEDULE_FIELDS if getattr(self, name) is not None]
        if not given and self.when is None and self.content is None and self.who is None:
            raise ValueError("nothing to change: give a new time (when) or content")
        if given and self.type is None:
            raise ValueError("a new time needs its type too (once, daily, weekly, ...)")
        ctx = validation_context(info)
        if ctx is not None and not given and self.when is None and _names_a_time(ctx.text):
            # "change #1 to friday at 5pm" stored as the text "friday at 5pm" is wrong.
            raise ValueError(
                "the message names a new time: pass it in when (e.g. 'friday at 5pm'), "
                "and content only if the reminder's text changes"
            )
        if self.when is not None and ctx is not None:
            check_edit_words(ctx, self.when)
            if not bare_clock(read_phrase(self.when)):
                self.new_rule(ctx, self.rule_fields(ctx, None))  # as for reminder_set
            elif given:  # what a bare time means depends on the reminder: no comparing
                raise ValueError(
                    f"when {self.when!r} keeps the reminder's day or rule: leave type and time out"
                )
        elif given:
            self.new_rule(ctx, self.structured())
        return self

    def structured(self) -> dict[str, Any]:
        raw = {name: getattr(self, name) for name in SCHEDULE_FIELDS}
        return {name: value for name, value in raw.items() if value is not None}

    def rule_fields(self, ctx: MessageContext, current: ReminderView | None) -> dict[str, Any]:
        """The new rule's structured fields: from `when` (a bare time keeps `current`'s
        day or rule), checked against any structured fields given too; else those."""
        if self.when is None:
            return self.structured()
        fields = phrase_rule(read_phrase(self.when), ctx, current)
        if self.type is not None:
            check_agreement(self.when, fields, self.structured(), ctx)
        return fields

    def new_rule(self, ctx: MessageContext | None, fields: dict[str, Any]) -> ReminderArgs | None:
        """The new schedule as ReminderArgs (validated like creation), or None."""
        if not fields:
            return None
        raw = {**fields, "content": self.content or "-"}
        # Without the message's words: an edit checks them itself (check_edit_words);
        # read as a new reminder's, "把提醒1改到早上8点" would be one at 08:00 today.
        context = None if ctx is None else {MESSAGE_CONTEXT_KEY: replace(ctx, text="")}
        try:
            return ReminderArgs.model_validate(raw, context=context)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'time'}: "
                + e["msg"].removeprefix("Value error, ")
                for e in exc.errors(include_url=False)
            )
            raise ValueError(problems) from None


@tool_function(
    name="reminder_update",
    requires=["reminders"],
    description=(
        "Change one of this chat's reminders: its time or repeat rule, its text, or who it "
        "is for. Unchanged parts are left out."
    ),
    examples=[
        Example("move #4 to 11:30", {"reminder_id": "4", "when": "11:30"}),
        Example(
            "make reminder 6 every thursday at 8",
            {"reminder_id": "6", "when": "every thursday at 8"},
        ),
        Example("rename #5 to buy bread", {"reminder_id": "5", "content": "buy bread"}),
    ],
)
async def reminder_update(ctx: MessageContext, args: ReminderUpdateArgs) -> FunctionResult:
    try:
        updated = await change_reminder(ctx, args)
    except StorageUnavailableError:
        return FunctionResult.direct(UNAVAILABLE, data={"updated": False})
    except (StorageError, AudienceRefused, ValueError) as exc:
        return FunctionResult.direct(str(exc).rstrip(".") + ".", data={"updated": False})
    text = describe_reminder(updated, ctx.zone)
    return FunctionResult.direct(
        f"✏️ Updated reminder {text}", data={"updated": True, **snapshot(updated)}
    )


def _names_a_time(text: str) -> bool:
    try:
        spec, _ = split_when(text.strip())
    except GrammarError:
        return True  # a time, if one to ask about
    return not spec.empty


async def change_reminder(ctx: MessageContext, args: ReminderUpdateArgs) -> ReminderView:
    """Apply a validated edit as the message's sender; the new rule is checked like a new
    reminder's, against the clock of this moment.

    Raises StorageError (not found, not allowed, changed meanwhile), AudienceRefused, and
    ValueError (the new time passed since validation).
    """
    service = reminder_service(ctx)
    current = await service.find(ctx.chat_id, args.reminder_id, requester(ctx))
    rule = args.new_rule(ctx, args.rule_fields(ctx, current))
    schedule, first = rule.resolve(ctx) if rule is not None else (None, None)
    audience = None if args.who is None else await audience_for(ctx, service, args.who)
    change = ReminderChange(args.content, schedule, first, audience)
    return await service.update(
        ctx.chat_id,
        args.reminder_id,
        requester(ctx),
        change,
        expected_version=current.version,
    )


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
    requires=["reminders"],
    description="Snooze a reminder that just went off: it fires again after some minutes.",
    examples=[
        Example("snooze it for 20 minutes", {"when": "in 20 minutes"}),
        Example("ping me again in 2 hours", {"when": "in 2 hours"}),
        Example("15分钟后再提醒一次", {"when": "15分钟后"}),
    ],
)
async def reminder_snooze(ctx: MessageContext, args: ReminderSnoozeArgs) -> FunctionResult:
    try:
        until = args.until(ctx)
    except ValueError as exc:  # the moment passed between validation and now
        return FunctionResult.direct(f"I couldn't snooze that: {exc}.", data={"snoozed": False})
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
    except StorageUnavailableError:
        return FunctionResult.direct(UNAVAILABLE, data={"snoozed": False})
    except StorageError as exc:
        return FunctionResult.direct(str(exc), data={"snoozed": False})
    when = format_local(until, ctx.zone)
    return FunctionResult.direct(
        f"💤 Snoozed {root.label} until {when}: {root.content}",
        data={"snoozed": True, "of": root.short_id, **snapshot(snoozed)},
    )


async def _pause(ctx: MessageContext, reference: str, paused: bool) -> FunctionResult:
    service = reminder_service(ctx)
    try:
        reminder = await service.set_paused(ctx.chat_id, reference, requester(ctx), paused=paused)
    except StorageUnavailableError:
        return FunctionResult.direct(UNAVAILABLE)
    except StorageError as exc:
        return FunctionResult.direct(str(exc))
    verb = "⏸️ Paused" if paused else "▶️ Resumed"
    return FunctionResult.direct(
        f"{verb} reminder {describe_reminder(reminder, ctx.zone)}", data=snapshot(reminder)
    )


@tool_function(
    name="reminder_pause",
    requires=["reminders"],
    description="Pause a repeating reminder of this chat until it is resumed.",
    examples=["pause the standup reminder"],
)
async def reminder_pause(ctx: MessageContext, args: ReminderRefArgs) -> FunctionResult:
    return await _pause(ctx, args.reminder_id, True)


@tool_function(
    name="reminder_resume",
    requires=["reminders"],
    description="Resume a paused reminder of this chat.",
    examples=["resume reminder 3"],
)
async def reminder_resume(ctx: MessageContext, args: ReminderRefArgs) -> FunctionResult:
    return await _pause(ctx, args.reminder_id, False)


class ReminderHistoryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(10, ge=1, le=50, description="how many entries, newest first")


_OUTCOMES = {
    "sent": "sent",
    "sent_late": "sent late",
    "skipped_missed": "skipped (the bot was down)",
    "failed": "failed",
    "cancelled": "cancelled before sending",
    "snoozed": "snoozed",
}


@tool_function(
    name="reminder_history",
    requires=["reminders"],
    description="What this chat's reminders did recently: sent, late, skipped, failed, snoozed.",
    examples=["did the standup reminder go out this morning?"],
)
async def reminder_history(ctx: MessageContext, args: ReminderHistoryArgs) -> FunctionResult:
    service = reminder_service(ctx)
    own = ctx.sender_id if ctx.chat_type == "private" else None
    try:
        entries = await service.history(ctx.chat_id, limit=args.limit, created_by=own)
    except StorageUnavailableError:
        return FunctionResult.direct(UNAVAILABLE)
    if not entries:
        return FunctionResult.direct("No reminder has gone off in this chat yet.", data=[])
    lines = [f"Recent reminders ({ctx.timezone}):"]
    data = []
    for entry in entries:
        outcome = _OUTCOMES.get(entry.outcome, entry.outcome)
        if entry.outcome == "snoozed":
            outcome = f"snoozed until {entry.detail}"
        elif entry.outcome == "failed" and entry.detail:
            outcome = f"failed ({entry.detail})"
        when = format_local(entry.at, ctx.zone)
        lines.append(f"{when} · #{entry.short_id} {entry.content} · {outcome}")
        data.append({"at": entry.at.isoformat(), "id": entry.short_id, "outcome": entry.outcome})
    return FunctionResult.direct("\n".join(lines), data=data)


class ReminderRulesArgs(BaseModel):
    """New rules for who may set reminders for others; what is left out stays."""

    model_config = ConfigDict(extra="forbid")

    remind_others: Permission | None = Field(
        None, description="who may set reminders that mention other members"
    )
    remind_everyone: Permission | None = Field(
        None, description="who may set reminders for everyone"
    )


def _describe_rules(rules: ReminderRules) -> str:
    return (
        f"Reminders for other members: {rules.remind_others}. "
        f"Reminders for everyone: {rules.remind_everyone}. "
        "(members = anyone here, admins = group admins only, off = nobody)"
    )


@tool_function(
    name="reminder_rules",
    requires=["reminders"],
    scope="group",
    description=(
        "Show or change who in this group may set reminders for other members or for "
        "everyone: members, admins or off. Changing them is for group admins."
    ),
    examples=["only admins may remind others here", "who can set reminders for everyone?"],
)
async def reminder_rules(ctx: MessageContext, args: ReminderRulesArgs) -> FunctionResult:
    service = reminder_service(ctx)
    defaults = ctx.services.reminder_rules or ReminderRules()
    changes = rule_changes(args.remind_others, args.remind_everyone)
    try:
        if changes and not ctx.is_admin:
            return FunctionResult.direct(
                "Only a group admin can change who may set reminders for others.",
                data={"changed": False},
            )
        if changes:
            settings = await service.update_settings(ctx.chat_id, ctx.chat_type, changes)
        else:
            settings = await service.settings_of(ctx.chat_id)
    except StorageUnavailableError:
        return FunctionResult.direct(UNAVAILABLE, data={"changed": False})
    rules = defaults.for_chat(settings)
    data = {"remind_others": rules.remind_others, "remind_everyone": rules.remind_everyone}
    prefix = "⚙️ Updated. " if changes else ""
    return FunctionResult.direct(prefix + _describe_rules(rules), data=data)
