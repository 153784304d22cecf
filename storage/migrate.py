"""Alembic migrations, run at startup and by `groupmate db upgrade`.

A database a newer groupmate has migrated (its revision is none of the scripts here) is
refused as it is: this code would misread its tables, and its migrations can't go back.
A SQLite file is copied before it is migrated (storage.backup.copy_before_upgrade).
"""

from __future__ import annotations

import functools
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy.orm import Session

from groupmate.storage.backup import copy_before_upgrade
from groupmate.storage.database import Database
from groupmate.storage.errors import NewerDatabaseError
from groupmate.storage.revisions import head_revision, is_known, schema_revision

_SCRIPTS = Path(__file__).parent / "migrations"
# Any fixed number; it names the lock that keeps two processes from migrating at once.
_MIGRATION_LOCK_KEY = 0x67726F7570


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    return config


@functools.cache
def _scripts() -> ScriptDirectory:
    return ScriptDirectory.from_config(_config())


def locked_revision(session: Session) -> str | None:
    """The schema's revision, read under the migration lock (the write transaction's
    on SQLite, an advisory lock on PostgreSQL), held until the transaction ends;
    NewerDatabaseError for a revision this code does not know."""
    if session.get_bind().dialect.name == "postgresql":
        session.connection().exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK_KEY})")
    revision = schema_revision(session)
    if not is_known(revision):
        assert revision is not None
        raise NewerDatabaseError(revision, head_revision())
    return revision


def migrate(session: Session, revision: str = "head") -> None:
    """Bring the schema to `revision` inside the session's transaction (call
    `locked_revision` first)."""
    config = _config()
    config.attributes["connection"] = session.connection()
    command.upgrade(config, revision)


def upgrade(database: Database, revision: str = "head") -> Path | None:
    """Bring the schema to `revision` in one transaction, serialized across processes.

    A SQLite file that has a schema is copied first, to `<file>.bak-<its revision>`:
    going back to the version that wrote it needs the file as it was. Returns that
    copy, or None (nothing to migrate, no file, or a database with no schema yet)."""
    target = _scripts().get_revision(revision)
    with database.write_session() as session:
        before = locked_revision(session)
        copy = None
        if before is not None and target is not None and before != target.revision:
            # Under the write lock: no write of another process falls between the copy
            # and the migration.
            copy = copy_before_upgrade(database, before)
        migrate(session, revision)
    return copy
