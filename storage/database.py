"""Engine setup and a thread pool that keeps blocking database work off the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.util
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool, StaticPool

from groupmate.storage.errors import StorageConfigError, StorageUnavailableError
from groupmate.storage.group_commit import GroupCommit
from groupmate.storage.location import DEFAULT_URL

T = TypeVar("T")
log = logging.getLogger(__name__)
# Seconds to connect to PostgreSQL before the database counts as unavailable.
_CONNECT_SECONDS = 5
# Seconds a /healthz answer about the database is reused.
_PING_KEPT = 2.0

_WRITE_OPTION = "groupmate_write"


def normalize_url(url: str | URL) -> URL:
    """Parse a database URL; plain `postgresql://` means the psycopg 3 driver we ship."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StorageConfigError(
            "storage.url is not a database URL (e.g. sqlite:///data/groupmate.db)"
        ) from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StorageConfigError(
            f"storage.url uses {parsed.get_backend_name()!r}; use sqlite:/// or postgresql://"
        )
    # The driver is the `postgres` extra's: without it SQLAlchemy's import error would
    # reach the operator as a traceback, on every command.
    if parsed.drivername == "postgresql+psycopg" and importlib.util.find_spec("psycopg") is None:
        raise StorageConfigError(
            'storage.url: PostgreSQL\'s driver is not installed; pip install "groupmate[postgres]"'
        )
    return parsed


