"""The chat log: what was said in enabled chats, for context and summaries."""

from __future__ import annotations

import enum
import functools
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


class Seen(enum.Enum):
    """What `ChatLog.append` found: a new message, or one logged before and whether the
    bot was done with it then."""

    NEW = "new"
    UNANSWERED = "unanswered"  # logged, but the process died before answering it
    ANSWERED = "answered"


def _append(session: Session, values: dict[str, Any]) -> Seen:
    try:
        with session.begin_nested():
            session.execute(_messages.insert().values(**values))
    except IntegrityError:  # this platform message id was logged before
        answered_at = session.scalar(
            select(_messages.c.answered_at).where(
                _messages.c.chat_id == values["chat_id"],
                _messages.c.message_id == values["message_id"],
            )
        )
        return Seen.UNANSWERED if answered_at is None else Seen.ANSWERED
    return Seen.NEW


def _mark_answered(session: Session, chat_id: str, message_id: str, at: datetime) -> None:
    session.execute(
        update(_messages)
        .where(
            _messages.c.chat_id == chat_id,
            _messages.c.message_id == message_id,
            _messages.c.answered_at.is_(None),
        )
        .values(answered_at=at)
    )


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
        }
        seen = await self._database.write(functools.partial(_append, values=values))
        if seen is Seen.NEW:
            if len(self._appends) > 100_000:
                self._appends.clear()
            count = self._appends[chat_id] = self._appends.get(chat_id, 0) + 1
            if count % 100 == 0:  # trim busy chats now and then, not on every message
                await self.prune(chat_id, at)
        return seen

    async def mark_answered(self, chat_id: str, message_id: str, at: datetime) -> None:
        """Record that the bot is done with a logged message, so a redelivery of it is
        not handled again."""
        await self._database.write(
            functools.partial(_mark_answered, chat_id=chat_id, message_id=message_id, at=at)
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

    async def count(self, chat_id: str) -> int:
        query = select(func.count()).where(_messages.c.chat_id == chat_id)
        return await self._database.read(lambda s: s.scalar(query) or 0)

    async def prune(self, chat_id: str, now: datetime) -> int:
        before = now - self.max_age
        return await self._database.write(
            functools.partial(_prune, chat_id=chat_id, keep=self.keep, before=before)
        )
