"""Bursts: people type "hi" / "can you" / "remind me at 5 to call mom" as three messages.
With `bot.burst_ms` set, the messages one sender addresses to the bot within that many
milliseconds of each other are answered once, as one message (their texts joined, in
order), instead of three half-answers.

How it keeps the router's guarantees (`bot.router`):

- **Nobody else waits.** A message waits for its burst here, before the router takes the
  chat's lock: other senders and other chats go on meanwhile. Each message restarts its
  sender's wait; a burst is closed after `MAX_PARTS` messages or `MAX_SPAN` windows
  from its first, so that a steady typist is still answered.
- **Each message once, in its place.** Each message is logged as it comes (the router's
  `_log_on_arrival`), among the chat's other messages, before it waits. The handler of
  the burst's last message answers it, under the chat's lock (and, across processes,
  the database's), with the history up to that message. The others wait until it is
  done, so their platform ids stay "in flight" and a webhook retry of any of them
  meanwhile is dropped. One found logged before (a redelivery) is looked at again
  under the lock: left out (answered) or its logged answer resent (decided before a
  crash, never sent).
- **One answer, sent once.** The answer is logged against the last message, undelivered
  until the platform took it, and the earlier ones are marked answered (with nothing
  of their own to send) in the same transaction. A redelivery of any of them afterwards
  finds it answered; a crash before it leaves all of them unanswered, and their
  redelivery is answered whole, never twice and never without the earlier words.
- **Order.** What must not be merged is answered on its own, after the joined text: a
  slash command, a "yes" to the bot's offer, a reply to a message. Such a message closes
  its sender's burst at once.
- **Several processes.** A burst is gathered in one process's memory: messages of one
  burst that reach two processes are answered once by each (each message still once).
  Route each chat to one process (docs/operators/several-processes.md) to keep them together.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from groupmate.bot.messages import IncomingMessage
from groupmate.storage.chatlog import LogEntry, LoggedMessage

# A burst is answered after this many messages, or this many windows after its first.
MAX_PARTS = 10
MAX_SPAN = 5


@dataclass(frozen=True, slots=True)
class Part:
    """One message meant for the bot: its words for the bot (mention and prefix taken off),
    its log entry (made when it came), and whether it is answered on its own."""

    message: IncomingMessage
    text: str
    entry: LogEntry
    alone: bool = False
    # Logged as it came (`Router`), new: its turn needs no second look at the log.
    logged: bool = False

    @property
    def message_id(self) -> str:
        """Its id in the log: the platform's, or the one the router made up for it."""
        assert self.entry.message_id is not None  # the router's entries always have one
        return self.entry.message_id


@dataclass(slots=True)
class Burst:
    """One sender's messages that are answered together; `finish` once answered."""

    parts: list[Part]
    started: float
    done: asyncio.Event = field(default_factory=asyncio.Event)
    # Set by the router once the burst's answer is decided: until then (its handler was
    # cancelled or failed) the other messages are not answered, so each answers itself.
    answered: bool = False

    def finish(self) -> None:
        self.done.set()


class Bursts:
    """Open bursts per (chat, sender); one instance serves every chat."""

    def __init__(self, window_ms: int) -> None:
        self._window = window_ms / 1000
        self._open: dict[tuple[str, str], Burst] = {}

    async def collect(self, part: Part) -> Burst | None:
        """Wait for the sender's burst to end. The handler of its last message gets the
        burst (to answer, then `finish`); the others get None once it is finished."""
        loop = asyncio.get_running_loop()
        key = (part.message.chat_id, part.message.sender_id)
        burst = self._open.get(key)
        if burst is None:
            burst = self._open[key] = Burst([], loop.time())
        burst.parts.append(part)
        mine = len(burst.parts)
        if not part.alone and mine < MAX_PARTS:
            deadline = min(loop.time() + self._window, burst.started + self._window * MAX_SPAN)
            try:
                await asyncio.sleep(deadline - loop.time())
            except asyncio.CancelledError:
                if burst.parts[-1] is part:  # none left to answer it: the others stop too
                    self._close(key, burst)
                    burst.finish()
                raise
        if len(burst.parts) != mine:  # a later message of the sender answers it
            await burst.done.wait()
            if burst.answered:
                return None
            # Its handler never answered (cancelled, failed): this message is answered on
            # its own rather than left unanswered in the log.
            return Burst([part], loop.time())
        self._close(key, burst)
        return burst

    def _close(self, key: tuple[str, str], burst: Burst) -> None:
        if self._open.get(key) is burst:  # from here on, a new message starts a new burst
            del self._open[key]


def without_earlier(recent: list[LoggedMessage], earlier: Sequence[Part]) -> list[LoggedMessage]:
    """The history without a burst's earlier messages: the model gets them once, in the
    joined question (the newest entry, the burst's last message, stays: it is dropped as
    the question)."""
    if not earlier:
        return recent
    left = [(part.message.sender_id, part.entry.text) for part in earlier]
    kept: list[LoggedMessage] = []
    for logged in reversed(recent[:-1]):
        if left and not logged.from_bot and (logged.sender_id, logged.text) == left[-1]:
            left.pop()
        else:
            kept.append(logged)
    kept.reverse()
    return [*kept, *recent[-1:]]
