"""The message path: log, trigger, then answer (`bot.answering`), in order per chat and,
with several processes on one PostgreSQL database, across them; each message once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from bot.answering import Answerer
from bot.commands import Commands
from bot.config import Config
from bot.logs import new_correlation_id
from bot.messages import IncomingMessage, Reply
from function_calls import MessageContext
from function_calls.internal_text import STORAGE_DOWN
from storage import StorageError, utc_now
from storage.chat_locks import ChatLocks
from storage.chatlog import ChatLog, LogEntry, Seen

log = logging.getLogger(__name__)

INTERNAL_ERROR = "Sorry, something went wrong on my side. The error was logged."

Deliver = Callable[[list[Reply]], Awaitable[None]]
"""Sends replies to the platform; raises if it could not."""


class Router:
    """Turns an IncomingMessage into replies; one instance serves every chat."""

    def __init__(
        self,
        config: Config,
        *,
        answerer: Answerer,
        chatlog: ChatLog,
        clock: Callable[[], datetime] = utc_now,
        chat_locks: ChatLocks | None = None,
    ) -> None:
        self.config = config
        # Several processes on one PostgreSQL database: one message of a chat at a time.
        self._chat_locks = chat_locks
        self._chatlog = chatlog
        self._clock = clock
        self._answerer = answerer
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._waiting: defaultdict[str, int] = defaultdict(int)
        # (chat, platform message id) being handled now. A message logged but unanswered
        # is handled again when redelivered (a crash lost its answer), but a webhook retry
        # racing the first delivery in this process must not be answered twice.
        self._in_flight: set[tuple[str, str]] = set()
        name = re.escape(config.bot.name)
        self._mention = re.compile(rf"(?<![\w@])@{name}\b[:,]?\s*", re.IGNORECASE)

    def may_address(self, text: str) -> bool:
        """Whether `text` could be for the bot without the platform saying so (a mention
        entity, a reply to it): a command, a configured prefix, or "@<bot name>"."""
        text = text.strip()
        return (
            text.startswith("/")
            or any(prefix and text.startswith(prefix) for prefix in self.config.bot.prefixes)
            or self._mention.search(text) is not None
        )

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
        wanted = (
            history.max_messages + 1 if self._answerer.has_model and history.max_messages else 0
        )
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
        answer = await self._answerer.answer(message, text, received.recent)
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

    def _triggered_text(self, message: IncomingMessage) -> str | None:
        """The text meant for the bot, without mention or prefix; None if not for it."""
        text = message.text.strip()
        if message.chat_type == "private":
            return text
        if self._answerer.awaits_yes(message, text):
            return text  # "yes" to the bot's offer, no mention needed
        stripped, mentioned = self._mention.subn("", text, count=1)
        if mentioned and (message.mentions_bot or not message.mention_entities):
            return stripped.strip()
        for prefix in self.config.bot.prefixes:
            if prefix and text.startswith(prefix):
                return text[len(prefix) :].strip()
        if message.mentions_bot or message.reply_to_bot:
            return text
        command = Commands.split(text)
        if command is not None and self._answerer.commands.knows(command[0]):
            # "/help@otherbot" is for another bot in the group.
            target = Commands.target(text)
            if target is None or target.lower() == self.config.bot.name.lower():
                return text
        return None

    async def context(self, message: IncomingMessage, *, progress: bool = True) -> MessageContext:
        """The tools' context for a message (see `Answerer.context`)."""
        return await self._answerer.context(message, progress=progress)

    def _reply(self, message: IncomingMessage, text: str) -> Reply:
        mentions = (message.sender_id,) if message.chat_type == "group" else ()
        return Reply(message.chat_id, text, mentions)


@dataclass(frozen=True, slots=True)
class _Answer:
    """What the router decided for one message; `message_id` is set when the answer was
    logged against it, so its delivery can be marked."""

    replies: list[Reply]
    message_id: str | None
