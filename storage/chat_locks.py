"""Per-chat locks across processes: several `groupmate serve` processes on one PostgreSQL
database handle the messages of one chat one at a time, as a single process does.

Each process keeps one extra connection for them and holds a PostgreSQL session-level
advisory lock per chat while it handles a message of that chat (the model's request
included). A process that finds the chat's lock taken asks again shortly after: a
blocking wait would stall every other chat's lock on the same connection. If the
connection dies, the server frees its locks: the messages handled then are answered,
but ordering against other processes is not guaranteed until it is back.

SQLite is one process's database (the documented deployment): its locks are no-ops.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from sqlalchemy.engine import URL

from groupmate.storage.errors import StorageUnavailableError

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger(__name__)

# Polling for a lock another process holds: starts short, backs off to this.
_FIRST_WAIT = 0.005
_LONGEST_WAIT = 0.05


def lock_key(chat_id: str) -> int:
    """The advisory lock's 64-bit key for a chat (a collision only serializes two chats)."""
    digest = hashlib.blake2b(b"groupmate-chat:" + chat_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class ChatLocks:
    """`async with locks.hold(chat_id):` handles one message of that chat at a time
    across every process on the database. One holder per chat in this process at a time
    (the router's own per-chat lock sees to that)."""

    def __init__(self, url: URL) -> None:
        self._enabled = url.get_backend_name() == "postgresql"
        self._conninfo = ""
        if self._enabled:
            # The driver PostgreSQL URLs need anyway (the `postgres` extra); only then.
            global psycopg
            import psycopg

            self._conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._connection: psycopg.AsyncConnection[tuple[object, ...]] | None = None
        self._connecting = asyncio.Lock()

    @property
    def enabled(self) -> bool:
        return self._enabled

    @contextlib.asynccontextmanager
    async def hold(
        self, chat_id: str, *, longest_wait: float = _LONGEST_WAIT
    ) -> AsyncIterator[None]:
        """Holds the lock named `chat_id` (any name: a chat, a lease) for the block,
        polling while another process has it, at most `longest_wait` seconds apart."""
        if not self._enabled:
            yield
            return
        key = lock_key(chat_id)
        connection = await self._acquire(key, longest_wait)
        try:
            yield
        finally:
            await self._release(connection, key)

    async def lost(self, every: float) -> None:
        """Returns when the connection that holds this process's locks fails (asked every
        `every` seconds): the server has freed them, so a lease held long must end."""
        while True:
            await asyncio.sleep(every)
            connection = self._connection
            if connection is None or connection.closed:
                return
            try:
                await connection.execute("SELECT 1")
            except psycopg.Error as exc:
                log.warning("the locks' connection failed (%s)", type(exc).__name__)
                await self._drop(connection)
                return

    async def _acquire(
        self, key: int, longest_wait: float
    ) -> psycopg.AsyncConnection[tuple[object, ...]]:
        wait = _FIRST_WAIT
        while True:
            connection = await self._connect()
            try:
                cursor = await connection.execute("SELECT pg_try_advisory_lock(%s)", (key,))
                row = await cursor.fetchone()
            except psycopg.Error as exc:
                await self._drop(connection)
                raise StorageUnavailableError(
                    f"the database is unavailable ({type(exc).__name__})"
                ) from exc
            if row is not None and row[0]:
                return connection
            await asyncio.sleep(wait)  # another process handles this chat now
            wait = min(wait * 2, longest_wait)

    async def _release(
        self, connection: psycopg.AsyncConnection[tuple[object, ...]], key: int
    ) -> None:
        if connection is not self._connection:
            return  # that connection died, and the server freed its locks with it
        try:
            await connection.execute("SELECT pg_advisory_unlock(%s)", (key,))
        except psycopg.Error as exc:
            # Not unlocked: dropping the connection frees every lock it held.
            log.warning("chat lock not released (%s); reconnecting", type(exc).__name__)
            await self._drop(connection)

    async def _connect(self) -> psycopg.AsyncConnection[tuple[object, ...]]:
        if self._connection is not None and not self._connection.closed:
            return self._connection
        async with self._connecting:
            if self._connection is None or self._connection.closed:
                try:
                    self._connection = await psycopg.AsyncConnection.connect(
                        self._conninfo, autocommit=True
                    )
                except psycopg.Error as exc:
                    raise StorageUnavailableError(
                        f"the database is unavailable ({type(exc).__name__})"
                    ) from exc
            return self._connection

    async def _drop(self, connection: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
        if self._connection is connection:
            self._connection = None
        with contextlib.suppress(psycopg.Error):
            await connection.close()

    async def aclose(self) -> None:
        if self._connection is not None:
            await self._drop(self._connection)
