"""`ReminderArgs`: the contract for setting a reminder, shared by the tool, commands and API.

Stage 1 (the JSON Schema the model sees) checks shapes and ranges. Stage 2 (the
validators below) checks what needs the other fields or the chat's clock: the right
fields for the type, a real date, a time not in the past. The check against the time the
user's own message names is :mod:`function_calls.handlers.reminder_words_check`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, time, timedelta
from typing import Annotated, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationInfo,
    field_validator,
    model_validator,
)

from groupmate.function_calls.context import MessageContext, validation_context
from groupmate.function_calls.handlers.reminder_limits import (
    UNTIL_PATTERN,
    read_until,
    with_limits,
    within_day,
)
from groupmate.function_calls.handlers.reminder_words import format_local
from groupmate.function_calls.handlers.reminder_words_check import (
    check_agreement,
    check_the_words,
    phrase_rule,
    read_phrase,
)
from groupmate.function_calls.schema import COMPACT_HIDDEN, COMPACT_REQUIRED
from groupmate.storage.recurrence import (
    INTERVAL_KINDS,
    MAX_COUNT,
    MAX_INTERVAL,
    DayKind,
    Schedule,
    local_instant,
)
from groupmate.storage.workdays import calendar_named

MAX_CONTENT = 1000
MAX_AHEAD = timedelta(days=3660)
MAX_IN_MINUTES = 60 * 24 * 366
TIME_PATTERN = r"^([0-9]{4}-[0-9]{2}-[0-9]{2} )?[0-9]{1,2}:[0-9]{2}$"
HHMM_PATTERN = r"^[0-9]{1,2}:[0-9]{2}$"
MAX_EVERY_MINUTES = 24 * 60 - 1
_WHO_PATTERN = r"^(me|everyone|@[^ \t\r\n@]{1,64})$"  # no \s: llama.cpp grammars lack it
MAX_WHO = 10
MAX_WHEN = 200
# Each field's rule, once: ReminderArgs and ReminderUpdateArgs (an edit) share them.
WhoItem = Annotated[str, StringConstraints(pattern=_WHO_PATTERN)]
ContentText = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_CONTENT)
]


def _wall_time(text: str) -> time:
    hours, minutes = (int(part) for part in text.split(":"))
    if not (0 <= hours <= 23 and 0 <= minutes <= 59):
        raise ValueError(f"{text!r} is not a time of day; use 24-hour HH:MM, e.g. 09:05 or 18:30")
    return time(hours, minutes)


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a calendar date; use YYYY-MM-DD") from None


class ReminderArgs(BaseModel):
    """Set a reminder. Times are wall-clock times in the chat's time zone."""

    model_config = ConfigDict(extra="forbid")

    when: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_WHEN,
        description=(
            "the time in the user's own words, e.g. 'tomorrow at 9', 'in 30 minutes', "
            "'every monday at 9am', 'on dec 24 at 18:00', '明天下午3点'; read exactly in the "
            "chat's time zone"
        ),
        json_schema_extra=COMPACT_REQUIRED,
    )
    type: DayKind | None = Field(
        default=None,
        validate_default=True,
        description="without when: once, daily, weekly, weekdays (Monday to Friday) or monthly",
        json_schema_extra=COMPACT_HIDDEN,
    )
    every_minutes: int | None = Field(
        default=None,
        ge=1,
        le=MAX_EVERY_MINUTES,
        description=(
            "repeat within the day every N minutes, on the days type names (daily, "
            "weekdays, weekly); time: the first of each day (default: one step from now)"
        ),
        json_schema_extra=COMPACT_HIDDEN,
    )
    time: str | None = Field(
        default=None,
        pattern=TIME_PATTERN,
        validate_default=True,
        description='once: local "YYYY-MM-DD HH:MM"; other types: "HH:MM" (24-hour)',
        json_schema_extra=COMPACT_HIDDEN,
    )
    in_minutes: int | None = Field(
        default=None,
        ge=1,
        le=MAX_IN_MINUTES,
        validate_default=True,
        description="once only, instead of time: fire this many minutes from now",
        json_schema_extra=COMPACT_HIDDEN,
    )
    content: ContentText = Field(description="what to remind about, in the user's words")
    weekday: int | None = Field(
        default=None,
        ge=0,
        le=6,
        validate_default=True,
        description="weekly only: 0 = Monday ... 6 = Sunday",
        json_schema_extra=COMPACT_HIDDEN,
    )
    day: int | None = Field(
        default=None,
        ge=1,
        le=31,
        validate_default=True,
        description="monthly only: day of month 1-31 (31 = last day of shorter months)",
        json_schema_extra=COMPACT_HIDDEN,
    )
    interval: int | None = Field(
        default=None,
        ge=1,
        le=MAX_INTERVAL,
        validate_default=True,
        description="daily, weekly, monthly: repeat every N days/weeks/months (default 1)",
        json_schema_extra=COMPACT_HIDDEN,
    )
    to: str | None = Field(
        default=None,
        pattern=HHMM_PATTERN,
        description='every_minutes only: the last time of each day, "HH:MM", after time',
        json_schema_extra=COMPACT_HIDDEN,
    )
    until: str | None = Field(
        default=None,
        pattern=UNTIL_PATTERN,
        description='repeating only: the last day "YYYY-MM-DD" (or "YYYY-MM-DD HH:MM")',
        json_schema_extra=COMPACT_HIDDEN,
    )
    count: int | None = Field(
        default=None,
        ge=1,
        le=MAX_COUNT,
        description="repeating only: how many times in all",
        json_schema_extra=COMPACT_HIDDEN,
    )
    who: list[WhoItem] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_WHO,
        description=(
            'who to remind: "me" (the sender, the default), "@name" of a chat member, or "everyone"'
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _read_when(cls, data: Any, info: ValidationInfo) -> Any:
        """`when` becomes the structured fields, read by the `/remind` grammar; given as
        well, those must mean the same time."""
        if not isinstance(data, dict):
            return data
        if data.get("when") is None and data.get("type") is None:
            # Only a one-time reminder has a date or a delay: saying so is not a guess
            # (small models often leave the type out).
            timed = isinstance(data.get("time"), str) and " " in data["time"].strip()
            if timed or data.get("in_minutes") is not None:
                return {**data, "type": "once"}
        if not isinstance(data.get("when"), str):
            return data
        ctx = validation_context(info)
        if ctx is None or not data["when"].strip():
            return data  # stage 1 only: the phrase is read once the chat's clock is known
        phrase = data["when"]
        content = data.get("content")
        spec = read_phrase(phrase, content if isinstance(content, str) else None)
        fields = phrase_rule(spec, ctx, None)
        given = {name: data[name] for name in SCHEDULE_FIELDS if data.get(name) is not None}
        if given:
            check_agreement(phrase, fields, given, ctx)
        rest = {name: value for name, value in data.items() if name not in SCHEDULE_FIELDS}
        return {**rest, **fields}

    @field_validator("time")
    @classmethod
    def _check_time(cls, value: str | None, info: ValidationInfo) -> str | None:
        kind = info.data.get("type")
        if value is None and kind not in (None, "once") and not info.data.get("every_minutes"):
            raise ValueError(f'a {kind} reminder needs time as "HH:MM"')
        if value is None or kind is None:
            return value
        if kind == "once":
            if " " not in value:
                raise ValueError(
                    'a one-time reminder needs the date too: "YYYY-MM-DD HH:MM" (or use in_minutes)'
                )
            day_text, clock_text = value.split(" ")
            normalized = f"{_date(day_text).isoformat()} {_wall_time(clock_text):%H:%M}"
            ctx = validation_context(info)
            if ctx is not None:
                _check_future(_once_instant(normalized, ctx), ctx)
            return normalized
        if " " in value:
            raise ValueError(f'a {kind} reminder takes only the time of day, "HH:MM"')
        return f"{_wall_time(value):%H:%M}"

    @field_validator("in_minutes")
    @classmethod
    def _check_in_minutes(cls, value: int | None, info: ValidationInfo) -> int | None:
        kind = info.data.get("type")
        if kind is None or "time" not in info.data:
            return value  # the type or time was already reported
        has_time = info.data["time"] is not None
        if kind != "once":
            if value is not None:
                raise ValueError("in_minutes only works with type 'once'")
        elif value is not None and has_time:
            raise ValueError("give either time or in_minutes, not both")
        elif value is None and not has_time:
            raise ValueError('a one-time reminder needs time ("YYYY-MM-DD HH:MM") or in_minutes')
        return value

    @field_validator("weekday")
    @classmethod
    def _check_weekday(cls, value: int | None, info: ValidationInfo) -> int | None:
        kind = info.data.get("type")
        if kind == "weekly" and value is None:
            raise ValueError("a weekly reminder needs weekday: 0 = Monday ... 6 = Sunday")
        if kind not in (None, "weekly") and value is not None:
            raise ValueError("weekday is only used with type 'weekly'")
        return value

    @field_validator("day")
    @classmethod
    def _check_day(cls, value: int | None, info: ValidationInfo) -> int | None:
        kind = info.data.get("type")
        if kind == "monthly" and value is None:
            raise ValueError("a monthly reminder needs day: 1-31")
        if kind not in (None, "monthly") and value is not None:
            raise ValueError("day is only used with type 'monthly'")
        return value

    @field_validator("interval")
    @classmethod
    def _check_interval(cls, value: int | None, info: ValidationInfo) -> int | None:
        kind = info.data.get("type")
        if value not in (None, 1) and kind not in (None, *INTERVAL_KINDS):
            raise ValueError("interval only works with daily, weekly and monthly reminders")
        return None if value == 1 else value

    @field_validator("type")
    @classmethod
    def _check_type(cls, value: DayKind | None, info: ValidationInfo) -> DayKind | None:
        # Without a chat clock (stage 1 only) a `when` is not read yet; else it set type.
        if value is None and info.data.get("when") is None:
            raise ValueError(
                "give when, the time in words (e.g. 'tomorrow at 9'), or type and time"
            )
        return value

    @model_validator(mode="after")
    def _check_within_and_limits(self) -> Self:
        within = ("daily", "weekdays", "weekly")
        if self.every_minutes is not None and (self.type not in within or self.interval):
            raise ValueError("every_minutes works with type daily, weekdays or weekly")
        if self.to is not None:
            if self.every_minutes is None or self.time is None:
                raise ValueError(
                    "to is the last time of a repeat within the day: give "
                    "every_minutes and time (the first) too"
                )
            if _wall_time(self.to) <= _wall_time(self.time):
                raise ValueError(f"to {self.to} must be after time {self.time}, the same day")
        if (self.until is not None or self.count is not None) and self.type == "once":
            raise ValueError("until and count are for repeating reminders")
        return self

    @model_validator(mode="after")
    def _check_resolvable(self, info: ValidationInfo) -> Self:
        ctx = validation_context(info)
        if ctx is not None:
            schedule, first = self.resolve(ctx)
            check_the_words(ctx, (schedule, first), self.content)
        return self

    def resolve(self, ctx: MessageContext) -> tuple[Schedule, datetime]:
        """The schedule in the chat's zone and its first fire time (UTC)."""
        if self.type is None:
            raise ValueError("give when, or type and time")
        now = ctx.clock()
        if self.in_minutes is not None:
            first = now + timedelta(minutes=self.in_minutes)
            return Schedule.once_at(first, ctx.timezone), first
        if self.type == "once":
            assert self.time is not None
            day_text, clock_text = self.time.split(" ")
            schedule = Schedule(
                "once", _wall_time(clock_text), ctx.timezone, on_date=_date(day_text)
            )
            first = _check_future(_once_instant(self.time, ctx), ctx)
            return schedule, first
        schedule = self._rule(ctx, now)
        upcoming = schedule.first_after(now)
        assert upcoming is not None  # every recurring rule matches within a month
        if self.interval:
            # Every N days, weeks or months, counted from the first occurrence.
            first_day = upcoming.astimezone(ctx.zone).date()
            schedule = replace(schedule, interval=self.interval, on_date=first_day)
        if self.until is not None or self.count is not None:
            until = None if self.until is None else read_until(self.until, ctx.timezone)
            schedule = with_limits(schedule, upcoming, until=until, count=self.count)
        return schedule, upcoming

    def _rule(self, ctx: MessageContext, now: datetime) -> Schedule:
        start = None if self.time is None else _wall_time(self.time)
        if self.every_minutes is not None:
            end = None if self.to is None else _wall_time(self.to)
            return within_day(
                self.type or "daily",
                self.every_minutes,
                start,
                end,
                weekday=self.weekday,
                timezone=ctx.timezone,
                now=now,
            )
        assert self.type is not None and start is not None
        return Schedule(
            self.type,
            start,
            ctx.timezone,
            weekday=self.weekday,
            day=self.day,
            calendar=calendar_named(ctx.workdays) if self.type == "weekdays" else None,
        )


SCHEDULE_FIELDS = (
    "type",
    "time",
    "in_minutes",
    "weekday",
    "day",
    "interval",
    "every_minutes",
    "to",
    "until",
    "count",
)


def _once_instant(text: str, ctx: MessageContext) -> datetime:
    day_text, clock_text = text.split(" ")
    return local_instant(_date(day_text), _wall_time(clock_text), ctx.zone)


def _check_future(instant: datetime, ctx: MessageContext) -> datetime:
    now = ctx.clock()
    if instant <= now:
        raise ValueError(
            f"{format_local(instant, ctx.zone, with_year=True)} is in the past: it is now "
            f"{format_local(now, ctx.zone, with_year=True)} in {ctx.timezone}"
        )
    if instant - now > MAX_AHEAD:
        raise ValueError("that is more than ten years ahead; pick a nearer date")
    return instant
