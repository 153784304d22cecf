"""The chat log's rows: its value types, the statements every message runs (built
once), and `Session -> T` units; storage.chatlog decides when and how they run."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import ColumnElement, Row, Table, bindparam, delete, func, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from groupmate.storage.models import ChatMessage, MessageReaction

_messages = cast(Table, ChatMessage.__table__)
_reactions = cast(Table, MessageReaction.__table__)
# Longer names (a custom emoji's) are cut: the digest shows the common ones.
_EMOJI_CHARS = 64


@dataclass(frozen=True, slots=True)
class LogEntry:
    """A message to log: the platform's id for it (None: it gave none), who said it,
    the words, and when."""

    message_id: str | None
    sender_id: str
    sender_name: str
    text: str
    at: datetime
    # The platform id of the message this one replies to (digests count replies).
    reply_to: str | None = None


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


@dataclass(frozen=True, slots=True)
class Reaction:
    """Someone's emoji on a logged message (its platform id), or taken back (`added`
    False). `reaction_id` is the platform's id of the reaction itself, where it has one:
    taking it back by that id alone needs neither message nor emoji (they may be "")."""

    message_id: str
    sender_id: str
    emoji: str
    at: datetime
    added: bool = True
    reaction_id: str | None = None


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
_ADD_REACTION = {
    "sqlite": sqlite_insert(_reactions).on_conflict_do_nothing(),
    "postgresql": postgresql_insert(_reactions).on_conflict_do_nothing(),
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
_RECENT_TO = _RECENT.where(
    _messages.c.id <= select(_messages.c.id).where(_THE_MESSAGE).scalar_subquery()
)


def dialect(session: Session) -> str:
    return session.get_bind().dialect.name


def insert_new(session: Session, rows: list[dict[str, Any]]) -> None:
    session.execute(_INSERT_NEW[dialect(session)], rows)


def append(session: Session, values: dict[str, Any]) -> Seen:
    if session.execute(_INSERT_RETURNING[dialect(session)], values).first():
        return Seen.NEW
    # This platform message id was logged before: how far did the bot get with it?
    the_message = {"the_chat": values["chat_id"], "the_message": values["message_id"]}
    row = session.execute(_MARKS, the_message).one()
    if row.answered_at is None:
        return Seen.UNANSWERED
    return Seen.UNDELIVERED if row.delivered_at is None else Seen.ANSWERED


def receive(session: Session, values: dict[str, Any], recent: int) -> Received:
    seen = append(session, values)
    history = recent_messages(session, values["chat_id"], recent, None) if recent else []
    return Received(seen, history)


def the_message(chat_id: str, message_id: str) -> Any:
    return (_messages.c.chat_id == chat_id) & (_messages.c.message_id == message_id)


def record_answer(
    session: Session,
    chat_id: str,
    message_id: str,
    replies: list[dict[str, Any]],
    at: datetime,
    delivered: bool,
    covers: Sequence[str] = (),
) -> None:
    # One transaction: the answer's side effects are done by now, so a redelivery must
    # find either no answer (and decide one) or this whole answer (and only resend it).
    # The same holds for the earlier messages of a burst it `covers`: marked answered
    # (with nothing of their own to send) only with it, so a crash before it leaves
    # every one of them unanswered, none answered with words that were never logged.
    if replies:
        session.execute(_messages.insert(), replies)
    for covered in covers:
        marks = {"the_chat": chat_id, "the_message": covered, "answered": at, "delivered": at}
        session.execute(_ANSWER, marks)
    marks = {"answered": at, "delivered": at if delivered or not replies else None}
    session.execute(_ANSWER, {"the_chat": chat_id, "the_message": message_id, **marks})


def mark_delivered(session: Session, chat_id: str, message_id: str, at: datetime) -> None:
    session.execute(_DELIVERED, {"the_chat": chat_id, "the_message": message_id, "delivered": at})


def answer_to(session: Session, chat_id: str, message_id: str) -> list[str]:
    rows = session.scalars(
        select(_messages.c.text)
        .where(
            _messages.c.chat_id == chat_id,
            _messages.c.reply_to == message_id,
            _messages.c.from_bot.is_(True),  # people reply to messages too
        )
        .order_by(_messages.c.id)
    )
    return list(rows)


def text_of(session: Session, chat_id: str, message_id: str) -> str | None:
    return session.scalar(select(_messages.c.text).where(the_message(chat_id, message_id)))


def recent_messages(
    session: Session, chat_id: str, limit: int, since: datetime | None
) -> list[LoggedMessage]:
    if since is None:
        rows = session.execute(_RECENT, {"the_chat": chat_id, "limit": limit}).all()
    else:
        params = {"the_chat": chat_id, "limit": limit, "since": since}
        rows = session.execute(_RECENT_SINCE, params).all()
    return _oldest_first(rows)


def _oldest_first(rows: Sequence[Row[Any, Any, Any, Any, Any]]) -> list[LoggedMessage]:
    """`_RECENT`'s rows (newest first) as logged messages, oldest first."""
    return [
        LoggedMessage(row.sender_id, row.sender_name, row.text, row.from_bot, row.created_at)
        for row in reversed(rows)
    ]


