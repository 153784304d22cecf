"""The schema's revisions without Alembic's machinery (a tenth of a second of imports,
for `groupmate check` to say two names): which revisions this code has, read from its
migration scripts' `revision =` and `down_revision =` lines, and which one a database is
at, read from Alembic's own `alembic_version` table as Alembic reads it. migrate.py
migrates with Alembic; tests/test_revisions.py holds these to Alembic's answers."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from sqlalchemy import inspect, text
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
    connection = session.connection()
    if not inspect(connection).has_table(VERSION_TABLE):
        return None
    rows = connection.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    if len(rows) > 1:
        raise RuntimeError(f"{VERSION_TABLE} names more than one revision: {sorted(rows)}")
    return rows[0] if rows else None


def current_revision(database: Database) -> str | None:
    with database.read_session() as session:
        return schema_revision(session)
