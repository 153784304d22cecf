"""`ReminderArgs`: the contract for setting a reminder, shared by the tool, commands and API.

Stage 1 (the JSON Schema the model sees) checks shapes and ranges. Stage 2 (the
validators below) checks what needs the other fields or the chat's clock: the right
fields for the type, a real date, a time not in the past.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from function_calls.context import MESSAGE_CONTEXT_KEY, MessageContext, validation_context
from function_calls.grammar import (
    CJK,
    GrammarError,
    ParsedReminder,
    WhenSpec,
    about_existing,
    asked_reminder,
    named_when,
    speaks_of_reminders,
    split_when,
)
from function_calls.schema import COMPACT_HIDDEN, COMPACT_REQUIRED

if TYPE_CHECKING:
    from storage import ReminderView

from storage.recurrence import (
    INTERVAL_KINDS,
    MAX_INTERVAL,
    Kind,
    Schedule,
    format_local,
    local_instant,
)

MAX_CONTENT = 1000
MAX_AHEAD = timedelta(days=3660)
MAX_IN_MINUTES = 60 * 24 * 366
_TIME_PATTERN = r"^([0-9]{4}-[0-9]{2}-[0-9]{2} )?[0-9]{1,2}:[0-9]{2}$"
_WHO_PATTERN = r"^(me|everyone|@[^ \t\r\n@]{1,64})$"  # no \s: llama.cpp grammars lack it
MAX_WHO = 10
MAX_WHEN = 200


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
    type: Kind | None = Field(
        default=None,
        validate_default=True,
        description="without when: once, daily, weekly, weekdays (Monday to Friday) or monthly",
        json_schema_extra=COMPACT_HIDDEN,
    )
    time: str | None = Field(
        default=None,
        pattern=_TIME_PATTERN,
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
    content: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_CONTENT)
    ] = Field(description="what to remind about, in the user's words")
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
    who: list[Annotated[str, StringConstraints(pattern=_WHO_PATTERN)]] | None = Field(
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
        if value is None and kind not in (None, "once"):
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
    def _check_type(cls, value: Kind | None, info: ValidationInfo) -> Kind | None:
        # Without a chat clock (stage 1 only) a `when` is not read yet; else it set type.
        if value is None and info.data.get("when") is None:
            raise ValueError(
                "give when, the time in words (e.g. 'tomorrow at 9'), or type and time"
            )
        return value

    @model_validator(mode="after")
    def _check_resolvable(self, info: ValidationInfo) -> Self:
        ctx = validation_context(info)
        if ctx is not None:
            schedule, first = self.resolve(ctx)
            _check_the_words(ctx, (schedule, first), self.content)
        return self

    def resolve(self, ctx: MessageContext) -> tuple[Schedule, datetime]:
        """The schedule in the chat's zone and its first fire time (UTC)."""
        if self.type is None:
            raise ValueError("give when, or type and time")
        now = ctx.clock()
        if self.in_minutes is not None:
            first = now + timedelta(minutes=self.in_minutes)
            return Schedule.once_at(first, ctx.timezone), first
        assert self.time is not None
        if self.type == "once":
            day_text, clock_text = self.time.split(" ")
            schedule = Schedule(
                "once", _wall_time(clock_text), ctx.timezone, on_date=_date(day_text)
            )
            first = _check_future(_once_instant(self.time, ctx), ctx)
            return schedule, first
        schedule = Schedule(
            self.type, _wall_time(self.time), ctx.timezone, weekday=self.weekday, day=self.day
        )
        upcoming = schedule.first_after(now)
        assert upcoming is not None  # every recurring rule matches within a month
        if self.interval:
            # Every N days, weeks or months, counted from the first occurrence.
            first_day = upcoming.astimezone(ctx.zone).date()
            schedule = replace(schedule, interval=self.interval, on_date=first_day)
        return schedule, upcoming


SCHEDULE_FIELDS = ("type", "time", "in_minutes", "weekday", "day", "interval")
WHEN_EXAMPLES = (
    "'tomorrow at 9', 'in 30 minutes', 'every monday at 9am', 'every day at 18:30', "
    "'on dec 24 at 18:00', 'friday at 5pm', '明天下午3点', '每周一上午9点', '10分钟后'"
)


