"""`groupmate export` and `groupmate import`: a bot's whole database from SQLite to
PostgreSQL and back with nothing lost, the ids and the search index right after, and the
refusals (a database with rows, a file this groupmate can't read), all or nothing."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import func, inspect, select, text

from groupmate.bot.messages import IncomingMessage, IncomingReaction
from groupmate.storage import (
    Database,
    Member,
    NotEmptyError,
    TransferError,
    current_revision,
    export_file,
    head_revision,
    import_file,
    upgrade,
)
from groupmate.storage.adapter_state import save_state
from groupmate.storage.changes import Requester
from groupmate.storage.search import parse_query
from groupmate.storage.search_rows import search
from groupmate.storage.transfer_rows import TABLES
from groupmate.testing.bot import TestBot
from groupmate.testing.clock import FakeClock
from groupmate.testing.model import ScriptedModel
from tests import bots
from tests.postgres import create_database, drop_database

ROOT = Path(__file__).resolve().parent.parent
GROUPMATE = str(Path(sys.executable).with_name("groupmate"))
CHAT = "group-1"
# Not rows of their own, and so neither exported nor compared: the schema's revision
# (the file's header carries it) and SQLite's search index over the messages (FTS5's
# table and its shadow tables, and the mark of what it holds), which the import builds
# again; it is checked on its own below.
DERIVED = ("alembic_version", "messages_fts")
# /calendar makes links only with the server's address set.
PUBLIC = {"adapters": {"webhook": {"public_url": "https://bot.example.com"}}}


def run(*args: str, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The installed `groupmate` command, as a user runs it."""
    command = [GROUPMATE, *(["--config", str(config)] if config else []), *args]
    return subprocess.run(
        command, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=180, check=False
    )


