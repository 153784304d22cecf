"""Editing a reminder: its time or repeat rule, its text, or who it is for.

Like the other reminder tools it acts only in the chat the message came from, as the
sender of that message; the model names a reminder, never a chat or a user.
"""

from __future__ import annotations

from dataclasses import replace
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

from groupmate.function_calls.context import MESSAGE_CONTEXT_KEY, MessageContext, validation_context
from groupmate.function_calls.grammar import GrammarError, split_when
from groupmate.function_calls.handlers.audience import AudienceRefused
from groupmate.function_calls.handlers.reminder_args import (
    HHMM_PATTERN,
    MAX_EVERY_MINUTES,
    MAX_IN_MINUTES,
    MAX_WHEN,
    MAX_WHO,
    SCHEDULE_FIELDS,
    TIME_PATTERN,
    ContentText,
    ReminderArgs,
    WhoItem,
)
from groupmate.function_calls.handlers.reminder_limits import (
    UNTIL_PATTERN,
    limit_fields,
    rule_fields,
)
from groupmate.function_calls.handlers.reminder_words_check import (
    check_agreement,
    check_edit_words,
    keeps_rule,
    phrase_rule,
    read_phrase,
)
from groupmate.function_calls.handlers.reminders import (
    audience_for,
    check_reference,
    describe_reminder,
    refused,
    reminder_service,
    requester,
    snapshot,
    touched,
)
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.schema import COMPACT_HIDDEN
from groupmate.storage import ReminderService, ReminderView, StorageError
from groupmate.storage.changes import ReminderChange
from groupmate.storage.recurrence import MAX_COUNT, MAX_INTERVAL, DayKind


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
    type: DayKind | None = Field(
        None,
        description=(
            "without when, with a new time: as for reminder_set; left out, the reminder's "
            "own (a weekly one sent only a new time stays weekly, on its day)"
        ),
        json_schema_extra=COMPACT_HIDDEN,
    )
    time: str | None = Field(
        None,
        pattern=TIME_PATTERN,
        description="as for reminder_set",
        json_schema_extra=COMPACT_HIDDEN,
    )
    in_minutes: int | None = Field(
        None,
        ge=1,
        le=MAX_IN_MINUTES,
        description="as for reminder_set",
        json_schema_extra=COMPACT_HIDDEN,
    )
    weekday: int | None = Field(
        None, ge=0, le=6, description="as for reminder_set", json_schema_extra=COMPACT_HIDDEN
    )
    day: int | None = Field(
        None, ge=1, le=31, description="as for reminder_set", json_schema_extra=COMPACT_HIDDEN
    )
    interval: int | None = Field(
        None,
        ge=1,
        le=MAX_INTERVAL,
        description="as for reminder_set",
        json_schema_extra=COMPACT_HIDDEN,
    )
    every_minutes: int | None = Field(
        None,
        ge=1,
        le=MAX_EVERY_MINUTES,
        description="as for reminder_set",
        json_schema_extra=COMPACT_HIDDEN,
    )
    to: str | None = Field(
        None,
        pattern=HHMM_PATTERN,
        description="as for reminder_set",
        json_schema_extra=COMPACT_HIDDEN,
    )
    until: str | None = Field(
        None,
        pattern=UNTIL_PATTERN,
        description="as for reminder_set",
        json_schema_extra=COMPACT_HIDDEN,
    )
    count: int | None = Field(
        None,
        ge=1,
        le=MAX_COUNT,
        description="as for reminder_set",
        json_schema_extra=COMPACT_HIDDEN,
    )
    no_limit: bool | None = Field(
        None,
        description="true: the reminder repeats with no end (drops until and count)",
        json_schema_extra=COMPACT_HIDDEN,
    )
    content: ContentText | None = Field(None, description="the new text, if it changes")
    who: list[WhoItem] | None = Field(
        None, min_length=1, max_length=MAX_WHO, description="as for reminder_set"
    )

    _reference = field_validator("reminder_id")(check_reference)

    @model_validator(mode="after")
    def _check_change(self, info: ValidationInfo) -> Self:
        given = [name for name in SCHEDULE_FIELDS if getattr(self, name) is not None]
        if self.no_limit and (given or self.when is not None):
            raise ValueError("no_limit drops the limits: send it without a new time or limit")
        if self.no_limit:
            return self
        if not given and self.when is None and self.content is None and self.who is None:
            raise ValueError("nothing to change: give a new time (when) or content")
        ctx = validation_context(info)
        if ctx is not None and not given and self.when is None and _names_a_time(ctx.text):
            # "change #1 to friday at 5pm" stored as the text "friday at 5pm" is wrong.
            raise ValueError(
                "the message names a new time: pass it in when (e.g. 'friday at 5pm'), "
                "and content only if the reminder's text changes"
            )
        if self.when is not None and ctx is not None:
            check_edit_words(ctx, self.when)
            if not keeps_rule(read_phrase(self.when)):
                self.new_rule(ctx, self.rule_fields(ctx, None))  # as for reminder_set
            elif given:  # what a bare time means depends on the reminder: no comparing
                raise ValueError(
                    f"when {self.when!r} keeps the reminder's day or rule: leave type and time out"
                )
        # Structured fields alone are a merge into the reminder's own rule (see
        # `merged_rule`): checked as a whole once the reminder is read, at execution.
        return self

    def structured(self) -> dict[str, Any]:
        raw = {name: getattr(self, name) for name in SCHEDULE_FIELDS}
        return {name: value for name, value in raw.items() if value is not None}

    def rule_fields(self, ctx: MessageContext, current: ReminderView | None) -> dict[str, Any]:
        """The new rule's structured fields: from `when` (a bare time keeps `current`'s
        day or rule), checked against any structured fields given too; else those."""
        if self.no_limit:
            return {} if current is None else rule_fields(current.schedule)
        if self.when is None:
            return merged_rule(self.structured(), current)
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
    description=(
        "Change one of this chat's reminders: its time or repeat rule, its end, its text, or "
        "who it is for. Unchanged parts are left out."
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
async def reminder_update(
    ctx: MessageContext,
    args: ReminderUpdateArgs,
    service: ReminderService,
) -> FunctionResult:
    try:
        updated = await change_reminder(ctx, args)
    except (StorageError, AudienceRefused, ValueError) as exc:
        return refused(exc, ctx.text, {"updated": False})
    text = describe_reminder(updated, ctx.zone)
    return FunctionResult.direct(
        f"✏️ Updated reminder {text}",
        data={"updated": True, **snapshot(updated)},
        value=updated,
        touched=touched(updated),
    )


def merged_rule(given: dict[str, Any], current: ReminderView | None) -> dict[str, Any]:
    """Structured fields sent for an edit, merged into the reminder's own rule: only what
    was sent changes. A new type starts afresh; a one-time moment ("YYYY-MM-DD HH:MM",
    in_minutes) is a one-time reminder; a bare "HH:MM" for a one-time reminder keeps its
    date."""
    if current is None or not given:
        return given
    schedule = current.schedule
    kind = given.get("type")
    time_text = str(given.get("time") or "").strip()
    if kind is None and (given.get("in_minutes") is not None or " " in time_text):
        return given
    if kind is not None and kind != schedule.kind:
        return given
    own = rule_fields(schedule) | limit_fields(schedule)
    if schedule.kind == "once" and time_text and " " not in time_text:
        given = {**given, "time": f"{schedule.on_date} {time_text}"}
    return {**own, **given}


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
