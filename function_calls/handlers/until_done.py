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

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.grammar.until_done import AckRule
from groupmate.function_calls.handlers.repeat_words import last_words
from groupmate.storage.recurrence import Schedule

NAG_EVERY = timedelta(minutes=10)
# The default of config's `reminders.until_done_cap`.
DEFAULT_CAP = 12


@dataclass(frozen=True, slots=True)
class UntilDoneCap:
    """The most times an until-done reminder fires (`reminders.until_done_cap`); the bot
    provides it as a dependency, by type."""

    times: int = DEFAULT_CAP


def until_done_cap(ctx: MessageContext) -> int:
    return (ctx.deps.get(UntilDoneCap) or UntilDoneCap()).times


def nag_schedule(schedule: Schedule, first: datetime, cap: int) -> Schedule:
    """The schedule of an until-done reminder whose rule, as asked, is `schedule` (first
    firing at `first`); ValueError, in words for the user, for one that can't be."""
    if schedule.kind == "once":
        local = first.astimezone(schedule.zone)
        wall = local.time().replace(microsecond=0)
        return Schedule(
            "interval", wall, schedule.timezone, on_date=local.date(), every=NAG_EVERY, count=cap
        )
    if schedule.kind != "interval":
        raise ValueError(
            "“until done” repeats a reminder every few minutes until someone acknowledges "
            "it, so it can't go with a daily or weekly rule; write “every 10 minutes until "
            "someone says done”, or one time"
        )
    if schedule.count is not None and schedule.count > cap:
        raise ValueError(
            f"an “until done” reminder repeats at most {cap} times here; ask for {cap} or fewer"
        )
    return replace(schedule, count=schedule.count or cap)


def until_done_words(schedule: Schedule, ack: AckRule, asker: str, *, chinese: bool) -> str:
    """What follows the rule: ' until someone says done (at most 12 times: the last on
    Wed 25 Nov at 22:50)'; in Chinese '，直到有人说好了（最多12次，最后一次：…）'."""
    count, last = schedule.count, last_words(schedule, chinese=chinese)
    if chinese:
        who = {"anyone": "有人", "each": "被提醒的每个人都"}.get(ack, asker or "设置提醒的人")
        end = f"，最后一次：{last}" if last else ""
        return f"，直到{who}说好了（最多{count}次{end}）"
    who = {"anyone": "someone", "each": "everyone named"}.get(ack, asker or "the asker")
    end = f": the last on {last}" if last else ""
    return f" until {who} says done (at most {count} times{end})"
