"""Upgrades and backups, in real processes: `groupmate serve` copies a SQLite file
before it migrates it and refuses a database a newer groupmate migrated; `groupmate
backup` copies a database the bot is writing to, consistently."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import yaml
from sqlalchemy import inspect, text

from groupmate.storage import Database, NewerDatabaseError, current_revision, head_revision, upgrade
from groupmate.testing.bot import TestBot
from groupmate.testing.model import ScriptedModel
from tests.processes import serve

ROOT = Path(__file__).resolve().parent.parent
GROUPMATE = str(Path(sys.executable).with_name("groupmate"))
OLD = "0013"  # the revision before head: a database the previous groupmate left
NEWER = "0099"  # a revision only a future groupmate knows
# A SQLite file's header keeps counters (of changes, bytes 24-27 and again at 92-95, and of
# schema changes, 40-43) that the backup API sets in a copy as for a file of its own (so
# that connections to the copy read it afresh). Every other byte, every page, is the
# original's.
HEADER_COUNTERS = (slice(24, 28), slice(40, 44), slice(92, 96))


def groupmate(*args: str, config: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")}
    return subprocess.run(
        [GROUPMATE, "--config", str(config), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def config_for(path: Path) -> Path:
    config = path.parent / "config.yaml"
    config.write_text(yaml.safe_dump({"storage": {"url": f"sqlite:///{path}"}}))
    return config


def but_the_counters(data: bytes) -> bytes:
    masked = bytearray(data)
    for field in HEADER_COUNTERS:
        masked[field] = bytes(field.stop - field.start)
    return bytes(masked)


def sql(path: Path, *statements: str, revision: str = "head") -> None:
    """A database file at `revision`, after `statements`."""
    database = Database(f"sqlite:///{path}")
    upgrade(database, revision)
    with database.write_session() as session:
        for statement in statements:
            session.execute(text(statement))
    database.close()  # the last connection: the write-ahead log is folded into the file


def backups(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if ".bak-" in path.name)


def test_serve_copies_an_older_sqlite_file_then_migrates_it(tmp_path: Path) -> None:
    path = tmp_path / "groupmate.db"
    sql(
        path,
        "INSERT INTO messages (chat_id, message_id, sender_id, sender_name, text, from_bot,"
        " created_at) VALUES ('g1', 'm1', 'u1', 'Ann', 'see you friday', false,"
        " '2026-11-20 10:00:00')",
        revision=OLD,
    )
    original = path.read_bytes()
    config = {"storage": {"url": f"sqlite:///{path}"}}
    with serve(config) as base_url:
        assert httpx.get(f"{base_url}/healthz").status_code == 200
    assert backups(tmp_path) == [f"groupmate.db.bak-{OLD}"]
    copy = tmp_path / f"groupmate.db.bak-{OLD}"
    assert but_the_counters(copy.read_bytes()) == but_the_counters(original)
    with contextlib.closing(sqlite3.connect(copy)) as connection:
        assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == [(OLD,)]
        assert connection.execute("SELECT text FROM messages").fetchall() == [("see you friday",)]
    migrated = Database(f"sqlite:///{path}")
    assert current_revision(migrated) == head_revision()
    assert "reactions" in inspect(migrated.engine).get_table_names()  # head's new table
    with migrated.read_session() as session:
        assert session.execute(text("SELECT text FROM messages")).scalars().all() == [
            "see you friday"
        ]
    migrated.close()

    # At head there is nothing to migrate, and no copy is made.
    kept = copy.read_bytes()
    with serve(config):
        pass
    assert backups(tmp_path) == [f"groupmate.db.bak-{OLD}"]
    assert copy.read_bytes() == kept


def test_db_upgrade_says_where_the_copy_is(tmp_path: Path) -> None:
    path = tmp_path / "bot.db"
    sql(path, revision=OLD)
    done = groupmate("db", "upgrade", config=config_for(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"copied the database to {path}.bak-{OLD} before upgrading it",
        f"sqlite:///{path}: schema revision {head_revision()} (up to date)",
    ]


def test_serve_refuses_a_database_a_newer_groupmate_migrated(tmp_path: Path) -> None:
    path = tmp_path / "groupmate.db"
    sql(path, f"UPDATE alembic_version SET version_num = '{NEWER}'")
    config = config_for(path)
    original, files = path.read_bytes(), sorted(os.listdir(tmp_path))
    refusal = (
        f"groupmate: the database's schema is at revision {NEWER}, which this groupmate (at "
        f"{head_revision()}) does not know: a newer groupmate has upgraded it. Run that "
        "version; or, for a SQLite file, put back the copy it made before upgrading "
        f"(<file>.bak-{head_revision()}). Nothing was changed\n"
    )
    served = groupmate("serve", config=config)
    assert (served.returncode, served.stdout, served.stderr) == (2, "", refusal)
    upgraded = groupmate("db", "upgrade", config=config)
    assert (upgraded.returncode, upgraded.stderr) == (2, refusal)
    current = groupmate("db", "current", config=config)
    assert current.stdout.endswith(
        f"schema revision {NEWER} (newer than this groupmate knows: it won't start on it)\n"
    )
    assert path.read_bytes() == original  # untouched, and no copy made
    assert sorted(os.listdir(tmp_path)) == files


def test_upgrade_refuses_an_unknown_revision_on_either_backend(database_url: str) -> None:
    database = Database(database_url)
    upgrade(database)
    with database.write_session() as session:
        session.execute(text(f"UPDATE alembic_version SET version_num = '{NEWER}'"))
    with pytest.raises(NewerDatabaseError) as refused:
        upgrade(database)
    assert (refused.value.revision, refused.value.head) == (NEWER, head_revision())
    assert current_revision(database) == NEWER
    database.close()


async def test_a_backup_while_the_bot_writes_is_a_consistent_database(
    tmp_path: Path, groupmate_model: ScriptedModel
) -> None:
    path = tmp_path / "groupmate.db"
    config = config_for(path)
    created = 0  # reminders committed: the bot replies once its write is
    copies: list[tuple[Path, int, int]] = []  # each copy, and `created` before and after it
    async with TestBot(tmp_path=tmp_path, model=groupmate_model) as bot:
        started, writing = asyncio.Event(), asyncio.Event()

        async def write() -> None:
            nonlocal created
            # Each reminder takes the chat's next number, in the same transaction.
            while created < 3 or not writing.is_set():
                [reply] = await bot.say(f"/remind in {created + 1} minutes task {created + 1}")
                assert reply.startswith(f"⏰ Reminder #{created + 1} "), reply
                created += 1
                if created == 3:
                    started.set()

        writer = asyncio.create_task(write())
        await started.wait()
        # Someone reads meanwhile (an export, the dashboard): the write-ahead log can't be
        # folded into the file past what they see, so the newest commits are in the log
        # alone, and a copy of the file would miss them.
        reader = sqlite3.connect(path, isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM reminders").fetchall()
        for n in range(3):
            copy, before = tmp_path / f"backup-{n}.db", created
            process = await asyncio.create_subprocess_exec(
                GROUPMATE, "--config", str(config), "backup", str(copy),
                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            out, err = await process.communicate()
            assert process.returncode == 0, err
            assert out.decode().startswith(f"backed up sqlite:///{path} to {copy} (")
            copies.append((copy, before, created))
        writing.set()
        await writer
        reader.close()
    assert copies[-1][1] > copies[0][2]  # the bot wrote on while the copies were made
    for copy, before, after in copies:
        with contextlib.closing(sqlite3.connect(copy)) as connection:
            assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
            [(reminders,)] = connection.execute("SELECT count(*) FROM reminders")
            [(numbered,)] = connection.execute(
                "SELECT last_short_id FROM chats WHERE chat_id = 'group-1'"
            )
        # Everything committed before the copy began is in it (the write-ahead log's
        # newest transactions too), and a reminder and the chat's count of them are
        # both there or neither: the copy is one moment of the database.
        assert before <= reminders == numbered <= after
        assert current_revision(Database(f"sqlite:///{copy}")) == head_revision()


def test_backup_of_postgresql_points_to_pg_dump(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"storage": {"url": "postgresql://bot:pw@db.invalid/gm"}}))
    done = groupmate("backup", str(tmp_path / "copy.db"), config=config)
    assert done.returncode == 2
    assert done.stderr.startswith("groupmate: backup copies a SQLite file; a PostgreSQL ")
    assert "pg_dump -Fc -f groupmate.dump DBNAME" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "copy.db").exists()


def test_backups_and_upgrade_copies_are_their_owners_alone(tmp_path: Path) -> None:
    """A copy holds every message and the adapters' logins (a Matrix access token): 0600
    under the usual umask, 022, the copy before an upgrade too; and a backup is never
    written over a file SQLite keeps beside the database."""
    path = tmp_path / "groupmate.db"
    sql(path, revision=OLD)
    config = config_for(path)
    umask = os.umask(0o022)
    try:
        upgraded = groupmate("db", "upgrade", config=config)
        assert upgraded.returncode == 0, upgraded.stderr
        copy = tmp_path / "copies" / "backup.db"
        backed_up = groupmate("backup", str(copy), config=config)
        assert backed_up.returncode == 0, backed_up.stderr
        wal = groupmate("backup", f"{path}-wal", config=config)
    finally:
        os.umask(umask)
    for file in (tmp_path / f"groupmate.db.bak-{OLD}", copy):
        assert oct(file.stat().st_mode & 0o777) == oct(0o600), file
    assert (wal.returncode, wal.stdout) == (2, "")
    assert wal.stderr == (
        f"groupmate: {path}-wal is the database's -wal file ({path}): write the copy to "
        "another file; nothing was changed\n"
    )
    assert not Path(f"{path}-wal").exists()