ENV = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp")}
# The code under test, where a checkout puts it first (a worktree of an editable install).
ENV |= {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def rows_of(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, as the models read them (aware UTC times, JSON parsed),
    sorted the same way on both backends."""
    database = Database(url)
    try:
        with database.read_session() as session:
            return {
                table.name: sorted((tuple(row) for row in session.execute(select(table))), key=repr)
                for table in TABLES
            }
    finally:
        database.close()


def raw_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored value of a SQLite file as SQLite holds it (the text of times and
    JSON), table by table, but the derived ones."""
    with contextlib.closing(sqlite3.connect(path)) as connection:
        names = [
            name
            for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
            if not name.startswith(DERIVED)
        ]
        return {
            name: sorted(connection.execute(f"SELECT * FROM {name}"), key=repr) for name in names
        }


def said(words: str, message_id: str, sender: str, **fields: Any) -> IncomingMessage:
    return bots.chat_message(
        words,
        chat_id=CHAT,
        sender_id=sender,
        sender_name=sender.title(),
        message_id=message_id,
        **fields,
    )


async def fill(folder: Path, clock: FakeClock, model: ScriptedModel) -> None:
    """A bot's life in a group, through the real bot: reminders of every kind (a
    repeating one that went off and was snoozed, a paused one, one done, a scheduled
    action, one that names a member), the chat's settings, its log with a reaction,
    the audit log, a model turn and its tokens, plugin values, an adapter's state and a
    calendar link."""
    config = {"bot": {"timezone": "UTC", "admins": ["alice"]}, **PUBLIC}
    async with TestBot(tmp_path=folder, clock=clock, model=model, config=config) as bot:
        for words in (
            "/tz Europe/Berlin",
            "/remind every day at 8:00 stand up",
            "/remind every monday at 9 send the report",
            "/remind tomorrow at 9 call the dentist",
            "/remind every day at 18:00 /summary",
            "/remind every month on the 1st at 10 pay the rent",
        ):
            [reply] = await bot.say(words, admin=True)
            assert reply.startswith(("⏰", "🌍")), reply
        bob = Member(user_id="bob", name="Bob")
        [named] = await bot.app.handle(said("/remind @Bob in 2 hours water the plants", "m-set",
                                            "alice", mentions=(bob,)))  # fmt: skip
        assert named.text.startswith("⏰ Reminder #6 "), named.text
        await bot.app.handle(said("the launch moves to friday", "m-bob", "bob"))
        await bot.app.handle(said("上次说的预算是多少", "m-carol", "carol"))
        await bot.app.react(IncomingReaction(CHAT, "group", "alice", "m-bob", "👍"))
        model.answers("- Bob: the launch moves to Friday.")  # the first digest
        fired = await bot.advance(timedelta(days=2))
        assert "⏰ Reminder for @Alice: stand up" in fired
        assert any("Bob: the launch moves to Friday" in text for text in fired)
        assert (await bot.say("/snooze 1 10m"))[0].startswith("💤")
        assert (await bot.say("/pause 2", admin=True))[0].startswith("⏸️")
        assert bot.app.reminders is not None
        acts = bot.app.reminders.acts
        await acts.acknowledge(CHAT, Requester("alice", is_admin=True), "Alice", "command",
                               reference="3")  # fmt: skip
        await acts.take_press("tg:cb:1", CHAT)
        await bot.store("notes", CHAT).set("list", {"items": [1, 2.5, None], "by": "Zoë"})
        await bot.store("notes").set("nothing", None)
        model.answers("hello there")
        assert await bot.say("hi there") == ["hello there"]
        assert "/calendar/" in (await bot.say("/calendar"))[0]
        assert bot.app.reminders is not None
        await save_state(bot.app.reminders.database, "matrix:since", "s72_4")


def newest_ids(url: str) -> dict[str, int]:
    """The largest id of each table whose ids the database hands out."""
    database = Database(url)
    try:
        with database.read_session() as session:
            return {
                table.name: session.scalar(select(func.max(table.autoincrement_column))) or 0
                for table in TABLES
                if table.autoincrement_column is not None
            }
    finally:
        database.close()


async def still_works(url: str, clock: FakeClock, model: ScriptedModel, folder: Path) -> None:
    """The imported database runs the bot: the daily reminder fires at its next time,
    and new rows of every kind with an id of their own get one past the imported ones."""
    before = newest_ids(url)
    config = {"storage": {"url": url}, "bot": {"admins": ["alice"]}, **PUBLIC}
    async with TestBot(tmp_path=folder, clock=clock, model=model, config=config) as bot:
        # Six reminders were set (the snooze has #1's number): the next is #7.
        assert (await bot.say("/remind in 1 hour stretch"))[0].startswith("⏰ Reminder #7 ")
        await bot.app.react(IncomingReaction(CHAT, "group", "bob", "m-carol", "🎉"))
        model.answers("hi again")
        assert await bot.say("hello") == ["hi again"]
        assert "/calendar/" in (await bot.say("/calendar"))[0]
        fired = await bot.advance(timedelta(days=1))
        assert "⏰ Reminder for @Alice: stand up" in fired
        assert "⏰ Reminder for @Alice: stretch" in fired
        assert bot.app.reminders is not None
        await bot.app.reminders.acts.acknowledge(CHAT, Requester("alice"), "Alice", "command",
                                                 reference="7")  # fmt: skip
    after = newest_ids(url)
    assert set(after) == {
        "acknowledgements",
        "audit_log",
        "calendar_feeds",
        "deliveries",
        "llm_turns",
        "messages",
        "reactions",
    }
    assert all(after[name] > before[name] > 0 for name in after), (before, after)


def search_index_is_complete(path: Path) -> None:
    """SQLite's search index holds every imported message: the mark is at the newest,
    FTS5's own check against the messages passes, and a search finds a message without
    indexing anything first."""
    with contextlib.closing(sqlite3.connect(path)) as connection:
        newest = connection.execute("SELECT max(id) FROM messages").fetchone()[0]
        assert connection.execute("SELECT id FROM messages_fts_upto").fetchone()[0] == newest
        connection.execute(
            "INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)"
        )
    database = Database(f"sqlite:///{path}")
    try:
        with database.read_session() as session:
            for words in ("launch moves", "预算是多少"):
                found = search(session, CHAT, parse_query(words), limit=5)
                assert [m.text for m in found] and all(words.split()[0] in m.text for m in found)
    finally:
        database.close()


async def test_sqlite_to_postgresql_to_sqlite_loses_nothing(
    tmp_path: Path, pg_server: str, groupmate_model: ScriptedModel
) -> None:
    clock = FakeClock()
    source = tmp_path / "source" / "groupmate.db"
    await fill(source.parent, clock, groupmate_model)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"storage": {"url": f"sqlite:///{source}"}}))
    expected = rows_of(f"sqlite:///{source}")
    assert all(expected.values()), {name: len(rows) for name, rows in expected.items()}
    with contextlib.closing(sqlite3.connect(source)) as connection:
        reminders = connection.execute(
            "SELECT kind, status, action != 'null', snooze_of IS NOT NULL, mentions != 'null' "
            "FROM reminders"
        ).fetchall()
        outcomes = {row[0] for row in connection.execute("SELECT outcome FROM deliveries")}
    assert {kind for kind, *_ in reminders} == {"once", "daily", "weekly", "monthly"}
    assert {status for _, status, *_ in reminders} == {"active", "paused", "done"}
    assert [any(column) for column in list(zip(*reminders, strict=True))[2:]] == [True] * 3
    assert outcomes == {"sent"}

    # Every table of the schema goes, but the derived ones (DERIVED).
    database = Database(f"sqlite:///{source}")
    schema = {n for n in inspect(database.engine).get_table_names() if not n.startswith(DERIVED)}
    database.close()
    assert schema == {table.name for table in TABLES}

    first = tmp_path / "first.jsonl"
    exported = run("export", str(first), config=config)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.startswith(f"exported {sum(map(len, expected.values()))} rows (")

    postgresql = create_database(pg_server)  # new: no schema yet
    try:
        imported = run("import", str(first), "--url", postgresql)
        assert imported.returncode == 0, imported.stderr
        assert "imported" in imported.stdout and "postgres" in imported.stdout
        assert current_revision(Database(postgresql)) == head_revision()
        assert rows_of(postgresql) == expected

        second = tmp_path / "second.jsonl"
        export_file(Database(postgresql), second)
        assert second.read_bytes() == first.read_bytes()

        target = tmp_path / "target" / "groupmate.db"
        import_file(Database(f"sqlite:///{target}"), second)
        assert rows_of(f"sqlite:///{target}") == expected
        # SQLite to SQLite: the very values stored, down to the text of times and JSON.
        assert raw_rows(target) == raw_rows(source)
        search_index_is_complete(target)
        third = tmp_path / "third.jsonl"
        export_file(Database(f"sqlite:///{target}"), third)
        assert third.read_bytes() == first.read_bytes()

        # Both imported databases run the bot on from where the source stopped.
        await still_works(postgresql, FakeClock(clock.now), groupmate_model, tmp_path / "pg")
        await still_works(f"sqlite:///{target}", FakeClock(clock.now), groupmate_model, tmp_path)
    finally:
        drop_database(pg_server, postgresql)


