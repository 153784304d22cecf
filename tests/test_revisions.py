"""The schema's revisions read without Alembic (storage.revisions, for `groupmate
check`) are Alembic's: the scripts' head and revisions, and a database's revision on
either backend, before it is migrated, migrated, and migrated by a newer groupmate."""

from __future__ import annotations

from pathlib import Path

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text

from groupmate.storage import Database, upgrade
from groupmate.storage.location import shown_url
from groupmate.storage.revisions import (
    head_revision,
    is_known,
    migrations,
    revision_at,
    schema_revision,
)

SCRIPTS = Path(__file__).resolve().parent.parent / "storage" / "migrations"


def _alembic() -> ScriptDirectory:
    config = Config()
    config.set_main_option("script_location", str(SCRIPTS))
    return ScriptDirectory.from_config(config)


def test_the_scripts_revisions_are_alembics() -> None:
    scripts = _alembic()
    assert head_revision() == scripts.get_current_head()
    assert migrations() == {s.revision: s.down_revision for s in scripts.walk_revisions()}
    assert all(is_known(s.revision) for s in scripts.walk_revisions())
    assert is_known(None) and not is_known("0099")


def _both(database: Database) -> tuple[str | None, str | None]:
    with database.read_session() as session:
        alembic = MigrationContext.configure(session.connection()).get_current_revision()
        return schema_revision(session), alembic


def test_a_databases_revision_is_alembics(database_url: str, tmp_path: Path) -> None:
    new = Database(f"sqlite:///{tmp_path / 'new.db'}")
    assert _both(new) == (None, None)  # no alembic_version table
    upgrade(new)
    assert _both(new) == (head_revision(), head_revision())
    new.close()
    database = Database(database_url)
    assert _both(database) == (head_revision(), head_revision())
    with database.write_session() as session:
        session.execute(text("UPDATE alembic_version SET version_num = '0099'"))
    assert _both(database) == ("0099", "0099")
    with database.write_session() as session:
        session.execute(text("DELETE FROM alembic_version"))
    assert _both(database) == (None, None)
    database.close()


def test_check_reads_a_revision_and_shows_a_url_as_the_store_does(
    database_url: str, tmp_path: Path
) -> None:
    """`check` reads without the store (storage.revisions.revision_at): a SQLite file
    with sqlite3, creating none where there is none; it says what the store says."""
    missing = tmp_path / "not" / "yet.db"
    assert revision_at(f"sqlite:///{missing}") is None
    assert not missing.parent.exists()
    for url in (database_url, f"sqlite:///{tmp_path / 'wal.db'}"):
        database = Database(url)
        upgrade(database)
        assert revision_at(url) == head_revision()
        with database.write_session() as session:
            session.execute(text("UPDATE alembic_version SET version_num = '0099'"))
        assert revision_at(url) == "0099"
        with database.write_session() as session:
            session.execute(text("DELETE FROM alembic_version"))
        assert revision_at(url) is None
        assert shown_url(url) == database.safe_url
        database.close()
    assert revision_at("sqlite://") is None and shown_url("sqlite://") == "sqlite://"
    hidden = "postgresql://bot:hunter2@127.0.0.1:1/x"
    assert shown_url(hidden) == Database(hidden).safe_url and "hunter2" not in shown_url(hidden)
