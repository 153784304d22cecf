"""Copies of a SQLite database file: `groupmate backup`, safe while the bot writes to it,
and the copy `storage.migrate.upgrade` makes before it migrates a file
(`groupmate.db.bak-<revision>`). PostgreSQL has its own tools for this (pg_dump)."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from pathlib import Path

from groupmate.storage.database import Database
from groupmate.storage.errors import StorageError

log = logging.getLogger(__name__)
# How long a copy waits for a lock (a checkpoint, a migration's start), as the bot does.
_BUSY_SECONDS = 30
# Beside a database file `x.db`, SQLite keeps `x.db-wal`, `x.db-shm` or `x.db-journal`.
_SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")
# Copies and exports: their owner's alone.
_PRIVATE = 0o600


def sqlite_file(database: Database) -> Path | None:
    """The file of a SQLite database; None for PostgreSQL or an in-memory database."""
    if database.backend != "sqlite" or database.url.database in (None, "", ":memory:"):
        return None
    assert database.url.database is not None
    return Path(database.url.database).expanduser()


def partial_file(target: Path) -> Path:
    """Where a copy or an export of `target` is written until complete, then renamed."""
    return target.with_name(f"{target.name}.partial")


def refuse_database_files(database_file: Path, target: Path, what: str) -> None:
    """Refuse to write `what` (a copy, an export) to `target` when it, or the file it is
    written to first, is the SQLite database `database_file` or one of the files SQLite
    keeps beside it (its write-ahead log, shared memory, rollback journal): replacing
    it would lose the database."""
    database = database_file.resolve()
    own = {database: "the database itself"} | {
        database.with_name(f"{database.name}{suffix}"): f"the database's {suffix} file"
        for suffix in _SQLITE_SIDE_FILES
    }
    for path in (target, partial_file(target)):
        which = own.get(path.resolve())
        if which is None and path.exists() and database.exists() and path.samefile(database):
            which = "the database itself"  # another name (a hard link) for the same file
        if which is not None:
            raise StorageError(
                f"{path} is {which} ({database}): write {what} to another file; nothing was changed"
            )


def create_private(path: Path) -> int:
    """Create the file `path` (it must not be there) for writing, readable and writable by
    its owner alone (0600, whatever the umask): copies and exports hold every message and
    the adapters' logins (adapter_state: a Matrix access token). Its descriptor."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _PRIVATE)
    try:
        os.fchmod(descriptor, _PRIVATE)  # a umask takes bits away (0o277 would leave 0400)
    except OSError:
        os.close(descriptor)
        raise
    return descriptor


def copy_sqlite(source: Path, target: Path) -> None:
    """Copy the database `source` to `target` (replaced if it is there) with SQLite's
    online backup API: the copy is the database as one transaction saw it, whatever
    other connections write meanwhile, and it waits for no writer nor holds one up.

    All pages in one step: it reads in a single read transaction, which in WAL mode lets
    writers go on. A copy in steps would start over at every write another connection
    commits, and under a busy bot might never end.

    The copy is its owner's alone (0600): it holds what the database does.
    """
    if not source.is_file():
        raise StorageError(f"there is no database file {source}")
    refuse_database_files(source, target, "the copy")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Under another name until complete: an interrupted copy never looks like a backup.
    partial = partial_file(target)
    partial.unlink(missing_ok=True)
    # SQLite keeps the mode of a file that is there (and gives its journal the same).
    os.close(create_private(partial))
    # mode=rw: never create the file (plain connect would make an empty database).
    source_uri = f"{source.resolve().as_uri()}?mode=rw"
    try:
        with (
            contextlib.closing(
                sqlite3.connect(source_uri, uri=True, timeout=_BUSY_SECONDS)
            ) as reader,
            contextlib.closing(sqlite3.connect(partial)) as writer,
        ):
            reader.backup(writer)
        os.replace(partial, target)
    except sqlite3.Error as exc:
        raise StorageError(f"could not copy {source}: {exc}") from exc
    finally:
        partial.unlink(missing_ok=True)


def copy_before_upgrade(database: Database, revision: str) -> Path | None:
    """Copy a SQLite file about to be migrated from `revision` next to itself, as
    `<name>.bak-<revision>`; None when there is no file (PostgreSQL, in memory).

    A copy of the same revision there already is replaced: its database is still at that
    revision (the upgrade that made it did not happen, or it was restored), and the new
    copy has everything written since.
    """
    path = sqlite_file(database)
    if path is None:
        return None
    target = path.with_name(f"{path.name}.bak-{revision}")
    copy_sqlite(path, target)
    log.info("copied %s to %s before upgrading its schema from %s", path, target, revision)
    return target