def test_the_format_is_what_the_docs_say(tmp_path: Path) -> None:
    """A header line, then one row per line; times keep their zone (UTC), and a file's
    time with another offset is the same moment."""
    source = Database(f"sqlite:///{tmp_path / 'a.db'}")
    upgrade(source)
    with source.write_session() as session:
        session.execute(
            text(
                "INSERT INTO adapter_state (key, value, updated_at) "
                "VALUES ('telegram:offset', '41', '2026-11-21 13:05:00.250000')"
            )
        )
    path = tmp_path / "export.jsonl"
    export_file(source, path)
    source.close()
    header, row = (json.loads(line) for line in path.read_text().splitlines())
    assert header == {
        "format": "groupmate-export",
        "version": 1,
        "schema_revision": head_revision(),
        "tables": {table.name: int(table.name == "adapter_state") for table in TABLES},
    }
    assert row == {
        "table": "adapter_state",
        "row": {
            "key": "telegram:offset",
            "value": "41",
            "updated_at": "2026-11-21T13:05:00.250000+00:00",
        },
    }
    row["row"]["updated_at"] = "2026-11-21T14:05:00.250000+01:00"  # Berlin's wall time
    path.write_text(json.dumps(header) + "\n" + json.dumps(row) + "\n")
    target = Database(f"sqlite:///{tmp_path / 'b.db'}")
    import_file(target, path)
    with target.read_session() as session:
        stored = session.execute(text("SELECT updated_at FROM adapter_state")).scalar_one()
    target.close()
    assert stored == "2026-11-21 13:05:00.250000"  # UTC, as every time is stored
    assert rows_of(f"sqlite:///{tmp_path / 'b.db'}")["adapter_state"] == [
        ("telegram:offset", "41", datetime(2026, 11, 21, 13, 5, 0, 250000, tzinfo=UTC))
    ]


