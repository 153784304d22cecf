"""The chat log: what was said in enabled chats, for context and summaries."""

from __future__ import annotations

import asyncio
import enum
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

from sqlalchemy import Table, bindparam, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from storage.database import Database
from storage.models import ChatMessage

_messages = cast(Table, ChatMessage.__table__)
T = TypeVar("T")
# Messages only logged are inserted together, up to this many per statement.
_ROWS_PER_WRITE = 50


@dataclass(frozen=True, slots=True)
class LoggedMessage:
    sender_id: str
    sender_name: str
    text: str
    from_bot: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class PagedMessage:
    """A logged message with its position, for paging through a chat's history."""

    id: int
    sender_id: str
    sender_name: str
    text: str
    from_bot: bool
    created_at: datetime


class Seen(enum.Enum):
    """What `ChatLog.append` found: a new message, or one logged before and how far the
    bot got with it then."""

    NEW = "new"
    UNANSWERED = "unanswered"  # logged, but the process died before deciding the answer
    UNDELIVERED = "undelivered"  # answer decided and logged, but not known to be sent
    ANSWERED = "answered"  # answered and sent, or not meant for the bot


@dataclass(frozen=True, slots=True)
class Received:
    """What `ChatLog.receive` found: the message's `Seen`, and the chat's newest
    messages as of it (oldest first, the message itself last when it is new)."""

    seen: Seen
    recent: list[LoggedMessage]


# The statements every message runs are built once: only values are bound per call
# (building and cache-keying a statement cost more than running it).
_THE_MESSAGE = (_messages.c.chat_id == bindparam("the_chat")) & (
    _messages.c.message_id == bindparam("the_message")
)
# A row whose (chat, platform message id) is logged already is skipped by the INSERT
# itself, not by an error: a redelivered message never rolls back the batch it is in.
_INSERT_NEW = {
    "sqlite": sqlite_insert(_messages).on_conflict_do_nothing(),
    "postgresql": postgresql_insert(_messages).on_conflict_do_nothing(),
}
# RETURNING says whether the row went in (psycopg reports no rowcount for it).
_INSERT_RETURNING = {name: insert.returning(_messages.c.id) for name, insert in _INSERT_NEW.items()}
_MARKS = select(_messages.c.answered_at, _messages.c.delivered_at).where(_THE_MESSAGE)
_ANSWER = (
    update(_messages)
    .where(_THE_MESSAGE, _messages.c.answered_at.is_(None))
    .values(answered_at=bindparam("answered"), delivered_at=bindparam("delivered"))
)
_DELIVERED = (
    update(_messages)
    .where(_THE_MESSAGE, _messages.c.delivered_at.is_(None))
    .values(delivered_at=bindparam("delivered"))
)
_RECENT = (
    select(
        _messages.c.sender_id,
        _messages.c.sender_name,
        _messages.c.text,
        _messages.c.from_bot,
        _messages.c.created_at,
    )
    .where(_messages.c.chat_id == bindparam("the_chat"))
    .order_by(_messages.c.id.desc())
    .limit(bindparam("limit"))
)
_RECENT_SINCE = _RECENT.where(_messages.c.created_at >= bindparam("since"))


def _dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def _insert_new(session: Session, rows: list[dict[str, Any]]) -> None:
    session.execute(_INSERT_NEW[_dialect(session)], rows)


def _append(session: Session, values: dict[str, Any]) -> Seen:
    if session.execute(_INSERT_RETURNING[_dialect(session)], values).first():
        return Seen.NEW
    # This platform message id was logged before: how far did the bot get with it?
    the_message = {"the_chat": values["chat_id"], "the_message": values["message_id"]}
    row = session.execute(_MARKS, the_message).one()
    if row.answered_at is None:
        return Seen.UNANSWERED
    return Seen.UNDELIVERED if row.delivered_at is None else Seen.ANSWERED


def _receive(session: Session, values: dict[str, Any], recent: int) -> Received:
    seen = _append(session, values)
    history = _recent(session, values["chat_id"], recent, None) if recent else []
    return Received(seen, history)


def _the_message(chat_id: str, message_id: str) -> Any:
    return (_messages.c.chat_id == chat_id) & (_messages.c.message_id == message_id)


