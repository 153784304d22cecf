"""Chat rows: each chat's type, zone and settings (the cached reads and the tools'
changes are `storage.chat_settings`'s). Every function runs inside the caller's
transaction."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.orm import Session

from groupmate.storage.dialect import insert_ignoring_conflicts
from groupmate.storage.models import Chat
from groupmate.storage.vocabulary import ChatType, stored_chat_type

_chats = cast(Table, Chat.__table__)


def ensure_chat(session: Session, chat_id: str, chat_type: ChatType, now: datetime) -> None:
    values = {
        "chat_id": chat_id,
        "chat_type": chat_type,
        "settings": {},
        "last_short_id": 0,
        "created_at": now,
        "updated_at": now,
    }
    session.execute(insert_ignoring_conflicts(session, _chats).values(**values))


def chat_settings(session: Session, chat_id: str) -> dict[str, Any]:
    settings = session.scalar(select(_chats.c.settings).where(_chats.c.chat_id == chat_id))
    return dict(settings or {})


def update_chat_settings(
    session: Session,
    chat_id: str,
    chat_type: ChatType,
    values: SettingsChange,
    now: datetime,
) -> dict[str, Any]:
    """Merge `values` into the chat's settings (a None value removes the key). Given as
    a function, they are worked out from the current settings under the row's lock: two
    writers never lose each other's change."""
    ensure_chat(session, chat_id, chat_type, now)
    current = session.scalar(
        select(_chats.c.settings).where(_chats.c.chat_id == chat_id).with_for_update()
    )
    if callable(values):
        values = values(dict(current or {}))
    merged = {**(current or {}), **values}
    merged = {key: value for key, value in merged.items() if value is not None}
    session.execute(
        update(_chats).where(_chats.c.chat_id == chat_id).values(settings=merged, updated_at=now)
    )
    return merged


# New values for a chat's settings, or how to work them out from the current ones.
SettingsChange = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]]


def chat_timezone(session: Session, chat_id: str) -> str | None:
    return session.scalar(select(_chats.c.timezone).where(_chats.c.chat_id == chat_id))


@dataclass(frozen=True, slots=True)
class ChatRow:
    """What a chat stored of its own: its zone (None: the bot's default) and settings."""

    timezone: str | None
    settings: Mapping[str, Any]
    chat_type: ChatType | None = None  # None: the chat stored nothing yet


# Read for every message: built once, so only the chat id is bound per call.
_CHAT_ROW = select(_chats.c.timezone, _chats.c.settings, _chats.c.chat_type).where(
    _chats.c.chat_id == bindparam("chat_id")
)


def chat_row(session: Session, chat_id: str) -> ChatRow:
    row = session.execute(_CHAT_ROW, {"chat_id": chat_id}).first()
    if row is None:
        return ChatRow(None, {})
    return ChatRow(
        row.timezone, MappingProxyType(dict(row.settings or {})), stored_chat_type(row.chat_type)
    )
