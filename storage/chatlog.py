"""The chat log: what was said in enabled chats, for context and summaries. Its rows'
statements and units are in storage.chatlog_rows; here, when they run: in order,
batched, and which may skip the write queue."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from groupmate.storage import chatlog_rows as units
from groupmate.storage.calendar_feeds import without_feed_tokens
from groupmate.storage.chatlog_rows import (
    LogEntry,
    LoggedMessage,
    PagedMessage,
    Reaction,
    Received,
    Seen,
)
from groupmate.storage.database import Database

__all__ = [
    "ChatLog",
    "LogEntry",
    "LoggedMessage",
    "PagedMessage",
    "Reaction",
    "Received",
    "Seen",
]

T = TypeVar("T")
# Messages only logged are inserted together, up to this many per statement.
_ROWS_PER_WRITE = 50


@dataclass(slots=True)
class _Rows:
    """Rows of `log` that share one write: open to more rows until it is taken into a
    batch (or full, or closed by another write); `queued` once it is in the queue."""

    rows: list[dict[str, Any]]
    queued: asyncio.Event = field(default_factory=asyncio.Event)


class ChatLog:
    """Append-only log per chat, with retention by count and by age.

    Writes go through the database's group commit (`storage.group_commit`): what many
    messages write at once shares one transaction. Only `log` (a message not meant for
    the bot) returns before its row is committed; see `log` for the crash window.
    """

    def __init__(self, database: Database, *, keep: int = 5000, max_age: timedelta) -> None:
        self._database = database
        self.keep = keep
        self.max_age = max_age
        self._appends: dict[str, int] = {}
        # Rows of `log` not yet written, shared by one unit until it runs; any other
        # write of the log closes it, so rows stay in the order they came in.
        self._open_rows: _Rows | None = None
        # Per chat, its logged rows not yet in a batch (queued, or waiting for room). A
        # chat with none writes its answer ahead of the queue: a busy group's backlog
        # never delays another chat. A chat with some waits its turn behind them, so
        # that its log keeps the order messages came in.
        self._queued_rows: dict[str, int] = {}

    async def append(
        self, chat_id: str, entry: LogEntry, *, from_bot: bool = False, answered: bool = False
    ) -> Seen:
        """Log one message, or find it logged before (a redelivery) and say whether it was
        answered. `answered` marks it done at once (a message not meant for the bot).
        Returns once the row is committed."""
        values = units.new_row(chat_id, entry, from_bot=from_bot, answered=answered)
        urgent = self._after_logged(chat_id)
        seen = await self._database.batches.write(
            functools.partial(units.append, values=values), urgent=urgent
        )
        if seen is Seen.NEW:
            await self._count_append(chat_id, entry.at)
        return seen

    async def receive(self, chat_id: str, entry: LogEntry, *, recent: int = 0) -> Received:
        """`append` for a message meant for the bot, and the chat's `recent` newest
        messages read in the same transaction (the history its answer needs), so that a
        triggered message costs one round trip to the database before the model."""
        values = units.new_row(chat_id, entry, from_bot=False, answered=False)
        urgent = self._after_logged(chat_id)
        received = await self._database.batches.write(
            functools.partial(units.receive, values=values, recent=recent), urgent=urgent
        )
        if received.seen is Seen.NEW:
            await self._count_append(chat_id, entry.at)
        return received

    async def log(self, chat_id: str, entry: LogEntry) -> None:
        """Log a message the bot has nothing to do with but keep (for history and
        summaries), without waiting for the write: it joins the next group commit (only
        while the write queue is full does it wait, for room in it).

        The crash window: a process killed before that commit loses the messages logged
        but not yet written: normally those of the last few milliseconds, at most the
        write queue's bound (see storage.group_commit). A redelivered one is logged
        once. Everything written later in this process (an answer, a triggered message)
        is committed after it, so the log's order is the order messages came in.
        """
        row = units.new_row(chat_id, entry, from_bot=False, answered=True)
        self._queued_rows[chat_id] = self._queued_rows.get(chat_id, 0) + 1
        unit = self._open_rows
        if unit is None:
            unit = self._open_rows = _Rows([row])
            # Shielded: a caller cancelled while it waits for room must not strand the
            # rows that joined its unit meanwhile.
            await asyncio.shield(self._queue_rows(unit))
        else:
            unit.rows.append(row)
            if len(unit.rows) >= _ROWS_PER_WRITE:
                self._open_rows = None  # full: the next message starts another
            # Returns once the unit is queued (at once, usually): while the queue is
            # full, a message is not logged until its unit is in, so that what a crash
            # can lose stays bounded by the queue.
            await unit.queued.wait()
        await self._count_append(chat_id, entry.at)

    async def _queue_rows(self, unit: _Rows) -> None:
        try:
            await self._database.batches.write_soon(
                functools.partial(units.insert_new, rows=unit.rows),
                what="chat log messages",
                on_taken=functools.partial(self._close_rows, unit),
                weight=_ROWS_PER_WRITE,
            )
        finally:
            unit.queued.set()

    def _after_logged(self, chat_id: str) -> bool:
        """Before any other write of the log: rows logged from now on are written after
        it. Returns whether it may skip the queue: the chat has no rows queued or waiting
        for room (else it takes its turn behind them, which keeps the log in order)."""
        self._open_rows = None
        return chat_id not in self._queued_rows

    def _close_rows(self, unit: _Rows) -> None:
        if self._open_rows is unit:  # its batch is being written: later rows start anew
            self._open_rows = None
        for row in unit.rows:  # in the batch now: anything queued later is written after
            chat_id = row["chat_id"]
            left = self._queued_rows.get(chat_id, 0) - 1
            if left > 0:
                self._queued_rows[chat_id] = left
            else:
                self._queued_rows.pop(chat_id, None)

    async def flush(self) -> None:
        """Wait until every message logged so far is written."""
        await self._database.batches.flush()

    async def _read(self, work: Callable[[Session], T]) -> T:
        # Read-your-writes: what this process logged before the read is in its answer.
        await self._database.batches.flush()
        return await self._database.read(work)

    async def _count_append(self, chat_id: str, at: datetime) -> None:
        if len(self._appends) > 100_000:
            self._appends.clear()
        count = self._appends[chat_id] = self._appends.get(chat_id, 0) + 1
        if count % 100 == 0:  # trim busy chats now and then, not on every message
            before = at - self.max_age
            # Behind the chat's own queued rows (it must see them to trim them); ahead of
            # the queue when it has none, so that it never holds a message of a quiet
            # chat behind a busy group's backlog.
            await self._database.batches.write_soon(
                functools.partial(units.prune, chat_id=chat_id, keep=self.keep, before=before),
                what="chat log retention",
                urgent=chat_id not in self._queued_rows,
            )

    async def record_answer(
        self,
        chat_id: str,
        message_id: str,
        replies: Sequence[str],
        *,
        bot_id: str,
        bot_name: str,
        at: datetime,
        delivered: bool,
        covers: Sequence[str] = (),
    ) -> None:
        """Log the bot's answer to a logged message and mark the message answered, in one
        transaction. Unless `delivered` (or there is nothing to send), it stays
        undelivered until `mark_delivered`: a redelivery then resends this answer instead
        of deciding a new one (which would repeat its side effects, like a reminder).
        `covers`: the earlier messages of a burst this answer answers too, marked answered
        in the same transaction."""
        rows = [
            {
                "chat_id": chat_id,
                "message_id": None,
                "reply_to": message_id,
                "sender_id": bot_id,
                "sender_name": bot_name,
                # A calendar link opens a feed: the log (and so search, the model's
                # history and backups) keeps it without its token.
                "text": without_feed_tokens(text),
                "from_bot": True,
                "created_at": at,
            }
            for text in replies
        ]
        urgent = self._after_logged(chat_id)
        await self._database.batches.write(
            urgent=urgent,
            work=functools.partial(
                units.record_answer,
                chat_id=chat_id,
                message_id=message_id,
                replies=rows,
                at=at,
                delivered=delivered,
                covers=tuple(covers),
            ),
        )

    async def react(self, chat_id: str, reaction: Reaction) -> bool:
        """Record someone's reaction to a logged message (or its taking back), in its
        place after the messages logged before it; False if the message is not logged."""
        return await self._database.batches.write(
            functools.partial(units.react, chat_id=chat_id, reaction=reaction),
            urgent=self._after_logged(chat_id),
        )

    async def mark_delivered(self, chat_id: str, message_id: str, at: datetime) -> None:
        """The platform accepted the answer to a message: a redelivery is now ignored."""
        urgent = self._after_logged(chat_id)
        await self._database.batches.write(
            functools.partial(units.mark_delivered, chat_id=chat_id, message_id=message_id, at=at),
            urgent=urgent,
        )

    async def answer_to(self, chat_id: str, message_id: str) -> list[str]:
        """The texts of the bot's logged answer to a message, in order."""
        return await self._read(
            functools.partial(units.answer_to, chat_id=chat_id, message_id=message_id)
        )

    async def text_of(self, chat_id: str, message_id: str) -> str | None:
        """The words of one logged message of this chat (a message being replied to)."""
        return await self._read(
            functools.partial(units.text_of, chat_id=chat_id, message_id=message_id)
        )

    async def prune_expired(self, now: datetime) -> int:
        """Drop every chat's messages older than the retention age; run periodically."""
        before = now - self.max_age
        return await self._database.write(functools.partial(units.prune_expired, before=before))

    async def recent(
        self, chat_id: str, limit: int, *, since: datetime | None = None
    ) -> list[LoggedMessage]:
        """The last `limit` messages, oldest first."""
        return await self._read(
            functools.partial(units.recent_messages, chat_id=chat_id, limit=limit, since=since)
        )

    async def history_to(self, chat_id: str, message_id: str, limit: int) -> list[LoggedMessage]:
        """The `limit` newest messages up to a logged one (itself last), oldest first: the
        history of a question logged before its turn (a burst's), without what came
        after it."""
        return await self._read(
            functools.partial(units.history_to, chat_id=chat_id, message_id=message_id, limit=limit)
        )

    async def page(
        self, chat_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[PagedMessage]:
        """Up to `limit` messages older than the one with id `before` (the newest when
        None), oldest first: a page of the history, however long the chat is."""
        return await self._read(
            functools.partial(units.page, chat_id=chat_id, before=before, limit=limit)
        )

    async def count(self, chat_id: str) -> int:
        return await self._read(functools.partial(units.count, chat_id=chat_id))

    async def prune(self, chat_id: str, now: datetime) -> int:
        before = now - self.max_age
        return await self._database.write(
            functools.partial(units.prune, chat_id=chat_id, keep=self.keep, before=before)
        )


class ChatLogReader:
    """The read-only view of the chat log, for read tools and plugins' services: what
    was said, never a change (no logging, no pruning)."""

    __slots__ = ("_log",)

    def __init__(self, log: ChatLog) -> None:
        self._log = log

    async def flush(self) -> None:
        """Wait for the rows logged so far to be written, so a read sees them."""
        await self._log.flush()

    async def recent(
        self, chat_id: str, limit: int, *, since: datetime | None = None
    ) -> list[LoggedMessage]:
        return await self._log.recent(chat_id, limit, since=since)

    async def history_to(self, chat_id: str, message_id: str, limit: int) -> list[LoggedMessage]:
        return await self._log.history_to(chat_id, message_id, limit)

    async def page(
        self, chat_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[PagedMessage]:
        return await self._log.page(chat_id, before=before, limit=limit)

    async def count(self, chat_id: str) -> int:
        return await self._log.count(chat_id)

    async def text_of(self, chat_id: str, message_id: str) -> str | None:
        return await self._log.text_of(chat_id, message_id)

    async def answer_to(self, chat_id: str, message_id: str) -> list[str]:
        return await self._log.answer_to(chat_id, message_id)
