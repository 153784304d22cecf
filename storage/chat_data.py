"""Deleting one chat's data: its reminders (and their deliveries), logged messages and
their reactions, model usage and turns, audit entries, calendar links, settings, and
every plugin's values for it. One transaction: all of it goes, or none."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, delete, select
from sqlalchemy.orm import Session

from groupmate.storage import plugin_data
from groupmate.storage.models import (
    Acknowledgement,
    AuditRow,
    CalendarFeed,
    Chat,
    ChatMessage,
    Delivery,
    LLMTurn,
    LLMUsage,
    MessageReaction,
    PressRecord,
    Reminder,
)


@dataclass(frozen=True, slots=True)
class ChatDataDeleted:
    """What went: row counts, and the reminders whose timers are to be cleared."""

    reminder_ids: tuple[str, ...]
    messages: int
    plugin_values: int


def _table(model: type[object]) -> Table:
    return cast(Table, model.__table__)  # type: ignore[attr-defined]


def delete_chat(session: Session, chat_id: str) -> ChatDataDeleted:
    if not chat_id:  # "" is no chat: it holds the plugins' global values
        raise ValueError("deleting a chat's data needs the chat's id")
    reminders = _table(Reminder)
    ids = tuple(
        row[0]
        for row in session.execute(select(reminders.c.id).where(reminders.c.chat_id == chat_id))
    )
    if ids:
        for of_reminder in (Delivery, Acknowledgement):
            rows = _table(of_reminder)
            session.execute(delete(rows).where(rows.c.reminder_id.in_(ids)))
        # Snoozes point at the reminder they put off: both are this chat's.
        session.execute(delete(reminders).where(reminders.c.chat_id == chat_id))
    messages = _table(ChatMessage)
    gone = session.execute(delete(messages).where(messages.c.chat_id == chat_id))
    for model in (MessageReaction, PressRecord, LLMUsage, LLMTurn, AuditRow, CalendarFeed, Chat):
        table = _table(model)
        session.execute(delete(table).where(table.c.chat_id == chat_id))
    values = plugin_data.delete_chat(session, chat_id)
    return ChatDataDeleted(ids, int(getattr(gone, "rowcount", 0) or 0), values)