def _sqlite_engine(url: URL) -> Engine:
    memory = url.database in (None, "", ":memory:")
    if not memory:
        assert url.database is not None
        Path(url.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        connect_args={"check_same_thread": False, "timeout": 30},
        poolclass=StaticPool if memory else None,
    )

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event issue BEGIN itself, so writers can ask for IMMEDIATE.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        if not memory:
            cursor.execute("PRAGMA journal_mode=WAL")
            # Checkpoints run beside the writes (Database.checkpoint); this only bounds
            # the log (40 MB) should they fall behind.
            cursor.execute("PRAGMA wal_autocheckpoint=10000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Connection) -> None:
        # A deferred transaction that later writes can fail at once with SQLITE_BUSY;
        # IMMEDIATE takes the write lock up front and waits for it instead.
        immediate = connection.get_execution_options().get(_WRITE_OPTION, False)
        # Straight to the driver: a statement through SQLAlchemy costs more than it.
        driver = connection.connection.driver_connection
        assert driver is not None
        driver.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


class Database:
    """One engine, read and write sessions, and a small pool of database threads."""

    def __init__(self, url: str | URL = DEFAULT_URL, *, workers: int = 4) -> None:
        self.url = normalize_url(url)
        self.backend = self.url.get_backend_name()
        if self.backend == "sqlite":
            self.engine = _sqlite_engine(self.url)
            memory = self.url.database in (None, "", ":memory:")
            workers = 1 if memory else workers
        else:
            self.engine = create_engine(
                self.url,
                pool_size=workers,
                max_overflow=workers,
                pool_pre_ping=True,
                # A server gone (its container stopped) is reported in seconds, not
                # after the system's TCP timeout of minutes.
                connect_args={"connect_timeout": _CONNECT_SECONDS},
            )
        readers = self.engine
        if self.backend == "postgresql":
            # Each statement of a READ COMMITTED transaction sees its own snapshot anyway:
            # reads in autocommit see the same, without a BEGIN and a ROLLBACK round trip.
            readers = self.engine.execution_options(isolation_level="AUTOCOMMIT")
        self._readers = sessionmaker(readers, expire_on_commit=False)
        writer_engine = self.engine.execution_options(**{_WRITE_OPTION: True})
        self._writers = sessionmaker(writer_engine, expire_on_commit=False)
        # SQLite has one writer at a time; queueing them here beats busy-waiting on the file.
        self._write_lock = threading.Lock() if self.backend == "sqlite" else None
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="groupmate-db")
        self._ping_lock = asyncio.Lock()
        self._pinged: tuple[float, bool] | None = None  # when, and whether it answered
        self._ping_engine: Engine | None = None
        # Small writes of many messages share one transaction: see storage.group_commit.
        self.batches = GroupCommit(self)
        self._checkpointing = False

    @property
    def safe_url(self) -> str:
        """The URL with any password masked, for logs and messages."""
        return self.url.render_as_string(hide_password=True)

    @contextlib.contextmanager
    def write_session(self) -> Iterator[Session]:
        """A transaction that commits on success and rolls back on any error."""
        lock = self._write_lock or contextlib.nullcontext()
        with lock, _translate_errors(), self._writers.begin() as session:
            yield session

    @contextlib.contextmanager
    def read_session(self) -> Iterator[Session]:
        with _translate_errors(), self._readers() as session:
            yield session

    async def write(self, work: Callable[[Session], T]) -> T:
        """Run `work` in one write transaction on a database thread."""
        return await self._run(self._in_write, work)

    async def read(self, work: Callable[[Session], T]) -> T:
        return await self._run(self._in_read, work)

    def _in_write(self, work: Callable[[Session], T]) -> T:
        with self.write_session() as session:
            return work(session)

    def _in_read(self, work: Callable[[Session], T]) -> T:
        with self.read_session() as session:
            return work(session)

    async def _run(self, runner: Callable[[Callable[[Session], T]], T], work: Any) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, functools.partial(runner, work))

    async def reachable(self, within: float = 3.0) -> bool:
        """Whether the database answers now (/healthz, which anyone may ask, often). One
        ask at a time, its answer kept for a moment; on PostgreSQL over a connection of
        its own, outside the pool (a server gone must not leave the bot's own work
        waiting for connections), on SQLite on the database's own thread."""
        async with self._ping_lock:
            now = time.monotonic()
            if self._pinged is not None and now - self._pinged[0] < _PING_KEPT:
                return self._pinged[1]
            try:
                if self.backend == "sqlite":
                    ping = self.read(lambda session: session.execute(text("SELECT 1")))
                    await asyncio.wait_for(ping, within)
                else:
                    await asyncio.wait_for(asyncio.to_thread(self._ping_alone), within)
                answered = True
            except Exception:  # any failure means "not now": /healthz says so
                answered = False
            self._pinged = (time.monotonic(), answered)
            return answered

    def _ping_alone(self) -> None:
        if self._ping_engine is None:
            self._ping_engine = create_engine(
                self.url, poolclass=NullPool, connect_args={"connect_timeout": _CONNECT_SECONDS}
            )
        with self._ping_engine.connect() as connection:
            connection.exec_driver_sql("SELECT 1")

    def checkpoint_soon(self) -> None:
        """Copy SQLite's write-ahead log into the database file on a database thread,
        beside the writes: left to the commit that fills the log, the copy and its
        fsync stalled that commit (300 ms measured) and every write queued behind it."""
        if self.backend != "sqlite" or self._checkpointing:
            return
        self._checkpointing = True
        self._executor.submit(self._checkpoint)

    def _checkpoint(self) -> None:
        try:
            with self.engine.connect() as connection:
                driver = connection.connection.driver_connection
                assert driver is not None
                driver.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except Exception as exc:  # the next one tries again; autocheckpoint is the net
            log.warning("SQLite checkpoint failed: %s", type(exc).__name__)
        finally:
            self._checkpointing = False

    async def aclose(self) -> None:
        """Write what is queued, then close."""
        await self.batches.flush()
        await asyncio.to_thread(self.close)

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        self.engine.dispose()
        if self._ping_engine is not None:
            self._ping_engine.dispose()


@contextlib.contextmanager
def _translate_errors() -> Iterator[None]:
    try:
        yield
    except (OperationalError, DBAPIError) as exc:
        if isinstance(exc, OperationalError) or exc.connection_invalidated:
            # The driver's message may quote the URL; keep only the error class.
            raise StorageUnavailableError(
                f"the database is unavailable ({type(exc.orig).__name__})"
            ) from exc
        raise