def _record_answer(
    session: Session,
    chat_id: str,
    message_id: str,
    replies: list[dict[str, Any]],
    at: datetime,
    delivered: bool,
) -> None:
    # One transaction: the answer's side effects are done by now, so a redelivery must
    # find either no answer (and decide one) or this whole answer (and only resend it).
    if replies:
        session.execute(_messages.insert(), replies)
    marks = {"answered": at, "delivered": at if delivered or not replies else None}
    session.execute(_ANSWER, {"the_chat": chat_id, "the_message": message_id, **marks})


def _mark_delivered(session: Session, chat_id: str, message_id: str, at: datetime) -> None:
    session.execute(_DELIVERED, {"the_chat": chat_id, "the_message": message_id, "delivered": at})


def _answer_to(session: Session, chat_id: str, message_id: str) -> list[str]:
    rows = session.scalars(
        select(_messages.c.text)
        .where(_messages.c.chat_id == chat_id, _messages.c.reply_to == message_id)
        .order_by(_messages.c.id)
    )
    return list(rows)


def _text_of(session: Session, chat_id: str, message_id: str) -> str | None:
    return session.scalar(select(_messages.c.text).where(_the_message(chat_id, message_id)))


def _recent(
    session: Session, chat_id: str, limit: int, since: datetime | None
) -> list[LoggedMessage]:
    if since is None:
        rows = session.execute(_RECENT, {"the_chat": chat_id, "limit": limit}).all()
    else:
        params = {"the_chat": chat_id, "limit": limit, "since": since}
        rows = session.execute(_RECENT_SINCE, params).all()
    return [
        LoggedMessage(row.sender_id, row.sender_name, row.text, row.from_bot, row.created_at)
        for row in reversed(rows)
    ]


def _page(session: Session, chat_id: str, before: int | None, limit: int) -> list[PagedMessage]:
    query = select(_messages).where(_messages.c.chat_id == chat_id)
    if before is not None:
        query = query.where(_messages.c.id < before)
    rows = session.execute(query.order_by(_messages.c.id.desc()).limit(limit)).all()
    return [
        PagedMessage(row.id, row.sender_id, row.sender_name, row.text, row.from_bot, row.created_at)
        for row in reversed(rows)
    ]


def _prune(session: Session, chat_id: str, keep: int, before: datetime) -> int:
    cutoff = session.scalar(
        select(_messages.c.id)
        .where(_messages.c.chat_id == chat_id)
        .order_by(_messages.c.id.desc())
        .offset(keep)
        .limit(1)
    )
    condition = _messages.c.created_at < before
    if cutoff is not None:
        condition = condition | (_messages.c.id <= cutoff)
    result = session.execute(delete(_messages).where(_messages.c.chat_id == chat_id, condition))
    return int(getattr(result, "rowcount", 0) or 0)


def _prune_expired(session: Session, before: datetime) -> int:
    result = session.execute(delete(_messages).where(_messages.c.created_at < before))
    return int(getattr(result, "rowcount", 0) or 0)