def history_to(session: Session, chat_id: str, message_id: str, limit: int) -> list[LoggedMessage]:
    """The `limit` newest messages up to this logged one (itself last), oldest first."""
    params = {"the_chat": chat_id, "the_message": message_id, "limit": limit}
    return _oldest_first(session.execute(_RECENT_TO, params).all())


def page(session: Session, chat_id: str, before: int | None, limit: int) -> list[PagedMessage]:
    query = select(_messages).where(_messages.c.chat_id == chat_id)
    if before is not None:
        query = query.where(_messages.c.id < before)
    rows = session.execute(query.order_by(_messages.c.id.desc()).limit(limit)).all()
    return [
        PagedMessage(row.id, row.sender_id, row.sender_name, row.text, row.from_bot, row.created_at)
        for row in reversed(rows)
    ]


def prune(session: Session, chat_id: str, keep: int, before: datetime) -> int:
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
    drop_orphan_reactions(session, chat_id)
    return int(getattr(result, "rowcount", 0) or 0)


def drop_orphan_reactions(session: Session, chat_id: str) -> None:
    """The chat's reactions to messages no longer in its log (pruned, forgotten)."""
    logged = select(_messages.c.id).where(
        _messages.c.chat_id == chat_id, _messages.c.message_id == _reactions.c.message_id
    )
    session.execute(delete(_reactions).where(_reactions.c.chat_id == chat_id, ~logged.exists()))


def prune_expired(session: Session, before: datetime) -> int:
    result = session.execute(delete(_messages).where(_messages.c.created_at < before))
    # A reaction is never older than its message: one older than this is to a message
    # gone; a newer one may be too (a late reaction to an old message).
    logged = select(_messages.c.id).where(
        _messages.c.chat_id == _reactions.c.chat_id,
        _messages.c.message_id == _reactions.c.message_id,
    )
    session.execute(delete(_reactions).where((_reactions.c.created_at < before) | ~logged.exists()))
    return int(getattr(result, "rowcount", 0) or 0)


def react(session: Session, chat_id: str, reaction: Reaction) -> bool:
    """Record a reaction, or take it back; False when its message is not in the log (not
    kept, or gone): nothing to count it on."""
    emoji = reaction.emoji[:_EMOJI_CHARS]
    same: tuple[ColumnElement[bool], ...] = (
        _reactions.c.chat_id == chat_id,
        _reactions.c.message_id == reaction.message_id,
        _reactions.c.sender_id == reaction.sender_id,
        _reactions.c.emoji == emoji,
    )
    if not reaction.added:
        if reaction.reaction_id is not None:
            same = (
                _reactions.c.chat_id == chat_id,
                _reactions.c.reaction_id == reaction.reaction_id,
            )
        session.execute(delete(_reactions).where(*same))
        return True
    if (
        session.scalar(select(_messages.c.id).where(the_message(chat_id, reaction.message_id)))
        is None
    ):
        return False
    values: dict[str, Any] = {"chat_id": chat_id, "message_id": reaction.message_id}
    values |= {"sender_id": reaction.sender_id, "emoji": emoji, "created_at": reaction.at}
    values["reaction_id"] = reaction.reaction_id
    # Once per person and emoji: a platform's resend, or a second process, adds nothing.
    session.execute(_ADD_REACTION[dialect(session)], values)
    return True


def new_row(chat_id: str, entry: LogEntry, *, from_bot: bool, answered: bool) -> dict[str, Any]:
    return {
        "chat_id": chat_id,
        "message_id": entry.message_id,
        "sender_id": entry.sender_id,
        "sender_name": entry.sender_name,
        "text": entry.text,
        "from_bot": from_bot,
        "created_at": entry.at,
        "answered_at": entry.at if answered else None,
        "delivered_at": entry.at if answered else None,
        "reply_to": entry.reply_to,
    }


def count(session: Session, chat_id: str) -> int:
    return session.scalar(select(func.count()).where(_messages.c.chat_id == chat_id)) or 0