def small_export(tmp_path: Path) -> Path:
    """An export of a database with two rows: an adapter's state, then a chat."""
    path = tmp_path / "small.jsonl"
    if path.exists():
        return path
    source = Database(f"sqlite:///{tmp_path / 'small.db'}")
    upgrade(source)
    with source.write_session() as session:
        session.execute(
            text(
                "INSERT INTO chats (chat_id, chat_type, settings, last_short_id, created_at, "
                "updated_at) VALUES ('g1', 'group', '{}', 0, '2026-11-21 13:05:00.000000', "
                "'2026-11-21 13:05:00.000000')"
            )
        )
        session.execute(
            text(
                "INSERT INTO adapter_state (key, value, updated_at) "
                "VALUES ('telegram:offset', '41', '2026-11-21 13:05:00.000000')"
            )
        )
    export_file(source, path)
    source.close()
    return path


def test_import_into_a_database_with_rows_refuses_and_changes_nothing(
    tmp_path: Path, database_url: str
) -> None:
    database = Database(database_url)
    upgrade(database)
    with database.write_session() as session:
        session.execute(
            text(
                "INSERT INTO adapter_state (key, value, updated_at) "
                "VALUES ('k', 'v', '2026-11-21 13:05:00')"
            )
        )
    database.close()
    before = rows_of(database_url)
    done = run("import", str(small_export(tmp_path)), "--url", database_url)
    assert done.returncode == 2
    assert done.stderr == (
        "groupmate: the database already has data (in adapter_state): import only into a "
        "new, empty database; nothing was changed\n"
    )
    assert rows_of(database_url) == before
    with pytest.raises(NotEmptyError):
        import_file(Database(database_url), small_export(tmp_path))


def damaged(path: Path, change: str) -> str:
    """The export at `path`, with one thing wrong (`change`)."""
    header, state, chat = path.read_text().splitlines()
    parsed = json.loads(header)
    rows = [state, chat]
    if change == "not an export":
        return '{"hello": "world"}\n'
    if change == "newer format":
        header = json.dumps({**parsed, "version": 2})
    elif change == "newer schema":
        header = json.dumps({**parsed, "schema_revision": "9999"})
    elif change == "older schema":
        header = json.dumps({**parsed, "schema_revision": "0014"})
    elif change == "cut short":
        rows = [state]
    elif change == "naive time":  # the last row: the first is in the database by then
        rows = [state, chat.replace("+00:00", "")]
    else:
        assert change == "broken line"
        rows = [state, chat[:-5]]
    return "\n".join([header, *rows]) + "\n"


REFUSALS = {
    "not an export": "the file is not a groupmate export (its first line says no)",
    "newer format": (
        "the file is in export format version 2, this groupmate reads version 1: import it "
        "with a newer groupmate"
    ),
    "newer schema": (
        "the file was exported by a newer groupmate (schema revision 9999; this one knows up "
        "to 0021): import it with that version or newer"
    ),
    "older schema": (
        "the file was exported at schema revision 0014, this groupmate is at 0021: upgrade "
        "the groupmate (and database) it came from, export again, and import that"
    ),
    "cut short": (
        "the file has 0 rows of chats where its header says 1: it was cut short or changed"
    ),
    "naive time": (
        "line 3: chats.created_at should be a time with its UTC offset (ISO 8601), not "
        "'2026-11-21T13:05:00'"
    ),
    "broken line": "line 3 is not JSON: the file is damaged",
}


