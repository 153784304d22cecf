"""The schema's revisions without Alembic's machinery (a tenth of a second of imports,
for `groupmate check` to say two names): which revisions this code has, read from its
migration scripts' `revision =` and `down_revision =` lines, and which one a database is
at, read from Alembic's own `alembic_version` table as Alembic reads it. migrate.py
migrates with Alembic; tests/test_revisions.py holds these to Alembic's answers."""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from groupmate.storage.errors import StorageUnavailableError
from groupmate.storage.location import plain_sqlite

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from groupmate.storage.database import Database

VERSIONS = Path(__file__).parent / "migrations" / "versions"
VERSION_TABLE = "alembic_version"  # Alembic's default, which env.py keeps
# `revision = "0016"`, `down_revision = "0015"` (None for the first), as Alembic writes them.
_ASSIGNED = re.compile(
    r"""^(revision|down_revision)\s*(?::[^=\n]+)?=\s*(?:["']([^"'\n]+)["']|None)\s*$""",
    re.MULTILINE,
)


@functools.cache
def migrations() -> dict[str, str | None]:
    """Each migration script's revision, and the revision it follows (None: the first)."""
    chain: dict[str, str | None] = {}
    for script in VERSIONS.glob("*.py"):
        assigned = dict(_ASSIGNED.findall(script.read_text(encoding="utf-8")))
        if assigned.get("revision"):
            chain[assigned["revision"]] = assigned.get("down_revision") or None
    return chain


def head_revision() -> str | None:
    """The revision no migration follows: the schema this code makes."""
    chain = migrations()
    heads = chain.keys() - set(chain.values())
    if len(heads) > 1:
        raise RuntimeError(f"the migrations have more than one head: {sorted(heads)}")
    return next(iter(heads), None)


def is_known(revision: str | None) -> bool:
    """Whether this code has the migration `revision` (None: a database never migrated)."""
    return revision is None or revision in migrations()


def schema_revision(session: Session) -> str | None:
    """The database's revision: None without Alembic's table or a row in it."""
    from sqlalchemy import inspect, text  # with the store open, SQLAlchemy is in already

    connection = session.connection()
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    return _only(rows)


def _only(rows: Sequence[str]) -> str | None:
    if len(rows) > 1:
        raise RuntimeError(f"{VERSION_TABLE} names more than one revision: {sorted(rows)}")
    return rows[0] if rows else None


def current_revision(database: Database) -> str | None:
    with database.read_session() as session:
        return schema_revision(session)


def revision_at(url: str) -> str | None:
    """The revision of the database at `url`, read without opening the store (`check`):
    a plain SQLite file with sqlite3, as pysqlite opens it, creating nothing where there
    is no database yet (which has no revision); any other through the store's Database."""
    name = plain_sqlite(url)
    if name is None:
        from groupmate.storage.database import Database  # SQLAlchemy: any other URL

        database = Database(url)
        try:
            return current_revision(database)
        finally:
            database.close()
    path = Path(os.path.abspath(name))
    if name in ("", ":memory:") or not path.exists():
        return None
    try:
        # mode=rw: never creates the file; the last connection closed tidies WAL's files.
        opened = sqlite3.connect(f"{path.as_uri()}?mode=rw", uri=True)
        with contextlib.closing(opened) as connection:
            found = connection.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (VERSION_TABLE,)
            ).fetchone()
            if found is None:
                return None
            rows = connection.execute(f"SELECT version_num FROM {VERSION_TABLE}").fetchall()
    except sqlite3.Error as exc:  # as the store says it (database._translate_errors)
        raise StorageUnavailableError(
            f"the database is unavailable ({type(exc).__name__})"
        ) from exc
    return _only([row[0] for row in rows])
