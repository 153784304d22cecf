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
from groupmate.storage.revisions import head_revision, is_known, migrations, schema_revision

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
