"""The words check: a model's reminder call must mean the time the user's message names.

A `when` phrase is read by the `/remind` grammar (`read_phrase`, `phrase_rule`); the
message's own time words, read the same way, are compared with what the arguments mean
(`check_agreement`, `check_edit_words`), so a small model's date arithmetic is checked,
not trusted. `ReminderArgs` runs this check while it validates.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from groupmate.function_calls.context import MESSAGE_CONTEXT_KEY, MessageContext
from groupmate.function_calls.grammar import (
    Clock,
    GrammarError,
    ParsedReminder,
    WhenSpec,
    about_existing,
    asked_reminder,
    named_when,
    speaks_of_reminders,
    split_when,
)
from groupmate.function_calls.grammar.limits import limit_arguments
from groupmate.function_calls.handlers.reminder_limits import limit_fields, rule_fields
from groupmate.function_calls.handlers.reminder_words import describe_schedule, format_local
from groupmate.function_calls.language import is_chinese
from groupmate.storage.recurrence import Schedule

if TYPE_CHECKING:
    from groupmate.storage import ReminderView


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


def keeps_rule(spec: WhenSpec) -> bool:
    """Only a time of day or a limit ("at 10", "until friday", "3 times"): an edit that
    keeps the reminder's day and rule."""
    only_limits = spec.limited and spec.clock is None and spec.part is None
    return bare_clock(spec) or (only_limits and not (spec.day or spec.repeat or spec.delay))


def phrase_rule(
    spec: WhenSpec, ctx: MessageContext, current: ReminderView | None
) -> dict[str, Any]:
    """The structured fields for `spec` at the chat's clock. With `current` (an edit), a
    bare time or a limit keeps that reminder's day or rule (and a bare time its limits)."""
    if current is not None and keeps_rule(spec):
        schedule = current.schedule
        rule = rule_fields(schedule)
        wall = schedule.wall_time
        if spec.clock is not None:
            wall = spec.wall_time()[0]
            day = rule["time"].rpartition(" ")[0]
            rule["time"] = f"{day} {wall:%H:%M}".strip()
        if not spec.limited:
            return rule | limit_fields(schedule)
        try:
            within = schedule.kind == "interval"
            return rule | limit_arguments(spec, wall, ctx.now(), within=within)
        except GrammarError as exc:
            raise ValueError(f"{exc} Write when like {WHEN_EXAMPLES}.") from None
    if current is not None and spec.clock is None and spec.part is None and spec.delay is None:
        # A new day or rule without a time of day keeps the reminder's own time: "make
        # it daily" is every day at its 09:30, not at the grammar's 09:00 default.
        wall = current.schedule.wall_time
        kept = Clock(wall.hour, wall.minute, exact=True, text=f"{wall:%H:%M}")
        spec = replace(spec, clock=kept)
    try:
        fields = spec.resolve(ctx.now()).arguments()
    except GrammarError as exc:
        raise ValueError(f"{exc} Write when like {WHEN_EXAMPLES}.") from None
    if current is not None and not spec.limited and spec.repeat is not None:
        # A new rule keeps the reminder's limit, which the words didn't name.
        fields |= limit_fields(current.schedule)
    return fields


def check_the_words(ctx: MessageContext, timed: tuple[Schedule, datetime], content: str) -> None:
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
        spec.until.text if spec.until else "",
        spec.count_text,
    ]
    chinese = any(is_chinese(text) for text in texts)
    if spec.clock is not None and not chinese:
        texts[3] = f"at {texts[3]}"
    phrase = ("" if chinese else " ").join(text for text in texts if text)
    try:
        if _same_time(_timed(read_phrase(phrase), ctx), wanted):
            return f", e.g. when={phrase!r}"
    except (ValueError, GrammarError):
        pass
    return ""


def _timed(spec: WhenSpec, ctx: MessageContext) -> tuple[Schedule, datetime]:
    # ReminderArgs runs this check while it validates, and this check validates with
    # ReminderArgs: imported when called, once both modules are loaded.
    from groupmate.function_calls.handlers.reminder_args import ReminderArgs

    fields = phrase_rule(spec, ctx, None)
    args = ReminderArgs.model_validate(
        {**fields, "content": "-"}, context={MESSAGE_CONTEXT_KEY: ctx}
    )
    return args.resolve(ctx)


def _check_the_language(ctx: MessageContext, content: str, asked: ParsedReminder | None) -> None:
    """A Chinese message's reminder keeps the user's words: a small model translated
    "休息" into "rest", and rewrote "开会" as "会议". `asked` is the grammar's reading."""
    if not is_chinese(ctx.text) or content.casefold() in ctx.text.casefold():
        return  # not Chinese, or the message's own words ("明天9点提醒我 standup")
    if asked is None and is_chinese(content):
        return  # nothing to compare with: Chinese, at least
    problem = "is not the user's words" if is_chinese(content) else "is not in their language"
    example = f" ({asked.content!r})" if asked is not None else ""
    raise ValueError(f"content {content!r} {problem}: use the user's own words{example}")


def _same_time(one: tuple[Schedule, datetime], other: tuple[Schedule, datetime]) -> bool:
    """The same rule, first firing within the same minute."""
    (rule, first), (other_rule, other_first) = one, other
    same_rule = _rule_key(rule) == _rule_key(other_rule)
    return same_rule and abs(first - other_first) < timedelta(minutes=1)


def _rule_key(rule: Schedule) -> tuple[object, ...]:
    """What makes two rules the same, apart from when they start: a model's call that
    drops the hours or the limit the message names is not the same reminder."""
    return (
        rule.kind,
        rule.interval,
        rule.every,
        rule.window_end,
        rule.on_days,
        rule.until,
        rule.count,
    )


def _spoken(timed: tuple[Schedule, datetime], ctx: MessageContext) -> str:
    schedule, first = timed
    text = format_local(first, ctx.zone, with_year=True)
    return f"{text}, {describe_schedule(schedule)}" if schedule.recurring else text


def check_agreement(
    phrase: str, fields: dict[str, Any], given: dict[str, Any], ctx: MessageContext
) -> None:
    """Both `when` and structured fields: they must name the same time and rule."""
    from groupmate.function_calls.handlers.reminder_args import ReminderArgs  # as in `_timed`

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
