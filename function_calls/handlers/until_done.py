"""“Until done” reminders: the schedule that repeats until someone acknowledges, and the
words that say so.

An until-done reminder repeats at its own step ("every 10 minutes until someone says
done"), or, set for one time ("at 9pm … until I say done"), from that time every
`NAG_EVERY`. It is always capped: at most `reminders.until_done_cap` times (12 by
default), or fewer when the user said so; the confirmation names the cap and the last
time, so nobody is nagged all night by a reminder nobody answers. A daily or weekly rule
can't be until done: done on Monday would end Tuesday's too, so it is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.grammar import GrammarError
from groupmate.function_calls.grammar.until_done import ack_for, check_repeat, split_until_done
from groupmate.function_calls.handlers.reminder_limits import with_limits
from groupmate.function_calls.handlers.until_done_words import times_from
from groupmate.storage.recurrence import UNTIL_DONE_CAP, Schedule
from groupmate.storage.vocabulary import AckRule

NAG_EVERY = timedelta(minutes=10)


@dataclass(frozen=True, slots=True)
class UntilDoneCap:
    """The most times an until-done reminder fires (`reminders.until_done_cap`); the bot
    provides it as a dependency, by type."""

    times: int = UNTIL_DONE_CAP


def until_done_cap(ctx: MessageContext) -> int:
    return (ctx.deps.get(UntilDoneCap) or UntilDoneCap()).times


class _Asked(Protocol):
    """`ReminderArgs` as this module reads it."""

    ack: AckRule | None
    count: int | None

    def resolve(self, ctx: MessageContext) -> tuple[Schedule, datetime]: ...


def scheduled(args: _Asked, ctx: MessageContext) -> tuple[Schedule, datetime]:
    """The schedule to store and its first time: the one the time fields name, repeated
    and capped when `ack` asks for "until done"; ValueError for one that can't be."""
    schedule, first = args.resolve(ctx)
    if args.ack is None:
        return schedule, first
    return nag_schedule(schedule, first, until_done_cap(ctx), args.count), first


def nag_schedule(schedule: Schedule, first: datetime, cap: int, count: int | None) -> Schedule:
    """The schedule of an until-done reminder whose rule, as asked, is `schedule` (first
    firing at `first`, `count` times if the user said so); ValueError, in words for the
    user, for one that can't be."""
    if schedule.kind == "once":
        local = first.astimezone(schedule.zone)
        wall = local.time().replace(microsecond=0)
        return Schedule(
            "interval", wall, schedule.timezone, on_date=local.date(), every=NAG_EVERY, count=cap
        )
    check_repeat(schedule.kind, schedule.kind == "interval")
    if count is not None:
        if count > cap:
            raise ValueError(
                f"an “until done” reminder repeats at most {cap} times here; ask for {cap} or fewer"
            )
        return schedule  # the user's own limit, within the cap
    if schedule.limited and times_from(schedule, first) <= cap:
        return schedule  # an end ("until 17:00") that comes before the cap
    # The cap counts from the first time it fires (`with_limits` knows how, in a window).
    return with_limits(schedule, first, until=schedule.until, count=cap)


def read_until_done(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A `when` that says "until someone says done" gives `ack` (the same as one given);
    the phrase without it is the time."""
    try:
        phrase, until = split_until_done(data["when"])
    except GrammarError as exc:
        raise ValueError(str(exc)) from None
    if until is None:
        return phrase, data
    raw_who = data.get("who")
    who: list[Any] = raw_who if isinstance(raw_who, list) else []
    names = tuple(str(entry)[1:] for entry in who if str(entry).startswith("@"))
    if until.names:
        try:
            ack_for(until, names, "everyone" in who, "me" in who)
        except GrammarError as exc:
            raise ValueError(str(exc)) from None
    given = data.get("ack")
    if given is not None and given != until.rule:
        raise ValueError(f"when says “{until.text}”, which is not ack {given!r}")
    return phrase, {**data, "when": phrase, "ack": until.rule}


def check_ack_people(ack: AckRule | None, who: list[str] | None) -> None:
    """ "each" waits for the people named: not for a whole chat, whose people can't be
    listed (the words say who; this checks a model's fields the same way)."""
    who = who or []
    if ack == "each" and (not any(entry.startswith("@") for entry in who) or "everyone" in who):
        raise ValueError(
            "“until everyone says done” needs the people named: remind @bob and @carol"
        )


def check_ack_said(ctx: MessageContext, ack: AckRule | None) -> None:
    """A model's call keeps what the user's message says: "until someone says done" in
    their words and no `ack` would be a reminder that waits for no one. Words that may be
    a rule or text are asked about, as `/remind` does."""
    if ack is not None or not ctx.text or ctx.text.startswith("/"):
        return  # a command's arguments come from this very grammar
    try:
        _, until = split_until_done(ctx.text)
    except GrammarError as exc:
        raise ValueError(
            f"the user's words need a question first: {exc} Ask the user; set nothing yet"
        ) from None
    if until is not None:
        raise ValueError(f"the message says “{until.text}”: pass ack {until.rule!r} too")


def check_said(args: _Asked, ctx: MessageContext) -> None:
    """Validation's part: the `ack` the message says is there, and the schedule it makes
    can be (`scheduled`)."""
    check_ack_said(ctx, args.ack)
    scheduled(args, ctx)