def read_phrase(phrase: str, content: str | None = None) -> WhenSpec:
    """What a `when` phrase says, by the same deterministic grammar as `/remind`; a
    ValueError with accepted examples for one it can't read exactly (never a guess).
    Words beyond the time are refused, unless they are the reminder's `content`."""
    phrase = phrase.replace("_", " ")  # "every_monday_at_9", as small models write it
    try:
        spec, rest = split_when(phrase.strip())
        if spec.empty:
            raise GrammarError(f"I couldn't find a time in {phrase!r}.")
        if rest and (content is None or rest.casefold() != content.strip().casefold()):
            raise GrammarError(
                f"when should hold only the time, not {rest!r}; put that in content."
            )
    except GrammarError as exc:
        raise ValueError(f"{exc} Write when like {WHEN_EXAMPLES}.") from None
    return spec


def bare_clock(spec: WhenSpec) -> bool:
    """Only a time of day ("at 10"): for an edit, the reminder keeps its day or rule."""
    return spec.clock is not None and not (spec.day or spec.repeat or spec.delay)


def phrase_rule(
    spec: WhenSpec, ctx: MessageContext, current: ReminderView | None
) -> dict[str, Any]:
    """The structured fields for `spec` at the chat's clock. With `current` (an edit), a
    bare time keeps that reminder's day or rule."""
    if current is not None and bare_clock(spec):
        wall, _ = spec.wall_time()
        schedule = current.schedule
        if schedule.kind == "once":
            assert schedule.on_date is not None
            return {"type": "once", "time": f"{schedule.on_date.isoformat()} {wall:%H:%M}"}
        keep = {"weekday": schedule.weekday, "day": schedule.day}
        if schedule.interval > 1:
            keep["interval"] = schedule.interval
        rule = {"type": schedule.kind, "time": f"{wall:%H:%M}"}
        return rule | {key: value for key, value in keep.items() if value is not None}
    try:
        return spec.resolve(ctx.now()).arguments()
    except GrammarError as exc:
        raise ValueError(f"{exc} Write when like {WHEN_EXAMPLES}.") from None


def _check_the_words(ctx: MessageContext, timed: tuple[Schedule, datetime], content: str) -> None:
    """When the user's own message names the time exactly (the `/remind` grammar reads
    it), the reminder must be that time: a small model's date arithmetic is checked, not
    trusted. A time the grammar would ask about is asked about, not set."""
    if not ctx.text or ctx.text.startswith("/"):
        return  # no message, or a command: its arguments come from this very grammar
    if about_existing(ctx.text):
        raise ValueError(
            "the message is about a reminder that exists (it says 'again' or names one): "
            "snooze or update that one; set no new reminder"
        )
    try:
        asked = asked_reminder(ctx.text, ctx.now())
        # Without "remind", a time named is still the user's: "ok, do it at 5".
        said = asked.spec if asked is not None else named_when(ctx.text)
    except GrammarError as exc:
        raise ValueError(
            f"the user's words need a question first: {exc} Ask the user; set nothing yet"
        ) from None
    if not said.empty:
        _require_the_said_time(ctx, said, timed, "these arguments mean")
    elif not speaks_of_reminders(ctx.text):
        # "translate 'good morning' to French" became a reminder for tomorrow at 10.
        raise ValueError(
            "the message neither asks for a reminder nor names a time: set nothing, "
            "answer the message itself"
        )
    # Else "remind us about that": the time may be in the earlier chat.
    _check_the_language(ctx, content, asked)


def check_edit_words(ctx: MessageContext, phrase: str) -> None:
    """An edit's `when` must be the time the message names: "把提醒1改到早上8点" passed as
    'every weekday at 08:00' changes a rule nobody asked to change."""
    if not ctx.text or ctx.text.startswith("/"):
        return  # no message, or a command: its arguments come from this very grammar
    try:
        said = named_when(ctx.text)
    except GrammarError:
        return  # the message's time is unclear: the model's own phrase is read exactly
    if said.empty:
        return
    given = read_phrase(phrase)
    if bare_clock(said):
        if not bare_clock(given):
            raise ValueError(
                "the message names only a time of day, which keeps the reminder's day and "
                f"rule, but when {phrase!r} changes them; pass just the user's time words in "
                "when"
            )
        # Day and rule stay the reminder's own: only the time of day is compared. (Resolved
        # as a new reminder, "7:30" said at 10:20 would be asked about: tonight or tomorrow?)
        try:
            said_wall = said.wall_time()[0]
        except GrammarError:
            return
        try:
            given_wall = given.wall_time()[0]
        except GrammarError as exc:
            raise ValueError(f"{exc} Write when like {WHEN_EXAMPLES}.") from None
        if given_wall != said_wall:
            assert said.clock is not None  # a bare clock reading
            raise ValueError(
                f"the message asks for {said_wall:%H:%M}, but when {phrase!r} means "
                f"{given_wall:%H:%M}; pass the user's time words in when, e.g. "
                f"when={said.clock.text!r}"
            )
        return
    meant = _timed(given, replace(ctx, text=""))
    _require_the_said_time(ctx, said, meant, f"when {phrase!r} means")


