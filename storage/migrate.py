"""Alembic migrations, run at startup and by `groupmate db upgrade`."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from storage.database import Database

_SCRIPTS = Path(__file__).parent / "migrations"
# Any fixed number; it names the lock that keeps two processes from migrating at once.
_MIGRATION_LOCK_KEY = 0x67726F7570


def _config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(_SCRIPTS))
    return config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_config()).get_current_head()


def current_revision(database: Database) -> str | None:
    with database.read_session() as session:
        return MigrationContext.configure(session.connection()).get_current_revision()


def upgrade(database: Database, revision: str = "head") -> None:
    """Bring the schema to `revision` in one transaction, serialized across processes."""
    config = _config()
    with database.write_session() as session:
        connection = session.connection()
        if database.backend == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK_KEY})")
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
