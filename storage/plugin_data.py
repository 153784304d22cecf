"""Plugins' own values: one JSON value per (plugin, chat, key), "" as the chat of a
plugin's global values. Reads and writes are `Session -> T` units; `PluginData` runs
them, the writes through the database's write queue (storage.group_commit), each call
one transaction."""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from groupmate.storage.database import Database
from groupmate.storage.errors import PluginValueError, StorageError
from groupmate.storage.models import PluginData as _Row

_data = cast(Table, _Row.__table__)
MAX_KEY = 200
MAX_VALUE_BYTES = 64 * 1024
MAX_KEYS_LISTED = 1000
# An async change cannot run under the row's lock (the lock is held on a database
# thread): it is retried while others change the value meanwhile, this many times.
MAX_UPDATE_TRIES = 50


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
    new = change(current)
    if inspect.isawaitable(new):
        close = getattr(new, "close", None)
        if callable(close):
            close()  # never awaited: no "coroutine was never awaited" warning
        raise TypeError("update's function returned an awaitable: declare it async def")
    new = check_value(new)
    session.execute(
        _data.update().where(_where(plugin, chat_id, key)).values(value=new, updated_at=now)
    )
    return new


def replace_value(
    session: Session,
    plugin: str,
    chat_id: str,
    key: str,
    seen: tuple[bool, Any],
    new: Any,
    now: datetime,
) -> bool:
    """Write `new` if the value is still what was `seen` (found, value); whether it was.
    The row is locked while it is compared; a key that was absent is written only if no
    one made it meanwhile (the insert that does nothing on a conflict)."""
    found, old = seen
    values = {"plugin": plugin, "chat_id": chat_id, "key": key}
    if not found:
        insert = _insert(session, {**values, "value": new, "updated_at": now})
        # RETURNING, not rowcount: psycopg's rowcount counted a row the conflict skipped.
        made = insert.on_conflict_do_nothing(index_elements=["plugin", "chat_id", "key"])
        return session.execute(made.returning(_data.c.key)).first() is not None
    current = session.execute(
        select(_data.c.value).where(_where(plugin, chat_id, key)).with_for_update()
    ).first()
    if current is None or current[0] != old:
        return False
    session.execute(
        _data.update().where(_where(plugin, chat_id, key)).values(value=new, updated_at=now)
    )
    return True


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
        """`change` runs on a database thread, under the row's lock."""
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

    async def update_async(
        self,
        plugin: str,
        chat_id: str,
        key: str,
        change: Callable[[Any], Awaitable[Any]],
        default: Any,
    ) -> Any:
        """`change` runs on the event loop, between a read and a compare-and-swap write;
        when the value changed meanwhile, again on the new value (see MAX_UPDATE_TRIES)."""
        check_key(key)
        check_value(default)
        for _ in range(MAX_UPDATE_TRIES):
            seen = await self.get(plugin, chat_id, key)
            new = check_value(await change(seen[1] if seen[0] else default))
            unit = functools.partial(
                replace_value,
                plugin=plugin,
                chat_id=chat_id,
                key=key,
                seen=seen,
                new=new,
                now=self._clock(),
            )
            if await self._database.batches.write(unit):
                return new
        raise StorageError(
            f"plugin {plugin}: {key!r} changed {MAX_UPDATE_TRIES} times while an update "
            "computed its new value; nothing was written"
        )
