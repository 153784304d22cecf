"""The message path: log, trigger (`bot.trigger`: is it for the bot), then answer
(`bot.answering`), in order per chat and, with several processes on one PostgreSQL
database, across them; each message once. One sender's burst of messages (`bot.bursts`)
is answered once."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import uuid
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from groupmate.bot.answering import Answerer
from groupmate.bot.bursts import Burst, Bursts, Part, without_earlier
from groupmate.bot.commands import Commands
from groupmate.bot.config import Config
from groupmate.bot.logs import new_correlation_id
from groupmate.bot.messages import IncomingMessage, IncomingReaction, Reply
from groupmate.bot.press_handling import NO_REMINDERS, PressHandler
from groupmate.bot.presses import Press, PressOutcome
from groupmate.bot.trigger import Trigger
from groupmate.function_calls import MessageContext
from groupmate.function_calls.language import PlainSentence
from groupmate.storage import StorageError, utc_now
from groupmate.storage.chat_locks import ChatLocks
from groupmate.storage.chatlog import ChatLog, LogEntry, LoggedMessage, Reaction, Received, Seen

if TYPE_CHECKING:
    from groupmate.bot.metrics import Metrics

log = logging.getLogger(__name__)

INTERNAL_ERROR = PlainSentence(
    "Sorry, something went wrong on my side. The error was logged.",
    "抱歉，我这边出了问题，错误已经记录下来了。",
)

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
        metrics: Metrics | None = None,
        presses: PressHandler | None = None,
    ) -> None:
        self.config = config
        # Buttons and the reactions that stand for them (None: a bot without reminders).
        self._presses = presses
        self._metrics = metrics
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
        # Which messages are for the bot (and their follow-up windows).
        self.trigger = Trigger(config.bot, answerer, clock)
        self._bursts = Bursts(config.bot.burst_ms) if config.bot.burst_ms else None

    async def handle(self, message: IncomingMessage, deliver: Deliver | None = None) -> list[Reply]:
        """Replies for one message (often none: a group message not meant for the bot).

        Without `deliver` the caller hands the replies back itself (an HTTP response, the
        terminal) and they count as delivered once returned. An adapter passes `deliver`,
        which sends them to the platform: only once it returns is the message marked
        delivered, so a platform's redelivery after a crash resends the logged answer.
        Errors raised by `deliver` reach the caller; the router's own become a reply.
        """
        if message.chat_type == "group" and not self.config.bot.groups.admits(message.chat_id):
            return []  # not an enabled chat: not even logged, nor counted
        if self._metrics is not None:
            self._metrics.received(message)
        # Any other message of the sender lets a question of the bot to them lapse.
        self._answerer.lapse_question(message, self.trigger.without_mention(message.text))
        text = self.trigger.text_for_bot(message)
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
        part = Part(message, text, self._entry(message), self._alone(message, text))
        burst: Burst | None = None
        try:
            if self._bursts is not None and not message.one_at_a_time:
                burst = await self._bursts.collect(await self._log_on_arrival(part))
                if burst is None:
                    return []  # answered with a later message of the same sender
            replies = await self._answer_in_turn(burst.parts if burst else [part], deliver)
            if burst is not None:
                burst.answered = True
            return replies
        finally:
            if burst is not None:
                burst.finish()
            if key is not None:
                self._in_flight.discard(key)

    async def _log_on_arrival(self, part: Part) -> Part:
        """A message that may wait for its sender's burst is logged as it comes, in its
        place among the chat's other messages (those not meant for the bot are logged at
        once): not after them, when the burst is answered. Only a new row counts: one
        found logged (a redelivery, or the same message reaching another process) is
        looked at again in the chat's turn, under its lock, as any message is."""
        chat = part.message.chat_id
        try:
            seen = await self._chatlog.append(chat, part.entry)
        except StorageError as exc:  # its turn tries again, and answers if it can't
            log.warning("chat %s: message %s not logged yet: %s", chat, part.message_id, exc)
            return part
        return dataclasses.replace(part, logged=seen is Seen.NEW)

    async def react(self, reaction: IncomingReaction) -> PressOutcome | None:
        """A reaction to a message of an enabled chat, kept with the log (a reaction to a
        message the log does not have is not kept: nothing to count it on)."""
        chat = reaction.chat_id
        if reaction.chat_type == "group" and not self.config.bot.groups.admits(chat):
            return None
        at = self._when(reaction.timestamp)
        kept = Reaction(
            reaction.message_id,
            reaction.sender_id,
            reaction.emoji,
            at,
            added=reaction.added,
            reaction_id=reaction.reaction_id,
        )
        try:
            await self._chatlog.react(chat, kept)
        except StorageError as exc:
            log.warning("chat %s: a reaction was not kept: %s", chat, exc)
        if self._presses is None:
            return None
        return await self._presses.react(reaction)  # ✅ 💤 👍 on a reminder: its buttons

    async def press(self, press: Press) -> PressOutcome:
        """A press of a reminder's button: acted on once, as the presser (issue 41, §1)."""
        shut = press.chat_type == "group" and not self.config.bot.groups.admits(press.chat_id)
        if self._presses is None or shut:
            return PressOutcome(ok=False, answer=NO_REMINDERS.english)
        return await self._presses.press(press)

    async def posted(self, reply: Reply, message_id: str) -> None:
        """A reminder's confirmation went out as `message_id`: a 👍 on it is "me too"."""
        if self._presses is not None:
            await self._presses.posted(reply, message_id)

    async def _answer_in_turn(self, parts: Sequence[Part], deliver: Deliver | None) -> list[Reply]:
        """Answer `parts` (one message, or one sender's burst) in the chat's turn."""
        last = parts[-1]
        chat = last.message.chat_id
        lock = self._locks[chat]
        self._waiting[chat] += 1
        try:
            # Messages of one chat are handled, and their replies sent, in arrival order;
            # chats run concurrently.
            async with lock, contextlib.AsyncExitStack() as held:
                if not await self._hold_across_processes(held, chat):
                    down = self._answerer.storage_down(last.text)
                    answer = _Answer([Reply(chat, down)], ())
                else:
                    answer = await self._decide(parts, delivering=deliver is not None)
                if deliver is not None and answer.replies:
                    await deliver(answer.replies)
                    for message_id in answer.message_ids:
                        await self._mark_delivered(chat, message_id)
                if self._metrics is not None and answer.replies:  # handed over: answered
                    self._metrics.answered(last.message, len(parts))
                # A real answer (logged: not "the database is down"), once it is out.
                if last.message.chat_type == "group" and answer.message_ids:
                    await self.trigger.answered(last.message)
                return answer.replies
        finally:
            self._waiting[chat] -= 1
            if not self._waiting[chat]:  # idle chats keep no state
                del self._waiting[chat], self._locks[chat]

    def _alone(self, message: IncomingMessage, text: str) -> bool:
        """Answered on its own, never joined to a burst: a command, a "yes" to the bot's
        offer, a reply to a message (each means what it says only as it is)."""
        if self._bursts is None:
            return True
        command = Commands.split(text)
        return (
            (command is not None and self._answerer.commands.knows(command[0]))
            or (message.reply_to_message_id is not None and not message.in_thread)
            or message.reply_to_bot
            or self._answerer.awaits_yes(message, text)
        )

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

    def _when(self, timestamp: datetime | None) -> datetime:
        """When a platform says something happened, as the log keeps it."""
        at = timestamp or self._clock()
        if at.tzinfo is None:
            at = at.replace(tzinfo=UTC)  # platforms that omit the zone mean UTC
        return min(at, self._clock())  # a clock ahead must not age out the whole log

    def _entry(self, message: IncomingMessage) -> LogEntry:
        return LogEntry(
            message_id=message.message_id or uuid.uuid4().hex,
            sender_id=message.sender_id,
            sender_name=message.sender_name,
            text=message.text.replace("\x00", ""),
            at=self._when(message.timestamp),
            reply_to=message.reply_to_message_id,
        )

    async def _decide(self, parts: Sequence[Part], *, delivering: bool) -> _Answer:
        chat = parts[-1].message.chat_id
        try:
            return await self._handle(parts, delivering=delivering)
        except StorageError as exc:
            log.error("chat %s: storage failed: %s", chat, exc)
            error = self._answerer.storage_down(parts[-1].text)
        except Exception:
            # A bug must cost one answer, never a stack trace in the chat.
            log.exception("chat %s: handling a message failed", chat)
            error = INTERNAL_ERROR.for_message(parts[-1].text)
        return _Answer([Reply(chat, error)], ())

    async def _mark_delivered(self, chat_id: str, message_id: str) -> None:
        try:
            await self._chatlog.mark_delivered(chat_id, message_id, self._clock())
        except StorageError as exc:
            # Sent all the same; at worst a redelivery of the message resends the answer.
            log.error("chat %s: marking message %s delivered failed: %s", chat_id, message_id, exc)

    async def _handle(self, parts: Sequence[Part], *, delivering: bool) -> _Answer:
        """Log each message (once: a redelivery is found logged) and answer the new ones:
        a run of messages joined into one answer, a message that stands alone on its own."""
        chat = parts[-1].message.chat_id
        history = self.config.bot.history
        # The history the model will need is read with the message's own write.
        wanted = (
            history.max_messages + 1 if self._answerer.has_model and history.max_messages else 0
        )
        replies: list[Reply] = []
        logged: list[str] = []  # messages whose answers, once sent, are marked delivered
        run: list[Part] = []  # new messages to answer together
        for index, part in enumerate(parts):
            ends = part.alone or index + 1 == len(parts) or parts[index + 1].alone
            received = await self._received(part, wanted if ends else 0)
            message_id = part.message_id
            if received.seen is Seen.ANSWERED:
                log.info("chat %s: message %s seen before", chat, message_id)
            elif received.seen is Seen.UNDELIVERED:
                # Decided before a crash, maybe never sent: send the same answer again
                # rather than decide anew (which could set a reminder twice).
                log.info("chat %s: message %s answered but not sent; resending", chat, message_id)
                texts = await self._chatlog.answer_to(chat, message_id)
                if not delivering:
                    await self._mark_delivered(chat, message_id)
                replies += [self._reply(part.message, t) for t in texts]
                logged.append(message_id)
            else:
                if received.seen is Seen.UNANSWERED:
                    log.info(
                        "chat %s: message %s never answered, handling it again", chat, message_id
                    )
                run.append(part)
            if ends and run:
                texts, recorded, confirms = await self._answer_run(
                    run, received.recent, delivering=delivering
                )
                replies += [self._reply(run[-1].message, t, confirms) for t in texts]
                logged += [recorded] if recorded else []
                run = []
        return _Answer(replies, tuple(logged))

    async def _received(self, part: Part, recent: int) -> Received:
        """Log `part` (or find it logged) and read the history its answer needs."""
        chat = part.message.chat_id
        if not part.logged:
            return await self._chatlog.receive(chat, part.entry, recent=recent)
        history = await self._chatlog.history_to(chat, part.message_id, recent) if recent else []
        return Received(Seen.NEW, history)

    async def _answer_run(
        self, run: list[Part], recent: list[LoggedMessage], *, delivering: bool
    ) -> tuple[list[str], str | None, str | None]:
        """One answer to `run` (its texts joined), logged against its last message; that
        message's id, None if the answer could not be logged; and the one reminder the
        answer confirms, if it set one."""
        last = run[-1]
        chat, message_id = last.message.chat_id, last.message_id
        text = "\n".join(part.text for part in run)
        began = self._clock()
        answer = await self._answerer.answer(
            last.message, text, without_earlier(recent, run[:-1]), request_messages=len(run)
        )
        texts = [] if answer is None else [answer]
        confirms = None
        if answer and "⏰" in answer and self._presses is not None:
            # A confirmation: which reminder it confirms, so a 👍 on it is "me too".
            confirms = await self._presses.created_in_turn(chat, last.message.sender_id, began)
        try:
            # The earlier ones are answered by the last one's answer, in its transaction.
            covers = [part.message_id for part in run[:-1]]
            await self._record(chat, message_id, texts, delivering=delivering, covers=covers)
        except StorageError as exc:
            # The answer is decided and its tools ran (a reminder may be set): it says
            # what was done, where "nothing was changed" would be false. Unrecorded, a
            # redelivery of this message is answered again.
            log.error("chat %s: answer to %s not logged: %s", chat, message_id, exc)
            return texts, None, confirms
        return texts, message_id, confirms

    async def _record(
        self,
        chat_id: str,
        message_id: str,
        texts: list[str],
        *,
        delivering: bool,
        covers: Sequence[str] = (),
    ) -> None:
        await self._chatlog.record_answer(
            chat_id,
            message_id,
            texts,
            bot_id="bot",
            bot_name=self.config.bot.name,
            at=self._clock(),
            delivered=not delivering,
            covers=covers,
        )

    async def context(self, message: IncomingMessage, *, progress: bool = True) -> MessageContext:
        """The tools' context for a message (see `Answerer.context`)."""
        return await self._answerer.context(message, progress=progress)

    def _reply(self, message: IncomingMessage, text: str, confirms: str | None = None) -> Reply:
        mentions = (message.sender_id,) if message.chat_type == "group" else ()
        return Reply(message.chat_id, text, mentions, reminder_id=confirms)


@dataclasses.dataclass(frozen=True, slots=True)
class _Answer:
    """What the router decided for one message or burst; `message_ids` are those its
    replies were logged against, so their delivery can be marked."""

    replies: list[Reply]
    message_ids: tuple[str, ...]