def test_files_it_cannot_read_are_refused_clearly_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    export = small_export(tmp_path)
    processes = {}
    for change in REFUSALS:  # side by side: each is a process of its own
        path = tmp_path / f"{change}.jsonl"
        path.write_text(damaged(export, change))
        url = f"sqlite:///{tmp_path / change / 'groupmate.db'}"
        processes[change] = subprocess.Popen(
            [GROUPMATE, "import", str(path), "--url", url],
            cwd=ROOT,
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    for change, expected in REFUSALS.items():
        out, err = processes[change].communicate(timeout=180)
        assert (processes[change].returncode, out, err) == (2, "", f"groupmate: {expected}\n")
        # All or nothing: no row, and not even the schema (a refused file's last row
        # came after the first was inserted).
        target = Database(f"sqlite:///{tmp_path / change / 'groupmate.db'}")
        assert inspect(target.engine).get_table_names() == []
        target.close()
    (tmp_path / "binary").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(TransferError, match=r"not a groupmate export \(not UTF-8 text\)"):
        import_file(Database(f"sqlite:///{tmp_path / 'x.db'}"), tmp_path / "binary")


def test_export_needs_this_groupmates_schema(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'old.db'}")
    upgrade(database, "0014")
    with pytest.raises(TransferError, match=r"behind this groupmate's 0021: upgrade it first"):
        export_file(database, tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()
    database.close()


def test_an_export_is_its_owners_alone_whatever_the_umask(tmp_path: Path) -> None:
    """The file holds every message and the adapters' logins (a Matrix access token):
    0600 under the usual umask, 022, and when it replaces an earlier, readable export."""
    path = tmp_path / "groupmate.db"
    database = Database(f"sqlite:///{path}")
    upgrade(database)
    database.close()
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text("an earlier export\n")
    earlier.chmod(0o644)
    umask = os.umask(0o022)
    try:
        for file in (tmp_path / "new.jsonl", earlier):
            done = run("export", str(file), "--url", f"sqlite:///{path}")
            assert done.returncode == 0, done.stderr
            assert oct(file.stat().st_mode & 0o777) == oct(0o600), file
    finally:
        os.umask(umask)
    assert json.loads(earlier.read_text().splitlines()[0])["format"] == "groupmate-export"
    assert not list(tmp_path.glob("*.partial"))


def test_export_refuses_to_overwrite_the_database(tmp_path: Path) -> None:
    """`groupmate export` to the SQLite file itself (or by another name) or to a file SQLite
    keeps beside it would put the export in its place: refused, and nothing is touched."""
    path = tmp_path / "groupmate.db"
    database = Database(f"sqlite:///{path}")
    upgrade(database)
    database.close()
    (tmp_path / "link.db").symlink_to(path)
    original, files = path.read_bytes(), sorted(os.listdir(tmp_path))
    for name in ("groupmate.db", "link.db", "groupmate.db-wal", "groupmate.db-shm",
                 "groupmate.db-journal"):  # fmt: skip
        which = {
            "groupmate.db": "the database itself",
            "link.db": "the database itself",
        }.get(name, f"the database's {name.removeprefix('groupmate.db')} file")
        done = run("export", str(tmp_path / name), "--url", f"sqlite:///{path}")
        assert (done.returncode, done.stdout, done.stderr) == (
            2,
            "",
            f"groupmate: {tmp_path / name} is {which} ({path}): write the export to another "
            "file; nothing was changed\n",
        )
        assert path.read_bytes() == original
        assert sorted(os.listdir(tmp_path)) == files
    database = Database(f"sqlite:///{path}")
    assert current_revision(database) == head_revision()
    database.close()
