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

from groupmate.function_calls import (
    InvalidArgumentsError,
    MessageContext,
    ToolCall,
    ToolInvocationError,
    ToolInvoker,
    TurnResult,
)
from groupmate.function_calls.claims import CLAIM, asks_back, sounds_done
from groupmate.function_calls.grammar import (
    GrammarError,
    about_existing,
    asked_reminder,
    classify_ask,
)
from groupmate.function_calls.handlers.reminder_args import ReminderArgs
from groupmate.function_calls.handlers.reminder_words import (
    describe_schedule,
    describe_schedule_zh,
    format_local,
    format_local_zh,
    refusal,
)
from groupmate.function_calls.internal_text import refusal_of
from groupmate.function_calls.language import is_chinese

OFFER_TTL = timedelta(minutes=10)
_MAX_PENDING = 10_000
_YES = re.compile(
    r"^\s*(?:yes|y|yep|yeah|ok|okay|sure|do it|好|好的|是|是的|对|可以|行)\s*[.!。！]?\s*$",  # noqa: RUF001
    re.IGNORECASE,
)
SET = "reminder_set"
_WRITES = frozenset({SET, "reminder_update", "reminder_snooze"})


@dataclass(frozen=True, slots=True)
class Offer:
    arguments: dict[str, Any]  # reminder_set's raw arguments, as the grammar read them
    made_at: datetime
    text: str  # the message that asked: what the arguments are checked against


class Offers:
    """Pending offers per (chat, sender)."""

    def __init__(self, invoker: ToolInvoker) -> None:
        self._invoker = invoker
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
        """The answer to send for a model turn: the model's own, or, when the message
        asked for a reminder the turn did not set, an offer or a plain "nothing was set".
        A negation, a question or reported speech is never offered as a reminder."""
        if _wrote_a_reminder(result) or _a_tool_answered(result):
            return result.text  # set, or a tool's own words (true: "I can't find @carol")
        ask = classify_ask(text)
        if ask.kind == "request" and not about_existing(text):
            try:
                offer = self._offer(ctx, text)
            except GrammarError as exc:
                # The time must be asked about ("at 5": 05:00 or 17:00?): the model's own
                # question back stands; anything else ("Okay, tomorrow at 09:00.") would
                # read as done, so the grammar's question is asked instead.
                if result.error is not None or asks_back(result.text):
                    return result.text
                return _nothing_set(text, str(exc))
            if offer is not None:
                return offer
            if result.error is not None or asks_back(result.text):
                return result.text  # the model's question, or why it could not answer
            return _nothing_set(text)
        if result.error is not None:
            return result.text
        ran = any(call.outcome in ("ok", "refused") for call in result.calls)
        if ran:
            return result.text  # a tool's own words are true
        if ask.kind != "none" and sounds_done(result.text):
            # "OK." or "All set!" to "don't remind me anymore" reads as done: nothing was.
            return _nothing_changed(text)
        return _unclaimed(result.text, text)

    def _offer(self, ctx: MessageContext, text: str) -> str | None:
        """The grammar's reading of the message's first request, offered for a "yes";
        a refusal when its own words can't be set; None when it reads none. Raises
        GrammarError when the time must be asked about."""
        asked = asked_reminder(text, ctx.now())
        if asked is None:
            return None
        arguments = asked.arguments()
        try:
            # As the call a "yes" makes: offered only what the invoker would let run.
            validated = self._invoker.validate_tool_call(ctx, ToolCall(SET, arguments))
        except InvalidArgumentsError as exc:
            # The user's own words can't be set ("today at 9" at 10:20): a small model
            # answered "I can't assist with that", which says nothing of why.
            return refusal(exc, text)
        except ToolInvocationError as exc:
            return refusal_of(exc).for_message(text)  # not this sender's to set here
        args = validated.arguments
        assert isinstance(args, ReminderArgs)
        try:
            schedule, first = args.resolve(ctx)
        except ValueError:
            return None  # the grammar's reading is not settable
        if len(self._pending) >= _MAX_PENDING:
            self._pending.clear()
        self._pending[(ctx.chat_id, ctx.sender_id)] = Offer(arguments, ctx.clock(), text)
        with_year = first.year != ctx.now().year
        content = args.content
        if is_chinese(text):
            when = format_local_zh(first, ctx.zone, with_year=with_year)
            rule = f"，{describe_schedule_zh(schedule)}" if schedule.recurring else ""
            return (
                f"还没有设置任何提醒。要设置“{content}”：{when}（{ctx.timezone}）{rule}吗？"
                "回复“是”确认。"
            )
        when = format_local(first, ctx.zone, with_year=with_year)
        rule = f", {describe_schedule(schedule)}" if schedule.recurring else ""
        return f"Nothing is set yet. Set '{content}' for {when} ({ctx.timezone}){rule}? Reply yes."


def _nothing_set(asked: str, why: str = "") -> str:
    """A reminder request that the turn did not set and the grammar can't offer."""
    if is_chinese(asked):
        reason = why or "我没能读懂这个提醒。"
        return (
            f"没有设置任何提醒：{reason}试试“明天上午9点提醒我开会”，或用 /提醒（/help 有说明）。"
        )
    reason = why or "I couldn't read that as a reminder."
    return (
        f"Nothing was set: {reason} Try “remind me tomorrow at 9 to call the dentist”, or "
        "/remind (see /help)."
    )


def _unclaimed(answer: str, asked: str) -> str:
    """The model's answer, unless it claims a reminder action no tool performed ("I'll
    remind you again in an hour" with nothing snoozed): that is never passed on."""
    if not CLAIM.search(answer):
        return answer
    return _nothing_changed(asked)


def _nothing_changed(asked: str) -> str:
    if is_chinese(asked):
        return (
            "什么都没有改动：我没能把它变成一个提醒操作。"
            "请试试 /提醒、/snooze 或 /edit（/help 有说明）。"
        )
    return (
        "Nothing was changed: I couldn't turn that into a reminder action. Try /remind, "
        "/snooze or /edit (see /help)."
    )


def _a_tool_answered(result: TurnResult) -> bool:
    """A tool ran and answered the user in its own words, not through the model."""
    return any(call.direct for call in result.calls)


def _wrote_a_reminder(result: TurnResult) -> bool:
    """A reminder tool ran and reported the reminder it stored."""
    return any(
        call.name in _WRITES and isinstance(call.data, dict) and "id" in call.data
        for call in result.calls
    )
