"""No claim without a deed: when a message asks for a reminder and the model's turn ends
without one being set, the bot does not pass the model's text on (a small model often
says "Okay, tomorrow at 09:00" and calls nothing). It offers what the `/remind` grammar
read instead, and a "yes" from the same sender within ten minutes sets exactly that.

Offers live in memory: a restart forgets them, and the sender is asked again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import ValidationError

from function_calls import MessageContext, TurnResult
from function_calls.context import MESSAGE_CONTEXT_KEY
from function_calls.grammar import CJK, GrammarError, asked_reminder
from function_calls.handlers.reminder_args import ReminderArgs
from storage.recurrence import format_local

OFFER_TTL = timedelta(minutes=10)
_MAX_PENDING = 10_000
_YES = re.compile(
    r"^\s*(?:yes|y|yep|yeah|ok|okay|sure|do it|好|好的|是|是的|对|可以|行)\s*[.!。！]?\s*$",  # noqa: RUF001
    re.IGNORECASE,
)
_WRITES = frozenset({"reminder_set", "reminder_update", "reminder_snooze"})
# A reply that says a reminder was set, changed, snoozed or cancelled.
_CLAIM = re.compile(
    r"⏰|💤|\breminders?\b[^.!?\n]{0,40}\b(?:is |has been |was )?(?:set|created|scheduled|"
    r"snoozed|updated|moved|changed|rescheduled|cancell?ed|deleted|removed|paused|resumed)\b|"
    r"\bi(?:'ll| will| have|'ve) (?:remind|set|snoozed|moved|updated|changed|rescheduled|"
    r"cancell?ed|deleted|removed)\b|\bsnoozed\b|"
    r"(?:已|已经)(?:设置|设定|设好|创建|推迟|修改|更改|改到|删除|取消|暂停)|会提醒|稍后提醒你",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Offer:
    arguments: dict[str, Any]  # reminder_set's raw arguments, as the grammar read them
    made_at: datetime
    text: str  # the message that asked: what the arguments are checked against


class Offers:
    """Pending offers per (chat, sender)."""

    def __init__(self) -> None:
        self._pending: dict[tuple[str, str], Offer] = {}

    @staticmethod
    def is_yes(text: str) -> bool:
        return bool(_YES.match(text))

    def pending(self, chat_id: str, sender_id: str, now: datetime) -> bool:
        offer = self._pending.get((chat_id, sender_id))
        return offer is not None and now - offer.made_at <= OFFER_TTL

    def take(self, chat_id: str, sender_id: str, now: datetime) -> Offer | None:
        """The sender's pending offer, once; None when there is none or it expired."""
        offer = self._pending.pop((chat_id, sender_id), None)
        if offer is None or now - offer.made_at > OFFER_TTL:
            return None
        return offer

    def review(self, ctx: MessageContext, text: str, result: TurnResult) -> str:
        """The answer to send for a model turn: the model's own, or an offer in its place
        when the message asked for a reminder the turn did not set."""
        if _wrote_a_reminder(result) or result.error is not None:
            return result.text
        try:
            asked = asked_reminder(text, ctx.now())
        except GrammarError:
            asked = None  # the time must be asked about: the model's question stands
        if asked is None:
            ran = any(call.outcome in ("direct", "data") for call in result.calls)
            # A tool's own words are true; only a claim with no tool behind it is not.
            return result.text if ran else _unclaimed(result.text, text)
        arguments = asked.arguments()
        try:
            args = ReminderArgs.model_validate(arguments, context={MESSAGE_CONTEXT_KEY: ctx})
            schedule, first = args.resolve(ctx)
        except ValidationError as exc:
            # The user's own words can't be set ("today at 9" at 10:20): a small model
            # answered "I can't assist with that", which says nothing of why.
            return _refusal(exc, text)
        except ValueError:
            return result.text  # the grammar's reading is not settable: the model's answer
        if len(self._pending) >= _MAX_PENDING:
            self._pending.clear()
        self._pending[(ctx.chat_id, ctx.sender_id)] = Offer(arguments, ctx.clock(), text)
        when = format_local(first, ctx.zone, with_year=first.year != ctx.now().year)
        rule = f", {schedule.describe()}" if schedule.recurring else ""
        content = args.content
        if CJK.search(text):
            return (
                f"还没有设置任何提醒。要设置“{content}”：{when}（{ctx.timezone}）{rule}吗？"
                "回复“是”确认。"
            )
        return f"Nothing is set yet. Set '{content}' for {when} ({ctx.timezone}){rule}? Reply yes."


def _refusal(error: ValidationError, asked: str) -> str:
    reasons = "; ".join(
        detail["msg"].removeprefix("Value error, ") for detail in error.errors(include_url=False)
    )
    if CJK.search(asked):
        return f"没有设置提醒：{reasons}。"
    return f"Nothing is set: {reasons}."


def _unclaimed(answer: str, asked: str) -> str:
    """The model's answer, unless it claims a reminder action no tool performed ("I'll
    remind you again in an hour" with nothing snoozed): that is never passed on."""
    if not _CLAIM.search(answer):
        return answer
    if CJK.search(asked):
        return (
            "什么都没有改动：我没能把它变成一个提醒操作。"
            "请试试 /提醒、/snooze 或 /edit（/help 有说明）。"
        )
    return (
        "Nothing was changed: I couldn't turn that into a reminder action. Try /remind, "
        "/snooze or /edit (see /help)."
    )


def _wrote_a_reminder(result: TurnResult) -> bool:
    """A reminder tool ran and reported the reminder it stored."""
    return any(
        call.name in _WRITES and isinstance(call.data, dict) and "id" in call.data
        for call in result.calls
    )
