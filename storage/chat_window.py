"""A window of one chat's history for digests and catch-ups: its messages with their
platform ids and replies, the reminders set and fired in it, and when someone last
spoke. `Session -> T` units; `function_calls.handlers.digest` runs them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, cast

from sqlalchemy import Row, Table, func, select
from sqlalchemy.orm import Session

from groupmate.storage.models import (
    DELIVERED,
    REMINDER_CANCELLED,
    ChatMessage,
    Delivery,
    MessageReaction,
    Reminder,
)

__all__ = [
    "ReminderEvent",
    "ReminderEventKind",
    "WindowMessage",
    "last_spoke",
    "reminder_events",
    "theirs",
    "window_messages",
]

_messages = cast(Table, ChatMessage.__table__)
_reminders = cast(Table, Reminder.__table__)
_deliveries = cast(Table, Delivery.__table__)
_reactions = cast(Table, MessageReaction.__table__)
# Message ids per IN list: well under SQLite's and PostgreSQL's limits on parameters.
_IDS_PER_QUERY = 500

ReminderEventKind = Literal["set", "fired"]


@dataclass(frozen=True, slots=True)
class WindowMessage:
    """A logged message as a digest reads it: `reply_to` is the platform id of the
    message it answers (None: not a reply, or a platform that does not say)."""

    sender_id: str
    sender_name: str
    text: str
    at: datetime
    from_bot: bool = False
    message_id: str | None = None
    reply_to: str | None = None
    # People's reactions to it: (emoji, how many), most first.
    reactions: tuple[tuple[str, int], ...] = ()

    @property
    def reacted(self) -> int:
        return sum(count for _, count in self.reactions)


@dataclass(frozen=True, slots=True)
class ReminderEvent:
    """A reminder set, or one of its occurrences sent, in a window. `for_ids` are the
    people its message mentions (its creator unless it names others); `everyone`: the
    whole chat."""

    kind: ReminderEventKind
    at: datetime
    short_id: int
    content: str
    by_id: str
    by_name: str
    for_ids: tuple[str, ...] = ()
    for_names: tuple[str, ...] = ()
    everyone: bool = False
    late: bool = False
    # Cancelled since (a "set" event): a digest must not pass it off as still on.
    cancelled: bool = False

    def concerns(self, user_id: str) -> bool:
        return self.everyone or user_id in self.for_ids


def window_messages(
    session: Session, chat_id: str, since: datetime, until: datetime, limit: int
) -> list[WindowMessage]:
    """The newest `limit` messages with since <= time < until, oldest first, with their
    reactions."""
    rows = session.execute(
        select(
            _messages.c.sender_id,
            _messages.c.sender_name,
            _messages.c.text,
            _messages.c.created_at,
            _messages.c.from_bot,
            _messages.c.message_id,
            _messages.c.reply_to,
        )
        .where(
            _messages.c.chat_id == chat_id,
            _messages.c.created_at >= since,
            _messages.c.created_at < until,
        )
        .order_by(_messages.c.id.desc())
        .limit(limit)
    ).all()
    reactions = _reactions_to(session, chat_id, [row.message_id for row in rows])
    return [
        WindowMessage(
            row.sender_id,
            row.sender_name,
            row.text,
            row.created_at,
            bool(row.from_bot),
            row.message_id,
            row.reply_to,
            tuple(reactions.get(row.message_id, ())),
        )
        for row in reversed(rows)
    ]


def _reactions_to(
    session: Session, chat_id: str, message_ids: list[str | None]
) -> dict[str, list[tuple[str, int]]]:
    """Per message id: its reactions' emoji and counts, most first (then by emoji)."""
    wanted = sorted({m for m in message_ids if m is not None})
    found: dict[str, list[tuple[str, int]]] = {}
    r = _reactions.c
    for start in range(0, len(wanted), _IDS_PER_QUERY):
        some = wanted[start : start + _IDS_PER_QUERY]
        rows = session.execute(
            select(r.message_id, r.emoji, func.count())
            .where(r.chat_id == chat_id, r.message_id.in_(some))
            .group_by(r.message_id, r.emoji)
            .order_by(r.message_id, func.count().desc(), r.emoji)
        ).all()
        for message_id, emoji, count in rows:
            found.setdefault(message_id, []).append((emoji, int(count)))
    return found


def last_spoke(session: Session, chat_id: str, sender_id: str, limit: int) -> list[datetime]:
    """When `sender_id` last wrote in this chat: their newest `limit` messages' times,
    newest first (the caller skips the request it is answering)."""
    found = session.scalars(
        select(_messages.c.created_at)
        .where(
            _messages.c.chat_id == chat_id,
            _messages.c.sender_id == sender_id,
            _messages.c.from_bot.is_(False),
        )
        .order_by(_messages.c.id.desc())
        .limit(limit)
    )
    return list(found)


def theirs(session: Session, chat_id: str, sender_id: str, message_ids: set[str]) -> set[str]:
    """Which of these platform message ids are `sender_id`'s own messages in this chat
    (a reply to them, from inside a window, may answer a message from before it)."""
    if not message_ids:
        return set()
    found = session.scalars(
        select(_messages.c.message_id).where(
            _messages.c.chat_id == chat_id,
            _messages.c.sender_id == sender_id,
            _messages.c.message_id.in_(sorted(message_ids)),
        )
    )
    return {str(message_id) for message_id in found}


def reminder_events(
    session: Session, chat_id: str, since: datetime, until: datetime, limit: int
) -> list[ReminderEvent]:
    """Reminders of this chat created, and occurrences sent, with since <= time <
    until, oldest first; at most `limit` of each (the newest)."""
    created = session.execute(
        select(_reminders)
        .where(
            _reminders.c.chat_id == chat_id,
            _reminders.c.created_at >= since,
            _reminders.c.created_at < until,
            # A snooze is the same reminder put off, not a new one set.
            _reminders.c.snooze_of.is_(None),
        )
        .order_by(_reminders.c.created_at.desc())
        .limit(limit)
    ).all()
    sent = session.execute(
        select(_reminders, _deliveries.c.finished_at, _deliveries.c.late)
        .join(_deliveries, _deliveries.c.reminder_id == _reminders.c.id)
        .where(
            _reminders.c.chat_id == chat_id,
            _deliveries.c.outcome.in_(DELIVERED),
            _deliveries.c.finished_at >= since,
            _deliveries.c.finished_at < until,
        )
        .order_by(_deliveries.c.finished_at.desc())
        .limit(limit)
    ).all()
    events = [_event("set", row, row.created_at) for row in created]
    events += [_event("fired", row, row.finished_at, late=bool(row.late)) for row in sent]
    return sorted(events, key=lambda event: (event.at, event.kind == "fired"))


def _event(
    kind: ReminderEventKind, row: Row[Any], at: datetime, *, late: bool = False
) -> ReminderEvent:
    named = [m for m in row.mentions or () if isinstance(m, dict)]
    ids = tuple(str(m.get("user_id", "")) for m in named)
    names = tuple(str(m.get("name", "")) for m in named)
    creator = str(row.created_by)
    by_name = str(row.created_by_name or creator)
    if row.mention_creator or not named:
        ids, names = (creator, *ids), (by_name, *names)
    return ReminderEvent(
        kind=kind,
        at=at,
        short_id=int(row.short_id),
        content=str(row.content),
        by_id=creator,
        by_name=by_name,
        for_ids=ids,
        for_names=names,
        everyone=bool(row.everyone),
        late=late,
        cancelled=row.status == REMINDER_CANCELLED,
    )
