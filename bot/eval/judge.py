"""Judging one eval case by what was stored and answered.

Silently wrong is the outcome that matters most: something stored that nobody asked for
(another time, rule or chat), or a reply that claims a reminder that was not stored.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from datetime import timedelta
from zoneinfo import ZoneInfo

from groupmate.bot.eval.cases import Case, ExpectedReminder, RelativeTime
from groupmate.bot.eval.relative import Expected, Moment, expected
from groupmate.storage import ReminderView

# A reply that says a reminder exists ("⏰ Reminder #1 set", "I'll remind you", 已设置).
_CLAIM = re.compile(
    r"⏰|reminder\s*(#\d+\s*)?(is\s+)?(set|created|scheduled)|i('ll| will) remind|"
    r"(已|已经)(设置|设定|设好|创建)|会提醒",
    re.IGNORECASE,
)
# The bot offering what the grammar read instead of a claim: "... Reply yes."
_OFFER = re.compile(r"reply yes|回复[“\"]?(是|好)", re.IGNORECASE)


class Outcome(enum.Enum):
    RIGHT = "right"
    OFFERED = "offered"  # nothing set, but the bot offered exactly what was asked
    MISSED = "missed"  # nothing wrong happened, but not what was asked either
    WRONG = "silently wrong"
    ERROR = "error"  # the endpoint failed (HTTP or server errors)


@dataclass(frozen=True, slots=True)
class Verdict:
    outcome: Outcome
    reason: str = ""


@dataclass(frozen=True, slots=True)
class State:
    """What the case can change: this chat's reminders, the other chat's, the zone."""

    reminders: tuple[ReminderView, ...]
    other: tuple[tuple[str, int], ...]  # (id, version) of the other chat's reminders
    timezone: str


def judge(
    case: Case,
    before: State,
    after: State,
    reply: str,
    tools_called: list[str],
    endpoint_error: str | None,
    moment: Moment | None = None,
) -> Verdict:
    """`moment`: when the bot may have read its clock; a fixed-clock case's own `now` if
    not given."""
    if endpoint_error is not None:
        return Verdict(Outcome.ERROR, endpoint_error)
    expect = case.expect
    zone = ZoneInfo(case.zone)
    if moment is None:
        moment = Moment.at(case.local_now())
    old = {r.id: r for r in before.reminders}
    new = [r for r in after.reminders if r.id not in old]
    kept = {r.id for r in after.reminders}
    gone = sorted(r.short_id for r in before.reminders if r.id not in kept)
    edited = [r for r in after.reminders if r.id in old and r.version != old[r.id].version]
    wrong: list[str] = []
    missed: list[str] = []

    if after.other != before.other:
        wrong.append("another chat's reminders changed")
    if expect.snoozed is not None:
        _check_snooze(zone, moment, expect.snoozed, new, wrong, missed)
        new = [r for r in new if r.snooze_of is None]
    asked = expect.reminder
    if asked is None:
        if new:
            wrong.append("stored a reminder nobody asked for: " + _describe(new[0], zone))
    elif (times := expected(asked.first, case.zone, moment)).past:
        # Said after the time it names ("tonight at 8" at 21:00): nothing may be stored.
        if new:
            wrong.append(f"stored {_describe(new[0], zone)}, but the time asked for had passed")
    else:
        fits = [r for r in new if _fits(r, asked, times)]
        timed = [r for r in new if _fits(r, asked, times, content=False)]
        if len(new) == 1 and fits:
            pass
        elif len(new) == 1 and timed:
            # The right time and rule with the words paraphrased: not what was asked,
            # but nothing that fires at a wrong time either.
            missed.append(f"stored the text {new[0].content!r}")
        elif new:
            stored = "stored " + "; ".join(_describe(r, zone) for r in new)
            # A relative expectation's time is in no file: say what it was at this moment.
            relative = isinstance(asked.first, RelativeTime)
            wrong.append(stored + (f" (asked: {times.describe(zone)})" if relative else ""))
        elif not times.past_ok:  # said as the time passed: storing nothing is right too
            missed.append("no reminder stored")
    if expect.changed is not None:
        target = next((r for r in after.reminders if r.short_id == expect.changed.id), None)
        if target is None:
            wrong.append(f"#{expect.changed.id} is gone")
        elif target.id not in {r.id for r in edited}:
            missed.append(f"#{expect.changed.id} unchanged")
        elif not _fits(target, expect.changed, expected(expect.changed.first, case.zone, moment)):
            wrong.append("changed to " + _describe(target, zone))
    snooze_parents = {r.snooze_of for r in after.reminders if r.snooze_of}
    others_edited = [
        r
        for r in edited
        if (expect.changed is None or r.short_id != expect.changed.id)
        and r.id not in snooze_parents
    ]
    if others_edited:
        wrong.append("changed " + ", ".join(f"#{r.short_id}" for r in others_edited))
    if gone != sorted(expect.deleted):
        extra = [n for n in gone if n not in expect.deleted]
        if extra:
            wrong.append(f"deleted #{extra[0]}")
        else:
            missed.append(f"#{expect.deleted[0]} not deleted")
    if expect.timezone is not None and after.timezone != expect.timezone:
        if after.timezone != before.timezone:
            wrong.append(f"time zone set to {after.timezone}")
        else:
            missed.append("time zone unchanged")
    elif expect.timezone is None and after.timezone != before.timezone:
        wrong.append(f"time zone changed to {after.timezone}")
    if _CLAIM.search(reply) and not _OFFER.search(reply) and not new and not edited:
        wrong.append("the reply claims a reminder that was not stored")
    if expect.no_offer and _OFFER.search(reply):
        missed.append("offered a reminder nobody asked for")
    if expect.no_tool and tools_called:
        missed.append("called " + ", ".join(tools_called))
    lowered = reply.casefold()
    for wanted in expect.reply_has:
        if not any(part.casefold() in lowered for part in wanted.split("|")):
            missed.append(f"the reply lacks {wanted!r}")
    if wrong:
        return Verdict(Outcome.WRONG, "; ".join(wrong))
    if missed:
        if expect.reminder is not None and _OFFER.search(reply):
            return Verdict(Outcome.OFFERED, "; ".join(missed))
        return Verdict(Outcome.MISSED, "; ".join(missed))
    return Verdict(Outcome.RIGHT)


def _fits(
    reminder: ReminderView, wanted: ExpectedReminder, times: Expected, *, content: bool = True
) -> bool:
    first = reminder.next_fire_at
    if first is None:
        return False
    return (
        reminder.schedule.kind == wanted.rule
        and times.admits(first)
        and (not content or wanted.content.casefold() in reminder.content.casefold())
    )


def _check_snooze(
    zone: ZoneInfo,
    moment: Moment,
    minutes: int,
    new: list[ReminderView],
    wrong: list[str],
    missed: list[str],
) -> None:
    snoozes = [r for r in new if r.snooze_of is not None]
    if not snoozes:
        missed.append("nothing snoozed")
        return
    due = snoozes[0].next_fire_at
    wanted = moment.start + timedelta(minutes=minutes)
    if due is None or abs(due - wanted) > timedelta(minutes=2):
        wrong.append("snoozed until " + _describe(snoozes[0], zone))


def _describe(reminder: ReminderView, zone: ZoneInfo) -> str:
    first = reminder.next_fire_at
    at = "-" if first is None else f"{first.astimezone(zone):%Y-%m-%d %H:%M}"
    return f"{reminder.schedule.kind} {at} {reminder.content!r}"
