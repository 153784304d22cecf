"""The message path: log, trigger, limit, then commands or the LLM, in order per chat."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import math
import re
import time
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic_core import to_jsonable_python

from bot.budget import TokenBudget
from bot.commands import COMMAND_HELP, CommandError, Commands
from bot.config import Config
from bot.contexts import ContextFactory
from bot.logs import new_correlation_id
from bot.messages import IncomingMessage, Reply
from bot.offers import Offers
from bot.ratelimit import Budgets
from function_calls import (
    ChatTurn,
    FunctionCallLLM,
    MessageContext,
    ToolInvoker,
    TurnResult,
)
from function_calls.grammar import classify_ask, read_whole
from function_calls.internal_text import STORAGE_DOWN
from storage import OutgoingMessage, Sender, StorageError, utc_now
from storage.chat_locks import ChatLocks
from storage.chatlog import ChatLog, LogEntry, LoggedMessage, Seen
from storage.overview import TurnLog

log = logging.getLogger(__name__)
# Call outcomes that sent the model back to correct itself: the turn's repair rounds.
_REPAIRABLE = frozenset({"invalid", "unknown", "hidden", "malformed"})

NO_LLM_REPLY = (
    "I can't understand plain language here: no language model is configured. " + COMMAND_HELP
)


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


INTERNAL_ERROR = "Sorry, something went wrong on my side. The error was logged."


_SNOOZE = re.compile(r"^(?:snooze|稍后提醒|稍后再提醒|再提醒我?|稍后)(?P<rest>.*)$", re.IGNORECASE)
_REMIND = re.compile(r"^(?:please\s+)?(?:remind\b|提醒)(?P<rest>.*)$", re.IGNORECASE | re.DOTALL)


Deliver = Callable[[list[Reply]], Awaitable[None]]
"""Sends replies to the platform; raises if it could not."""


class Router:
    """Turns an IncomingMessage into replies; one instance serves every chat."""

    def __init__(
        self,
        config: Config,
        *,
        invoker: ToolInvoker,
        contexts: ContextFactory,
        chatlog: ChatLog,
        llm: FunctionCallLLM | None,
        outbound: Sender | None = None,
        clock: Callable[[], datetime] = utc_now,
        budget: TokenBudget | None = None,
        turns: TurnLog | None = None,
        chat_locks: ChatLocks | None = None,
    ) -> None:
        self.config = config
        # Several processes on one PostgreSQL database: one message of a chat at a time.
        self._chat_locks = chat_locks
        self._turns = turns
        self._contexts = contexts
        self._chatlog = chatlog
        self._llm = llm
        self._outbound = outbound
        self._clock = clock
        self._commands = Commands(invoker)
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._waiting: defaultdict[str, int] = defaultdict(int)
        # (chat, platform message id) being handled now. A message logged but unanswered
        # is handled again when redelivered (a crash lost its answer), but a webhook retry
        # racing the first delivery in this process must not be answered twice.
        self._in_flight: set[tuple[str, str]] = set()
        self._budgets = Budgets(config.bot.rate_limits)
        self._offers = Offers(invoker)
        self._budget = budget
        name = re.escape(config.bot.name)
        self._mention = re.compile(rf"(?<![\w@])@{name}\b[:,]?\s*", re.IGNORECASE)

    async def handle(self, message: IncomingMessage, deliver: Deliver | None = None) -> list[Reply]:
        """Replies for one message (often none: a group message not meant for the bot).

        Without `deliver` the caller hands the replies back itself (an HTTP response, the
        terminal) and they count as delivered once returned. An adapter passes `deliver`,
        which sends them to the platform: only once it returns is the message marked
        delivered, so a platform's redelivery after a crash resends the logged answer.
        Errors raised by `deliver` reach the caller; the router's own become a reply.
        """
        if message.chat_type == "group" and not self.config.bot.groups.allows(message.chat_id):
            return []  # not an enabled chat: not even logged
        text = self._triggered_text(message)
        if text is None:
            await self._log_only(message)
            return []
        chat = message.chat_id
        key = (chat, message.message_id) if message.message_id else None
        if key is not None:
            if key in self._in_flight:
                log.info("chat %s: message %s already being handled", chat, message.message_id)
                return []
            self._in_flight.add(key)
        new_correlation_id()
        lock = self._locks[chat]
        self._waiting[chat] += 1
        try:
            # Messages of one chat are handled, and their replies sent, in arrival order;
            # chats run concurrently.
            async with lock, contextlib.AsyncExitStack() as held:
                if not await self._hold_across_processes(held, chat):
                    answer = _Answer([Reply(chat, STORAGE_DOWN.for_message(text))], None)
                else:
                    answer = await self._decide(message, text, delivering=deliver is not None)
                if deliver is not None and answer.replies:
                    await deliver(answer.replies)
                    if answer.message_id is not None:
                        await self._mark_delivered(chat, answer.message_id)
                return answer.replies
        finally:
            if key is not None:
                self._in_flight.discard(key)
            self._waiting[chat] -= 1
            if not self._waiting[chat]:  # idle chats keep no state
                del self._waiting[chat], self._locks[chat]

    async def _hold_across_processes(self, held: contextlib.AsyncExitStack, chat: str) -> bool:
        """Take the chat's lock for other processes on the same database too; False if
        the database could not be asked."""
        if self._chat_locks is None:
            return True
        try:
            await held.enter_async_context(self._chat_locks.hold(chat))
        except StorageError as exc:
            log.error("chat %s: storage failed: %s", chat, exc)
            return False
        return True

    async def _log_only(self, message: IncomingMessage) -> None:
        """A message not meant for the bot: logged for history and summaries, in the
        order messages come, without waiting for the chat's turn (it has no reply to
        put in order) or for the write itself (see ChatLog.log)."""
        try:
            await self._chatlog.log(message.chat_id, self._entry(message))
        except StorageError as exc:
            log.error("chat %s: storage failed: %s", message.chat_id, exc)
        except Exception:
            log.exception("chat %s: logging a message failed", message.chat_id)

    def _entry(self, message: IncomingMessage, message_id: str | None = None) -> LogEntry:
        at = message.timestamp or self._clock()
        if at.tzinfo is None:
            at = at.replace(tzinfo=UTC)  # platforms that omit the zone mean UTC
        return LogEntry(
            message_id=message_id or message.message_id or uuid.uuid4().hex,
            sender_id=message.sender_id,
            sender_name=message.sender_name,
            text=message.text.replace("\x00", ""),
            at=min(at, self._clock()),  # a clock ahead must not age out the whole log
        )

    async def _decide(self, message: IncomingMessage, text: str, *, delivering: bool) -> _Answer:
        try:
            return await self._handle(message, text, delivering=delivering)
        except StorageError as exc:
            log.error("chat %s: storage failed: %s", message.chat_id, exc)
            error = STORAGE_DOWN.for_message(text)
        except Exception:
            # A bug must cost one answer, never a stack trace in the chat.
            log.exception("chat %s: handling a message failed", message.chat_id)
            error = INTERNAL_ERROR
        return _Answer([Reply(message.chat_id, error)], None)

    async def _mark_delivered(self, chat_id: str, message_id: str) -> None:
        try:
            await self._chatlog.mark_delivered(chat_id, message_id, self._clock())
        except StorageError as exc:
            # Sent all the same; at worst a redelivery of the message resends the answer.
            log.error("chat %s: marking message %s delivered failed: %s", chat_id, message_id, exc)

    async def _handle(self, message: IncomingMessage, text: str, *, delivering: bool) -> _Answer:
        chat = message.chat_id
        message_id = message.message_id or uuid.uuid4().hex
        entry = self._entry(message, message_id)
        history = self.config.bot.history
        # The history the model will need is read with the message's own write.
        wanted = history.max_messages + 1 if self._llm is not None and history.max_messages else 0
        received = await self._chatlog.receive(chat, entry, recent=wanted)
        seen = received.seen
        if seen is Seen.ANSWERED:
            log.info("chat %s: message %s seen before", chat, message.message_id)
            return _Answer([], None)
        if seen is Seen.UNDELIVERED:
            # Decided before a crash, maybe never sent: send the same answer again rather
            # than decide anew (which could set a reminder twice).
            log.info("chat %s: message %s answered but not sent; resending", chat, message_id)
            texts = await self._chatlog.answer_to(chat, message_id)
            if not delivering:
                await self._mark_delivered(chat, message_id)
            return _Answer([self._reply(message, t) for t in texts], message_id)
        if seen is Seen.UNANSWERED:
            log.info("chat %s: message %s never answered, handling it again", chat, message_id)
        answer = await self._respond(message, text, received.recent)
        texts = [] if answer is None else [answer]
        try:
            await self._chatlog.record_answer(
                chat,
                message_id,
                texts,
                bot_id="bot",
                bot_name=self.config.bot.name,
                at=self._clock(),
                delivered=not delivering,
            )
        except StorageError as exc:
            # The answer is decided and its tools ran (a reminder may be set): it says
            # what was done, where "nothing was changed" would be false. Unrecorded, a
            # redelivery of this message is answered again.
            log.error("chat %s: answer to %s not logged: %s", chat, message_id, exc)
            return _Answer([self._reply(message, t) for t in texts], None)
        return _Answer([self._reply(message, t) for t in texts], message_id)

    async def _respond(
        self, message: IncomingMessage, text: str, recent: list[LoggedMessage]
    ) -> str | None:
        """The answer's text; None to stay quiet (a group over its rate limit). `recent`
        is the chat's newest messages, this one last."""
        command = Commands.split(text) or self._spoken_command(message, text)
        if command is not None and not self._commands.knows(command[0]):
            command = None
        refusal = self._refusal(message, command)
        if refusal is not None:
            return refusal or None
        ctx = dataclasses.replace(
            await self.context(message), text=text, reply_text=await self._replied_to(message)
        )
        if command is not None:
            return await self._commands.run(dataclasses.replace(ctx, source="command"), *command)
        if Offers.is_yes(text):
            offer = self._offers.take(message.chat_id, message.sender_id, self._clock())
            if offer is not None:
                try:
                    asked = dataclasses.replace(ctx, text=offer.text, source="offer")
                    return await self._commands.set_reminder(asked, offer.arguments)
                except CommandError as exc:  # e.g. the moment passed meanwhile
                    return str(exc)
        fast = await self._fast_reminder(dataclasses.replace(ctx, source="command"), text)
        if fast is not None:
            return fast
        if self._llm is None:
            return NO_LLM_REPLY
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
        return self._offers.review(ctx, text, result)

    async def _fast_reminder(self, ctx: MessageContext, text: str) -> str | None:
        """The grammar first: a reminder request it reads whole is set here, with the
        usual confirmation, and the model is not called; None for every other message."""
        if not self.config.reminders.fast_path:
            return None
        request = read_whole(text, ctx.now())
        if request is None:
            return None
        try:
            return await self._commands.set_reminder(ctx, request.arguments, request.default_time)
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
                question=text[:500],
                reply=result.text[:2000],
                error=result.error,
            )
        except Exception as exc:
            log.warning("chat %s: model turn not logged (%s)", ctx.chat_id, type(exc).__name__)

    def _spoken_command(self, message: IncomingMessage, text: str) -> tuple[str, str] | None:
        """Plain words that need no model: "snooze 10m" in reply to a reminder, and, with
        no model configured, "remind me ..." / "提醒我 ..."."""
        replying = message.reply_to_message_id is not None or message.reply_to_bot
        snooze = _SNOOZE.match(text)
        if snooze and replying:
            return "snooze", snooze["rest"].strip()
        remind = _REMIND.match(text)
        # Only a request read whole: "remind me … and also search …" or "remind me how …"
        # must not become a reminder of all that follows.
        if remind and self._llm is None and classify_ask(text).whole:
            return "remind", remind["rest"].strip()
        return None

    def _triggered_text(self, message: IncomingMessage) -> str | None:
        """The text meant for the bot, without mention or prefix; None if not for it."""
        text = message.text.strip()
        if message.chat_type == "private":
            return text
        if Offers.is_yes(text) and self._offers.pending(
            message.chat_id, message.sender_id, self._clock()
        ):
            return text  # "yes" to the bot's offer, no mention needed
        stripped, mentioned = self._mention.subn("", text, count=1)
        if mentioned:
            return stripped.strip()
        for prefix in self.config.bot.prefixes:
            if prefix and text.startswith(prefix):
                return text[len(prefix) :].strip()
        if message.mentions_bot or message.reply_to_bot:
            return text
        command = Commands.split(text)
        if command is not None and self._commands.knows(command[0]):
            # "/help@otherbot" is for another bot in the group.
            target = Commands.target(text)
            if target is None or target.lower() == self.config.bot.name.lower():
                return text
        return None

    def _refusal(self, message: IncomingMessage, command: tuple[str, str] | None) -> str | None:
        """None when allowed; else the notice to send, or "" to stay quiet."""
        if message.from_operator:
            return None  # the operator at the terminal is testing the bot, not flooding it
        refusal = self._budgets.check(
            message.chat_id,
            message.sender_id,
            command=command is not None and not Commands.needs_model(command[0]),
            private=message.chat_type == "private",
        )
        if refusal is None:
            return None
        return rate_limited(refusal.retry_after) if refusal.notify else ""

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

    def _history(self, recent: list[LoggedMessage]) -> list[ChatTurn]:
        # The triggering message is the newest entry; the LLM gets it once, as the question.
        return _turns_within(recent[:-1], self.config.bot.history.max_chars)

    def _reply(self, message: IncomingMessage, text: str) -> Reply:
        mentions = (message.sender_id,) if message.chat_type == "group" else ()
        return Reply(message.chat_id, text, mentions)


@dataclass(frozen=True, slots=True)
class _Answer:
    """What the router decided for one message; `message_id` is set when the answer was
    logged against it, so its delivery can be marked."""

    replies: list[Reply]
    message_id: str | None


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