def _require_the_said_time(
    ctx: MessageContext, said: WhenSpec, meant: tuple[Schedule, datetime], what: str
) -> None:
    """`meant` must be the time the message's words `said`; else a repair that quotes
    those words for the model to copy."""
    plain = replace(ctx, text="")
    wanted = _timed(said, plain)
    if _same_time(meant, wanted):
        return
    raise ValueError(
        f"the message asks for {_spoken(wanted, ctx)} ({ctx.timezone}), but {what} "
        f"{_spoken(meant, ctx)}; pass the user's time words in when"
        + _suggestion(said, wanted, plain)
    )


def _suggestion(spec: WhenSpec, wanted: tuple[Schedule, datetime], ctx: MessageContext) -> str:
    """The message's own time words to copy (", e.g. when='周五下午4点'"), where a small
    model did not manage to translate them; only words that read back as exactly the
    wanted time are offered."""
    texts = [
        spec.delay.text if spec.delay else "",
        spec.repeat.text if spec.repeat else "",
        spec.day.text if spec.day else "",
        spec.clock.text if spec.clock else "",
    ]
    chinese = any(CJK.search(text) for text in texts)
    if spec.clock is not None and not chinese:
        texts[-1] = f"at {texts[-1]}"
    phrase = ("" if chinese else " ").join(text for text in texts if text)
    try:
        if _same_time(_timed(read_phrase(phrase), ctx), wanted):
            return f", e.g. when={phrase!r}"
    except (ValueError, GrammarError):
        pass
    return ""


def _timed(spec: WhenSpec, ctx: MessageContext) -> tuple[Schedule, datetime]:
    fields = phrase_rule(spec, ctx, None)
    args = ReminderArgs.model_validate(
        {**fields, "content": "-"}, context={MESSAGE_CONTEXT_KEY: ctx}
    )
    return args.resolve(ctx)


def _check_the_language(ctx: MessageContext, content: str, asked: ParsedReminder | None) -> None:
    """A Chinese message's reminder keeps the user's words: a small model translated
    "休息" into "rest", and rewrote "开会" as "会议". `asked` is the grammar's reading."""
    if not CJK.search(ctx.text) or content.casefold() in ctx.text.casefold():
        return  # not Chinese, or the message's own words ("明天9点提醒我 standup")
    if asked is None and CJK.search(content):
        return  # nothing to compare with: Chinese, at least
    problem = "is not the user's words" if CJK.search(content) else "is not in their language"
    example = f" ({asked.content!r})" if asked is not None else ""
    raise ValueError(f"content {content!r} {problem}: use the user's own words{example}")


def _same_time(one: tuple[Schedule, datetime], other: tuple[Schedule, datetime]) -> bool:
    """The same rule, first firing within the same minute."""
    (rule, first), (other_rule, other_first) = one, other
    same_rule = (rule.kind, rule.interval) == (other_rule.kind, other_rule.interval)
    return same_rule and abs(first - other_first) < timedelta(minutes=1)


def _spoken(timed: tuple[Schedule, datetime], ctx: MessageContext) -> str:
    schedule, first = timed
    text = format_local(first, ctx.zone, with_year=True)
    return f"{text}, {schedule.describe()}" if schedule.recurring else text


def check_agreement(
    phrase: str, fields: dict[str, Any], given: dict[str, Any], ctx: MessageContext
) -> None:
    """Both `when` and structured fields: they must name the same time and rule."""
    context = {MESSAGE_CONTEXT_KEY: ctx}
    by_phrase = ReminderArgs.model_validate({**fields, "content": "-"}, context=context)
    try:
        by_fields = ReminderArgs.model_validate({**given, "content": "-"}, context=context)
    except ValidationError:
        by_fields = None
    wanted = by_phrase.resolve(ctx)
    if by_fields is not None and _same_time(by_fields.resolve(ctx), wanted):
        return
    raise ValueError(
        f"when {phrase!r} means {_spoken(wanted, ctx)} ({ctx.timezone}), but type/time say "
        "something else; send only when"
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
