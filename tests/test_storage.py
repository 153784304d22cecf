"""Schema migrations, backend settings and an unreachable database."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from groupmate.storage import (
    Database,
    ReminderService,
    StorageConfigError,
    current_revision,
    head_revision,
    normalize_url,
    upgrade,
)
from groupmate.storage.models import Base
from groupmate.storage.search_rows import INDEX_OBJECTS
from tests.conftest import FakeClock, chat_ctx
from tests.postgres import create_database, drop_database
from tests.test_reminder_tools import call

TABLES = {
    "alembic_version",
    "chats",
    "reminders",
    "deliveries",
    "messages",
    "adapter_state",
    "plugin_data",
    "acknowledgements",
    "presses",
}


def test_upgrade_creates_the_schema_once(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'nested' / 'dir' / 'bot.db'}")
    assert current_revision(database) is None
    upgrade(database)
    upgrade(database)  # a second run is a no-op
    assert current_revision(database) == head_revision() == "0021"
    assert set(inspect(database.engine).get_table_names()) >= TABLES
    with database.read_session() as session:
        assert session.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert session.execute(text("PRAGMA foreign_keys")).scalar() == 1
    database.close()


def test_concurrent_upgrades_on_postgresql_serialize(pg_server: str) -> None:
    url = create_database(pg_server)
    errors: list[BaseException] = []

    def migrate() -> None:
        database = Database(url)
        try:
            upgrade(database)
        except BaseException as exc:
            errors.append(exc)
        finally:
            database.close()

    threads = [threading.Thread(target=migrate) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    database = Database(url)
    assert current_revision(database) == "0021"
    assert set(inspect(database.engine).get_table_names()) >= TABLES
    database.close()
    drop_database(pg_server, url)


def test_postgresql_url_without_driver_uses_psycopg() -> None:
    assert normalize_url("postgresql://u@h/db").drivername == "postgresql+psycopg"
    with pytest.raises(StorageConfigError, match="use sqlite:/// or postgresql://"):
        normalize_url("mysql://u:p@h/db")
    with pytest.raises(StorageConfigError) as info:
        normalize_url("not a url with s3cret")
    assert "s3cret" not in str(info.value)


def test_safe_url_hides_the_password() -> None:
    database = Database("postgresql://bot:s3cret@127.0.0.1:1/groupmate")
    assert "s3cret" not in database.safe_url
    database.close()


async def test_unreachable_database_gets_a_clear_reply_and_no_secret_in_logs(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    database = Database("postgresql://bot:s3cret@127.0.0.1:1/groupmate")
    service = ReminderService(database, default_timezone="Europe/Berlin", clock=clock)
    ctx = chat_ctx(service, clock)
    result = await call("reminder_set", ctx, type="daily", time="09:00", content="x")
    assert result.reply == (
        "I can't reach the reminder database right now, so nothing was changed. "
        "Please try again in a moment."
    )
    listed = await call("reminder_list", ctx)
    assert listed.reply == result.reply
    assert "s3cret" not in caplog.text
    database.close()


def test_migrations_build_exactly_the_models_schema(database_url: str) -> None:
    """A column added to the models without a migration (or the reverse) fails here."""
    database = Database(database_url)
    upgrade(database)
    try:
        with database.engine.connect() as connection:
            context = MigrationContext.configure(connection)
            diff = compare_metadata(context, Base.metadata)
    finally:
        database.close()
    # The search index is the migration's alone (see storage.search_rows.INDEX_OBJECTS).
    assert [d for d in diff if not str(d[1].name).startswith(INDEX_OBJECTS)] == []
