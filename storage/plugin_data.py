"""Plugins' own values: one JSON value per (plugin, chat, key), "" as the chat of a
plugin's global values. Reads and writes are `Session -> T` units; `PluginData` runs
them, the writes through the database's write queue (storage.group_commit), each call
one transaction."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from groupmate.storage.database import Database
from groupmate.storage.errors import StorageError
from groupmate.storage.models import PluginData as _Row

_data = cast(Table, _Row.__table__)
MAX_KEY = 200
MAX_VALUE_BYTES = 64 * 1024
MAX_KEYS_LISTED = 1000


class PluginValueError(StorageError):
    """A key or value a plugin may not store: too long, empty, or not JSON."""


def check_key(key: str) -> str:
    if not isinstance(key, str) or not key or len(key) > MAX_KEY:
        raise PluginValueError(f"a plugin's key is 1 to {MAX_KEY} characters, not {key!r:.60}")
    return key


def check_value(value: Any) -> Any:
    """The value as it will be read back (JSON round trip), or PluginValueError."""
    try:
        encoded = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise PluginValueError(f"a plugin's value must be JSON: {exc}") from None
    if len(encoded.encode()) > MAX_VALUE_BYTES:
        raise PluginValueError(f"a plugin's value is at most {MAX_VALUE_BYTES} bytes as JSON")
    return json.loads(encoded)


def _where(plugin: str, chat_id: str, key: str) -> Any:
    return (_data.c.plugin == plugin) & (_data.c.chat_id == chat_id) & (_data.c.key == key)


def read_value(session: Session, plugin: str, chat_id: str, key: str) -> tuple[bool, Any]:
    """(found, value)."""
    row = session.execute(select(_data.c.value).where(_where(plugin, chat_id, key))).first()
    return (False, None) if row is None else (True, row[0])


def _insert(session: Session, values: dict[str, Any]) -> Any:
    """An INSERT of this backend that can say what to do when the key exists."""
    dialect = session.get_bind().dialect.name
    module = postgresql if dialect == "postgresql" else sqlite
    return module.insert(_data).values(**values)


def write_value(
    session: Session, plugin: str, chat_id: str, key: str, value: Any, now: datetime
) -> None:
    """One statement (an upsert): two processes writing a new key at once never fail
    on each other's row; the later write wins."""
    values = {"plugin": plugin, "chat_id": chat_id, "key": key, "value": value}
    statement = _insert(session, {**values, "updated_at": now})
    session.execute(
        statement.on_conflict_do_update(
            index_elements=["plugin", "chat_id", "key"],
            set_={"value": statement.excluded.value, "updated_at": now},
        )
    )


def delete_value(session: Session, plugin: str, chat_id: str, key: str) -> bool:
    result = session.execute(delete(_data).where(_where(plugin, chat_id, key)))
    return bool(getattr(result, "rowcount", 0))


def list_keys(session: Session, plugin: str, chat_id: str, prefix: str) -> list[str]:
    query = select(_data.c.key).where((_data.c.plugin == plugin) & (_data.c.chat_id == chat_id))
    if prefix:
        # No LIKE: a prefix with % or _ in it means itself.
        query = query.where(_data.c.key >= prefix).where(_data.c.key < prefix + "\U0010ffff")
    rows = session.execute(query.order_by(_data.c.key).limit(MAX_KEYS_LISTED)).all()
    return [row[0] for row in rows if row[0].startswith(prefix)]


def update_value(
    session: Session,
    plugin: str,
    chat_id: str,
    key: str,
    change: Callable[[Any], Any],
    default: Any,
    now: datetime,
) -> Any:
    """Read, change and write one value under the row's lock (SQLite: the write
    transaction's), so that two concurrent updates never lose one another. The row is
    made first (with the default) when there is none: a new key is locked as well."""
    values = {"plugin": plugin, "chat_id": chat_id, "key": key}
    first = _insert(session, {**values, "value": check_value(default), "updated_at": now})
    session.execute(first.on_conflict_do_nothing(index_elements=["plugin", "chat_id", "key"]))
    current = session.execute(
        select(_data.c.value).where(_where(plugin, chat_id, key)).with_for_update()
    ).scalar_one()
    new = check_value(change(current))
    session.execute(
        _data.update().where(_where(plugin, chat_id, key)).values(value=new, updated_at=now)
    )
    return new


def delete_chat(session: Session, chat_id: str) -> int:
    """Every plugin's values for one chat (the chat's data is being deleted)."""
    result = session.execute(delete(_data).where(_data.c.chat_id == chat_id))
    return int(getattr(result, "rowcount", 0) or 0)


class PluginData:
    """Runs the units above on one database; see the module's docstring."""

    def __init__(self, database: Database, clock: Callable[[], datetime]) -> None:
        self._database = database
        self._clock = clock

    async def get(self, plugin: str, chat_id: str, key: str) -> tuple[bool, Any]:
        # Read-your-writes: a queued write of this process is in the answer.
        await self._database.batches.flush()
        return await self._database.read(
            functools.partial(read_value, plugin=plugin, chat_id=chat_id, key=check_key(key))
        )

    async def set(self, plugin: str, chat_id: str, key: str, value: Any) -> None:
        unit = functools.partial(
            write_value,
            plugin=plugin,
            chat_id=chat_id,
            key=check_key(key),
            value=check_value(value),
            now=self._clock(),
        )
        await self._database.batches.write(unit)

    async def delete(self, plugin: str, chat_id: str, key: str) -> bool:
        unit = functools.partial(delete_value, plugin=plugin, chat_id=chat_id, key=check_key(key))
        return await self._database.batches.write(unit)

    async def keys(self, plugin: str, chat_id: str, prefix: str) -> list[str]:
        await self._database.batches.flush()
        return await self._database.read(
            functools.partial(list_keys, plugin=plugin, chat_id=chat_id, prefix=prefix)
        )

    async def update(
        self, plugin: str, chat_id: str, key: str, change: Callable[[Any], Any], default: Any
    ) -> Any:
        unit = functools.partial(
            update_value,
            plugin=plugin,
            chat_id=chat_id,
            key=check_key(key),
            change=change,
            default=default,
            now=self._clock(),
        )
        return await self._database.batches.write(unit)