def _row(
    chat_id: str,
    message_id: str | None,
    sender_id: str,
    sender_name: str,
    text: str,
    at: datetime,
    from_bot: bool,
    answered: bool,
) -> dict[str, Any]:
    return {
        "chat_id": chat_id,
        "message_id": message_id,
        "sender_id": sender_id,
        "sender_name": sender_name,
        "text": text,
        "from_bot": from_bot,
        "created_at": at,
        "answered_at": at if answered else None,
        "delivered_at": at if answered else None,
        "reply_to": None,
    }


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
        # Per chat, its logged rows still waiting in the queue (not yet in a batch). A
        # chat with none writes its answer ahead of the queue: a busy group's backlog
        # never delays another chat. A chat with some waits its turn behind them, so
        # that its log keeps the order messages came in.
        self._queued_rows: dict[str, int] = {}

    async def append(
        self,
        chat_id: str,
        *,
        message_id: str | None,
        sender_id: str,
        sender_name: str,
        text: str,
        at: datetime,
        from_bot: bool = False,
        answered: bool = False,
    ) -> Seen:
        """Log one message, or find it logged before (a redelivery) and say whether it was
        answered. `answered` marks it done at once (a message not meant for the bot).
        Returns once the row is committed."""
        values = _row(chat_id, message_id, sender_id, sender_name, text, at, from_bot, answered)
        urgent = self._after_logged(chat_id)
        seen = await self._database.batches.write(
            functools.partial(_append, values=values), urgent=urgent
        )
        if seen is Seen.NEW:
            await self._count_append(chat_id, at)
        return seen

    async def receive(
        self,
        chat_id: str,
        *,
        message_id: str,
        sender_id: str,
        sender_name: str,
        text: str,
        at: datetime,
        recent: int = 0,
    ) -> Received:
        """`append` for a message meant for the bot, and the chat's `recent` newest
        messages read in the same transaction (the history its answer needs), so that a
        triggered message costs one round trip to the database before the model."""
        values = _row(chat_id, message_id, sender_id, sender_name, text, at, False, False)
        urgent = self._after_logged(chat_id)
        received = await self._database.batches.write(
            functools.partial(_receive, values=values, recent=recent), urgent=urgent
        )
        if received.seen is Seen.NEW:
            await self._count_append(chat_id, at)
        return received

    async def log(
        self,
        chat_id: str,
        *,
        message_id: str | None,
        sender_id: str,
        sender_name: str,
        text: str,
        at: datetime,
    ) -> None:
        """Log a message the bot has nothing to do with but keep (for history and
        summaries), without waiting for the write: it joins the next group commit (only
        while the write queue is full does it wait, for room in it).

        The crash window: a process killed before that commit loses the messages logged
        but not yet written: normally those of the last few milliseconds, at most the
        write queue's bound (see storage.group_commit). A redelivered one is logged
        once. Everything written later in this process (an answer, a triggered message)
        is committed after it, so the log's order is the order messages came in.
        """
        row = _row(chat_id, message_id, sender_id, sender_name, text, at, False, True)
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
        await self._count_append(chat_id, at)

    async def _queue_rows(self, unit: _Rows) -> None:
        try:
            await self._database.batches.write_soon(
                functools.partial(_insert_new, rows=unit.rows),
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
                functools.partial(_prune, chat_id=chat_id, keep=self.keep, before=before),
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
    ) -> None:
        """Log the bot's answer to a logged message and mark the message answered, in one
        transaction. Unless `delivered` (or there is nothing to send), it stays
        undelivered until `mark_delivered`: a redelivery then resends this answer instead
        of deciding a new one (which would repeat its side effects, like a reminder)."""
        rows = [
            {
                "chat_id": chat_id,
                "message_id": None,
                "reply_to": message_id,
                "sender_id": bot_id,
                "sender_name": bot_name,
                "text": text,
                "from_bot": True,
                "created_at": at,
            }
            for text in replies
        ]
        urgent = self._after_logged(chat_id)
        await self._database.batches.write(
            urgent=urgent,
            work=functools.partial(
                _record_answer,
                chat_id=chat_id,
                message_id=message_id,
                replies=rows,
                at=at,
                delivered=delivered,
            ),
        )

    async def mark_delivered(self, chat_id: str, message_id: str, at: datetime) -> None:
        """The platform accepted the answer to a message: a redelivery is now ignored."""
        urgent = self._after_logged(chat_id)
        await self._database.batches.write(
            functools.partial(_mark_delivered, chat_id=chat_id, message_id=message_id, at=at),
            urgent=urgent,
        )

    async def answer_to(self, chat_id: str, message_id: str) -> list[str]:
        """The texts of the bot's logged answer to a message, in order."""
        return await self._read(
            functools.partial(_answer_to, chat_id=chat_id, message_id=message_id)
        )

    async def text_of(self, chat_id: str, message_id: str) -> str | None:
        """The words of one logged message of this chat (a message being replied to)."""
        return await self._read(functools.partial(_text_of, chat_id=chat_id, message_id=message_id))

    async def prune_expired(self, now: datetime) -> int:
        """Drop every chat's messages older than the retention age; run periodically."""
        before = now - self.max_age
        return await self._database.write(functools.partial(_prune_expired, before=before))

    async def recent(
        self, chat_id: str, limit: int, *, since: datetime | None = None
    ) -> list[LoggedMessage]:
        """The last `limit` messages, oldest first."""
        return await self._read(
            functools.partial(_recent, chat_id=chat_id, limit=limit, since=since)
        )

    async def page(
        self, chat_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[PagedMessage]:
        """Up to `limit` messages older than the one with id `before` (the newest when
        None), oldest first: a page of the history, however long the chat is."""
        return await self._read(
            functools.partial(_page, chat_id=chat_id, before=before, limit=limit)
        )

    async def count(self, chat_id: str) -> int:
        query = select(func.count()).where(_messages.c.chat_id == chat_id)
        return await self._read(lambda s: s.scalar(query) or 0)

    async def prune(self, chat_id: str, now: datetime) -> int:
        before = now - self.max_age
        return await self._database.write(
            functools.partial(_prune, chat_id=chat_id, keep=self.keep, before=before)
        )
