"""Copies of a SQLite database file: `groupmate backup`, safe while the bot writes to it,
and the copy `storage.migrate.upgrade` makes before it migrates a file
(`groupmate.db.bak-<revision>`). PostgreSQL has its own tools for this (pg_dump)."""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
from pathlib import Path

from storage.database import Database
from storage.errors import StorageError

log = logging.getLogger(__name__)
# How long a copy waits for a lock (a checkpoint, a migration's start), as the bot does.
_BUSY_SECONDS = 30


def sqlite_file(database: Database) -> Path | None:
    """The file of a SQLite database; None for PostgreSQL or an in-memory database."""
    if database.backend != "sqlite" or database.url.database in (None, "", ":memory:"):
        return None
    assert database.url.database is not None
    return Path(database.url.database).expanduser()


def copy_sqlite(source: Path, target: Path) -> None:
    """Copy the database `source` to `target` (replaced if it is there) with SQLite's
    online backup API: the copy is the database as one transaction saw it, whatever
    other connections write meanwhile, and it waits for no writer nor holds one up.

    All pages in one step: it reads in a single read transaction, which in WAL mode lets
    writers go on. A copy in steps would start over at every write another connection
    commits, and under a busy bot might never end.
    """
    if not source.is_file():
        raise StorageError(f"there is no database file {source}")
    if target.exists() and target.resolve() == source.resolve():
        raise StorageError(f"{target} is the database itself: copy it to another file")
    target.parent.mkdir(parents=True, exist_ok=True)
    # Under another name until complete: an interrupted copy never looks like a backup.
    partial = target.with_name(f"{target.name}.partial")
    partial.unlink(missing_ok=True)
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
