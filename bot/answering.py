"""Answering one message meant for the bot: a slash command, a "yes" to an offer, the
grammar's fast path, or the model's turn (with its budget and its log for the
dashboard). The router (`bot.router`) decides which messages get here, and in which order.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import math
import re
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from pydantic_core import to_jsonable_python

from groupmate.bot.budget import TokenBudget
from groupmate.bot.command_words import COMMAND_ALIASES
from groupmate.bot.commands import Commands
from groupmate.bot.config import Config
from groupmate.bot.contexts import ContextFactory
from groupmate.bot.messages import IncomingMessage
from groupmate.bot.offers import SET, Offers
from groupmate.bot.ratelimit import Budgets
from groupmate.bot.tool_calls import CommandError
from groupmate.function_calls import (
    ChatTurn,
    FunctionCallLLM,
    MessageContext,
    ToolInvoker,
    TurnResult,
)
from groupmate.function_calls.confirmations import Confirmations
from groupmate.function_calls.grammar import classify_ask, read_whole
from groupmate.function_calls.internal_text import STORAGE_DOWN
from groupmate.storage import OutgoingMessage, ReminderService, Sender, StorageError
from groupmate.storage.chatlog import ChatLog, LoggedMessage
from groupmate.storage.overview import TurnLog

log = logging.getLogger("groupmate.bot.router")
# Call outcomes that sent the model back to correct itself: the turn's repair rounds.
_REPAIRABLE = frozenset({"invalid", "unknown", "hidden", "malformed"})

_SNOOZE = re.compile(r"^(?:snooze|稍后提醒|稍后再提醒|再提醒我?|稍后)(?P<rest>.*)$", re.IGNORECASE)
_REMIND = re.compile(r"^(?:please\s+)?(?:remind\b|提醒)(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)
# "What did I miss?" as a whole message: /catchup, when no model reads plain language.
_CATCHUP = re.compile(
    r"^(?:so\s+|ok\s+|hey\s+)?what(?:'ve| have| did)\s+i\s+miss(?:ed)?|^catch\s+me\s+up|"
    r"^(?:我)?(?:错过了?(?:些)?什么|刚才发生了什么)",
    re.IGNORECASE,
)
# A reply to the bot's reminder (or its confirmation) that is only these words: said
# done, or asked to be reminded too. Exact short phrases: anything longer is chat.
_DONE = re.compile(r"^(?:done|i'?m done|all done|好了|好了的|完成|完成了|已完成)[\s.!。！]*$", re.I)  # noqa: RUF001
_ME_TOO = re.compile(r"^(?:remind me too|me too|我也要|也提醒我|我也要提醒)[\s.!。！]*$", re.I)  # noqa: RUF001
_CATCHUP_END = re.compile(r"[\s?？!！.。~～吗呢啊呀]*$")  # noqa: RUF001


def rate_limited(retry_after: float) -> str:
    """The notice for a message over its budget, saying when to try again."""
    seconds = max(1, math.ceil(retry_after))
    if seconds == 1:
        wait = "1 second"
    elif seconds < 120:
        wait = f"{seconds} seconds"
    else:
        wait = f"{math.ceil(seconds / 60)} minutes"
    return f"⏳ Easy there: too many requests. Try again in {wait}."


class Answerer:
    """The answer to one message meant for the bot; one instance serves every chat."""

    def __init__(
        self,
        config: Config,
        *,
        invoker: ToolInvoker,
        contexts: ContextFactory,
        chatlog: ChatLog,
        llm: FunctionCallLLM | None,
        outbound: Sender | None,
        clock: Callable[[], datetime],
        budget: TokenBudget | None,
        turns: TurnLog | None,
        confirmations: Confirmations | None = None,
        unavailable: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self._contexts = contexts
        self._chatlog = chatlog
        self._llm = llm
        self._outbound = outbound
        self._clock = clock
        self._budget = budget
        self._turns = turns
        self.commands = Commands(invoker, model=llm is not None, unavailable=unavailable)
        self._tools = self.commands.tools  # offers and the fast path call tools, not commands
        self._budgets = Budgets(config.bot.rate_limits)
        self._offers = Offers(invoker)
        self._confirmations = confirmations

    @property
    def has_model(self) -> bool:
        """A model answers plain language (and needs the chat's history)."""
        return self._llm is not None

    async def chat_settings(self, chat_id: str) -> Mapping[str, Any]:
        """The chat's own settings, through the service's short-lived cache (the answer's
        context read them just now)."""
        service = self._contexts.deps.get(ReminderService)
        return {} if service is None else await service.settings_of(chat_id, cached=True)

    def lapse_question(self, message: IncomingMessage, text: str) -> None:
        """A held question ("delete your 42 messages?") lapses at the sender's next
        message, unless that is a plain "yes" for the bot: not one that replies to or
        mentions someone else ("ok" to Bob's lunch plan deletes nothing)."""
        if self._confirmations is None:
            return
        elsewhere = bool(message.mentions) or (
            message.reply_to_message_id is not None and not message.reply_to_bot
        )
        if elsewhere or not Offers.is_yes(text):
            self._confirmations.drop(message.chat_id, message.sender_id)

    def awaits_yes(self, message: IncomingMessage, text: str) -> bool:
        """A "yes" to the bot's pending offer or question to this sender: no mention
        needed."""
        if not Offers.is_yes(text):
            return False
        chat, sender, now = message.chat_id, message.sender_id, self._clock()
        asked = self._confirmations is not None and self._confirmations.held(chat, sender, now)
        return bool(asked) or self._offers.pending(chat, sender, now)

    async def answer(
        self,
        message: IncomingMessage,
        text: str,
        recent: list[LoggedMessage],
        *,
        request_messages: int = 1,
    ) -> str | None:
        """The answer's text; None when there is none to send (the model's tools said it
        all, or its budget for the day is spent and the chat was told). `recent`
        is the chat's newest messages, this one last; `text` joins the words of the
        sender's `request_messages` newest messages (a burst), `message` the last."""
        command = Commands.split(text) or self._spoken_command(message, text)
        if command is not None and not self.commands.knows(command[0]):
            command = None
        # A command that calls the model (/summary, /search) draws on the model's
        # budgets; any other message on the generous one of what needs no model, and on
        # the model's too once it is about to reach the model (a reminder the grammar
        # sets, or a "yes" to an offer, never does).
        paid = command is not None and Commands.needs_model(command[0]) and self._llm is not None
        refusal = self._refusal(message, model=paid)
        if refusal is not None:
            return refusal
        ctx = dataclasses.replace(
            await self.context(message),
            text=text,
            reply_text=await self._replied_to(message),
            request_messages=request_messages,
        )
        if command is not None:
            return await self.commands.run(dataclasses.replace(ctx, source="command"), *command)
        if Offers.is_yes(text) and self._confirmations is not None:
            # A tool's question ("delete your 42 messages?"): the yes runs its held call.
            held = self._confirmations.take(message.chat_id, message.sender_id, self._clock())
            if held is not None:
                confirmed = dataclasses.replace(ctx, source="command")
                try:
                    return await self._tools.call(confirmed, held.tool, held.arguments)
                except CommandError as exc:
                    return str(exc)
        if Offers.is_yes(text):
            offer = self._offers.take(message.chat_id, message.sender_id, self._clock())
            if offer is not None:
                try:
                    asked = dataclasses.replace(ctx, text=offer.text, source="offer")
                    return await self._tools.set_reminder(asked, offer.arguments)
                except CommandError as exc:  # e.g. the moment passed meanwhile
                    return str(exc)
        fast = await self._fast_reminder(ctx, text)
        if fast is not None:
            return fast
        if self._llm is None:
            return self.commands.closest(ctx, text)
        refusal = self._refusal(message, model=True)
        if refusal is not None:
            return refusal
        if self._budget is not None:
            spent = await self._budget.refusal(ctx)
            if spent is not None:
                return spent or None
        history = self._history(recent)
        began = time.perf_counter()
        result = await self._llm.run(ctx, text or "hello", history)
        latency = time.perf_counter() - began
        if self._budget is not None:
            try:
                await self._budget.record(ctx, result)
            except StorageError as exc:  # the turn is done: its answer stands
                log.error("chat %s: token use not recorded: %s", ctx.chat_id, exc)
        await self._log_turn(ctx, text, result, latency)
        if not self._tools.has_tool(SET):  # reminders are off: nothing to offer
            return result.text
        return self._offers.review(ctx, text, result)

    async def _fast_reminder(self, ctx: MessageContext, text: str) -> str | None:
        """The grammar first: a reminder request it reads whole is set here, with the
        usual confirmation, and the model is not called; None for every other message."""
        if not self.config.reminders.fast_path or not self._tools.has_tool(SET):
            return None
        request = read_whole(text, ctx.now())
        if request is None:
            return None
        ctx = dataclasses.replace(ctx, source="command")  # the grammar's, not the model's
        try:
            return await self._tools.set_reminder(ctx, request.arguments, request.default_time)
        except CommandError as exc:
            return str(exc)

    async def _log_turn(
        self, ctx: MessageContext, text: str, result: TurnResult, latency: float
    ) -> None:
        """The turn, for the dashboard; a failure to log it never costs the reply."""
        if self._turns is None:
            return
        usage = result.usage
        try:
            await self._turns.record(
                chat_id=ctx.chat_id,
                sender_id=ctx.sender_id,
                at=self._clock(),
                tool_mode=result.tool_mode,
                latency_ms=round(latency * 1000),
                llm_calls=result.llm_calls,
                repairs=sum(1 for call in result.calls if call.outcome in _REPAIRABLE),
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                estimated=usage.estimated_requests > 0,
                calls=[
                    {
                        "name": call.name,
                        "arguments": to_jsonable_python(call.arguments, fallback=str),
                        "outcome": call.outcome,
                        "detail": call.detail[:500],
                    }
                    for call in result.calls
                ],
                offered=result.offered,
                question=text[:500],
                reply=result.text[:2000],
                error=result.error,
            )
        except Exception as exc:
            log.warning("chat %s: model turn not logged (%s)", ctx.chat_id, type(exc).__name__)

    def _spoken_command(self, message: IncomingMessage, text: str) -> tuple[str, str] | None:
        """Plain words that need no model: "snooze 10m" in reply to a reminder, "done" /
        "好了" and "remind me too" / "我也要" in reply to the bot's reminder, and, with
        no model configured, "remind me ..." / "提醒我 ..." and "what did I miss?" /
        "我错过了什么" (/catchup)."""
        replying = message.reply_to_message_id is not None or message.reply_to_bot
        snooze = _SNOOZE.match(text)
        if snooze and replying:
            return "snooze", snooze["rest"].strip()
        # Only to the bot's own message: "done" in reply to a person is theirs to read.
        if message.reply_to_bot and _DONE.fullmatch(text.strip()):
            return "done", ""
        if message.reply_to_bot and _ME_TOO.fullmatch(text.strip()):
            return "metoo", "on"
        remind = _REMIND.match(text)
        # Only a request read whole: "remind me … and also search …" or "remind me how …"
        # must not become a reminder of all that follows.
        if remind and self._llm is None and classify_ask(text).whole:
            return "remind", remind["rest"].strip()
        catchup = _CATCHUP.match(text)
        if catchup and self._llm is None and _CATCHUP_END.fullmatch(text[catchup.end() :]):
            return "catchup", ""
        return None

    def _refusal(self, message: IncomingMessage, *, model: bool) -> str | None:
        """None when allowed; else the notice that answers the limited message (every one
        is answered, once: none is dropped without a word)."""
        if message.from_operator:
            return None  # the operator at the terminal is testing the bot, not flooding it
        refusal = self._budgets.check(message.chat_id, message.sender_id, model=model)
        return None if refusal is None else rate_limited(refusal.retry_after)

    async def context(self, message: IncomingMessage, *, progress: bool = True) -> MessageContext:
        """The tools' context for a message: its chat, sender, rights, zone and services.
        With `progress`, a slow tool's "searching…" line goes to the chat."""
        notice = None
        if self._outbound is not None and progress:
            notice = functools.partial(self._progress, message.chat_id)
        return await self._contexts.for_message(message, progress=notice)

    async def _replied_to(self, message: IncomingMessage) -> str:
        """The logged words of the message this one replies to ("" if none or unknown)."""
        chatlog = self._chatlog
        if message.reply_to_message_id is None:
            return ""
        try:
            return await chatlog.text_of(message.chat_id, message.reply_to_message_id) or ""
        except StorageError as exc:  # the message itself can still be answered
            log.warning("chat %s: replied-to message not read (%s)", message.chat_id, exc)
            return ""

    async def _progress(self, chat_id: str, text: str) -> None:
        """A line such as "searching…" sent before a slow tool's result; best effort."""
        assert self._outbound is not None
        try:
            await self._outbound(OutgoingMessage(chat_id=chat_id, text=text, kind="notice"))
        except Exception as exc:
            log.info("chat %s: progress line not delivered (%s)", chat_id, type(exc).__name__)

    def storage_down(self, text: str) -> str:
        """The answer while the database can't be reached: `/help` is still answered (it
        needs none), with a word about the database; anything else is told that nothing
        was changed."""
        down = STORAGE_DOWN.for_message(text)
        command = Commands.split(text)
        if command is not None and COMMAND_ALIASES.get(command[0], command[0]) == "help":
            return f"{self.commands.usage()}\n\n{down}"
        return down

    def _history(self, recent: list[LoggedMessage]) -> list[ChatTurn]:
        # The triggering message is the newest entry; the LLM gets it once, as the question.
        return _turns_within(recent[:-1], self.config.bot.history.max_chars)


def _turns_within(messages: list[LoggedMessage], budget: int) -> list[ChatTurn]:
    """The newest messages that fit the character budget, oldest first."""
    turns: list[ChatTurn] = []
    used = 0
    for logged in reversed(messages):
        used += len(logged.text) + len(logged.sender_name) + 2
        if used > budget:
            break
        if logged.from_bot:
            turns.append(ChatTurn("assistant", logged.text))
        else:
            turns.append(ChatTurn("user", logged.text, logged.sender_name))
    turns.reverse()
    return turns
