"""The chat log: what was said in enabled chats, for context and summaries."""

from __future__ import annotations

import enum
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.database import Database
from storage.models import ChatMessage

_messages = cast(Table, ChatMessage.__table__)


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


def _append(session: Session, values: dict[str, Any]) -> Seen:
    try:
        with session.begin_nested():
            session.execute(_messages.insert().values(**values))
    except IntegrityError:  # this platform message id was logged before
        row = session.execute(
            select(_messages.c.answered_at, _messages.c.delivered_at).where(
                _messages.c.chat_id == values["chat_id"],
                _messages.c.message_id == values["message_id"],
            )
        ).one()
        if row.answered_at is None:
            return Seen.UNANSWERED
        return Seen.UNDELIVERED if row.delivered_at is None else Seen.ANSWERED
    return Seen.NEW


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
    values = {"answered_at": at, "delivered_at": at if delivered or not replies else None}
    session.execute(
        update(_messages)
        .where(_the_message(chat_id, message_id), _messages.c.answered_at.is_(None))
        .values(**values)
    )


def _mark_delivered(session: Session, chat_id: str, message_id: str, at: datetime) -> None:
    session.execute(
        update(_messages)
        .where(_the_message(chat_id, message_id), _messages.c.delivered_at.is_(None))
        .values(delivered_at=at)
    )


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
    query = select(_messages).where(_messages.c.chat_id == chat_id)
    if since is not None:
        query = query.where(_messages.c.created_at >= since)
    rows = session.execute(query.order_by(_messages.c.id.desc()).limit(limit)).all()
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


class ChatLog:
    """Append-only log per chat, with retention by count and by age."""

    def __init__(self, database: Database, *, keep: int = 5000, max_age: timedelta) -> None:
        self._database = database
        self.keep = keep
        self.max_age = max_age
        self._appends: dict[str, int] = {}

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
        answered. `answered` marks it done at once (a message not meant for the bot)."""
        values = {
            "chat_id": chat_id,
            "message_id": message_id,
            "sender_id": sender_id,
            "sender_name": sender_name,
            "text": text,
            "from_bot": from_bot,
            "created_at": at,
            "answered_at": at if answered else None,
            "delivered_at": at if answered else None,
        }
        seen = await self._database.write(functools.partial(_append, values=values))
        if seen is Seen.NEW:
            if len(self._appends) > 100_000:
                self._appends.clear()
            count = self._appends[chat_id] = self._appends.get(chat_id, 0) + 1
            if count % 100 == 0:  # trim busy chats now and then, not on every message
                await self.prune(chat_id, at)
        return seen

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
        await self._database.write(
            functools.partial(
                _record_answer,
                chat_id=chat_id,
                message_id=message_id,
                replies=rows,
                at=at,
                delivered=delivered,
            )
        )

    async def mark_delivered(self, chat_id: str, message_id: str, at: datetime) -> None:
        """The platform accepted the answer to a message: a redelivery is now ignored."""
        await self._database.write(
            functools.partial(_mark_delivered, chat_id=chat_id, message_id=message_id, at=at)
        )

    async def answer_to(self, chat_id: str, message_id: str) -> list[str]:
        """The texts of the bot's logged answer to a message, in order."""
        return await self._database.read(
            functools.partial(_answer_to, chat_id=chat_id, message_id=message_id)
        )

    async def text_of(self, chat_id: str, message_id: str) -> str | None:
        """The words of one logged message of this chat (a message being replied to)."""
        return await self._database.read(
            functools.partial(_text_of, chat_id=chat_id, message_id=message_id)
        )

    async def prune_expired(self, now: datetime) -> int:
        """Drop every chat's messages older than the retention age; run periodically."""
        before = now - self.max_age
        return await self._database.write(functools.partial(_prune_expired, before=before))

    async def recent(
        self, chat_id: str, limit: int, *, since: datetime | None = None
    ) -> list[LoggedMessage]:
        """The last `limit` messages, oldest first."""
        return await self._database.read(
            functools.partial(_recent, chat_id=chat_id, limit=limit, since=since)
        )

    async def page(
        self, chat_id: str, *, before: int | None = None, limit: int = 50
    ) -> list[PagedMessage]:
        """Up to `limit` messages older than the one with id `before` (the newest when
        None), oldest first: a page of the history, however long the chat is."""
        return await self._database.read(
            functools.partial(_page, chat_id=chat_id, before=before, limit=limit)
        )

    async def count(self, chat_id: str) -> int:
        query = select(func.count()).where(_messages.c.chat_id == chat_id)
        return await self._database.read(lambda s: s.scalar(query) or 0)

    async def prune(self, chat_id: str, now: datetime) -> int:
        before = now - self.max_age
        return await self._database.write(
            functools.partial(_prune, chat_id=chat_id, keep=self.keep, before=before)
        )
