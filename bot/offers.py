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


@dataclass(frozen=True, slots=True)
class Offer:
    arguments: dict[str, Any]  # reminder_set's raw arguments, as the grammar read them
    made_at: datetime


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
            return result.text  # the time must be asked about: the model's question stands
        if asked is None:
            return result.text
        arguments = asked.arguments()
        try:
            args = ReminderArgs.model_validate(arguments, context={MESSAGE_CONTEXT_KEY: ctx})
            schedule, first = args.resolve(ctx)
        except ValueError:
            return result.text  # the grammar's reading is not settable: the model's answer
        if len(self._pending) >= _MAX_PENDING:
            self._pending.clear()
        self._pending[(ctx.chat_id, ctx.sender_id)] = Offer(arguments, ctx.clock())
        when = format_local(first, ctx.zone, with_year=first.year != ctx.now().year)
        rule = f", {schedule.describe()}" if schedule.recurring else ""
        content = args.content
        if CJK.search(text):
            return (
                f"还没有设置任何提醒。要设置“{content}”：{when}（{ctx.timezone}）{rule}吗？"
                "回复“是”确认。"
            )
        return f"Nothing is set yet. Set '{content}' for {when} ({ctx.timezone}){rule}? Reply yes."


def _wrote_a_reminder(result: TurnResult) -> bool:
    """A reminder tool ran and reported the reminder it stored."""
    return any(
        call.name in _WRITES and isinstance(call.data, dict) and "id" in call.data
        for call in result.calls
    )
