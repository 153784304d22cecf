"""`groupmate export` and `groupmate import`: every row of a database in a file, and back
into a new database, on either backend: the way from SQLite on one machine to PostgreSQL
serving several.

The file is JSON Lines (UTF-8, one JSON object per line): read and written a row at a
time, so a chat log of millions of messages needs no more memory than a few rows.

- Line 1, the header: ``{"format": "groupmate-export", "version": 1,
  "schema_revision": "0014", "tables": {"chats": 2, "reminders": 5, ...}}``: the
  format's version, the schema revision the rows fit, and how many rows of each table
  follow, in that order (parents first).
- Then one line per row, table by table, each table's rows in primary key order:
  ``{"table": "reminders", "row": {"id": "…", "short_id": 1, …}}`` with every column of
  the table (storage.transfer_rows): times as ISO 8601 with their UTC offset
  (``"2026-11-21T13:05:00+00:00"``), dates ``"2026-11-21"``, wall times ``"09:00:00"``,
  JSON columns as JSON, the rest as they are.

Every table goes (see transfer_rows.TABLES): chats and their settings, reminders,
deliveries (their history), the chat log and its reactions, the audit log, token usage
and model turns, plugins' values, and adapters' state. The same rows make the same file,
byte for byte, from either backend.

An import is one transaction: the schema is migrated (a new database), the rows
inserted, PostgreSQL's id sequences moved past them and SQLite's search index built, or
nothing is. It refuses a database that has rows, and a file of another format version or
schema revision: the rows fit exactly one schema.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from sqlalchemy import Table, func, insert, literal, select, text
from sqlalchemy.exc import DataError, IntegrityError
from sqlalchemy.orm import Session

from groupmate.storage.backup import (
    create_private,
    partial_file,
    refuse_database_files,
    sqlite_file,
)
from groupmate.storage.database import Database
from groupmate.storage.errors import NewerDatabaseError, NotEmptyError, TransferError
from groupmate.storage.migrate import locked_revision, migrate
from groupmate.storage.revisions import head_revision, is_known, schema_revision
from groupmate.storage.search_rows import index_new
from groupmate.storage.transfer_rows import (
    BY_NAME,
    TABLES,
    RowError,
    decode_row,
    encode_row,
    in_key_order,
)

FORMAT = "groupmate-export"
FORMAT_VERSION = 1
# Rows per INSERT, and per fetch when reading.
_BATCH = 1000
Counts = dict[str, int]


def _line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"


def _check_database(revision: str | None) -> None:
    """Only a database at this code's schema is exported: its rows fit the models."""
    head = head_revision()
    if revision == head:
        return
    if not is_known(revision):
        assert revision is not None
        raise NewerDatabaseError(revision, head)
    if revision is None:
        raise TransferError("the database has no groupmate schema: there is nothing to export")
    raise TransferError(
        f"the database is at schema revision {revision}, behind this groupmate's {head}: "
        "upgrade it first (groupmate db upgrade), then export"
    )


def _check_file(revision: Any) -> None:
    """Only a file of this code's schema is imported: its rows fit no other."""
    head = head_revision()
    if revision == head:
        return
    if not isinstance(revision, str):
        raise TransferError("the file's header does not say its schema revision")
    if not is_known(revision):
        raise TransferError(
            f"the file was exported by a newer groupmate (schema revision {revision}; this "
            f"one knows up to {head}): import it with that version or newer"
        )
    raise TransferError(
        f"the file was exported at schema revision {revision}, this groupmate is at {head}: "
        "upgrade the groupmate (and database) it came from, export again, and import that"
    )


# --- export ------------------------------------------------------------------------------


def export_rows(session: Session, out: IO[str]) -> Counts:
    """Write the header and every row to `out`; the rows of each table."""
    _check_database(schema_revision(session))
    dialect = session.get_bind().dialect.name
    counts = {t.name: session.scalar(select(func.count()).select_from(t)) or 0 for t in TABLES}
    header = {"format": FORMAT, "version": FORMAT_VERSION, "schema_revision": head_revision()}
    out.write(_line({**header, "tables": counts}))
    for table in TABLES:
        rows = session.execute(
            select(table)
            .order_by(*in_key_order(table, dialect))
            .execution_options(yield_per=_BATCH)
        )
        for row in rows.mappings():
            try:
                out.write(_line({"table": table.name, "row": encode_row(table, row)}))
            except ValueError as exc:  # NaN or infinity in a JSON column: JSON has neither
                raise TransferError(f"a row of {table.name} can't be written: {exc}") from None
    return counts


def export_file(database: Database, path: Path) -> Counts:
    """Export the whole database to `path` (replaced once complete), as one snapshot:
    what the bot writes meanwhile is either all in it or not at all. The file is its
    owner's alone (0600): it holds every message and the adapters' logins. A SQLite
    database's own files (the database, its write-ahead log...) are refused."""
    database_file = sqlite_file(database)
    if database_file is not None:
        refuse_database_files(database_file, path, "the export")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = partial_file(path)
    partial.unlink(missing_ok=True)
    try:
        with (
            os.fdopen(create_private(partial), "w", encoding="utf-8") as out,
            database.read_session() as session,
        ):
            if database.backend == "postgresql":
                # Its reads autocommit, each statement seeing its own moment; the export
                # reads in one transaction that sees one.
                session.connection(
                    execution_options={
                        "isolation_level": "REPEATABLE READ",
                        "postgresql_readonly": True,
                    }
                )
            counts = export_rows(session, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return counts


# --- import ------------------------------------------------------------------------------


def read_header(line: str) -> Counts:
    """The tables and row counts the file's first line announces, once it is known to
    be an export this code can import."""
    try:
        header = json.loads(line)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise TransferError("the file is not a groupmate export (its first line says no)")
    version = header.get("version")
    if version != FORMAT_VERSION:
        newer = isinstance(version, int) and version > FORMAT_VERSION
        raise TransferError(
            f"the file is in export format version {version!r}, this groupmate reads "
            f"version {FORMAT_VERSION}" + (": import it with a newer groupmate" if newer else "")
        )
    _check_file(header.get("schema_revision"))
    counts = header.get("tables")
    if (
        not isinstance(counts, dict)
        or set(counts) != set(BY_NAME)
        or not all(isinstance(n, int) and n >= 0 for n in counts.values())
    ):
        raise TransferError("the file's header does not list the tables of this schema")
    return counts


def _rows(lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, Table, dict[str, Any]]]:
    """(line number, table, values) of each row line; blank lines are skipped."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            raise TransferError(f"line {number} is not JSON: the file is damaged") from None
        name = item.get("table") if isinstance(item, dict) else None
        if not isinstance(name, str) or name not in BY_NAME:
            raise TransferError(f"line {number} is no row of a table this schema has")
        table = BY_NAME[name]
        try:
            yield number, table, decode_row(table, item.get("row"))
        except RowError as exc:
            raise TransferError(f"line {number}: {exc}") from None


def _has_rows(session: Session) -> tuple[str, ...]:
    has = (session.scalar(select(literal(1)).select_from(t).limit(1)) for t in TABLES)
    return tuple(t.name for t, found in zip(TABLES, has, strict=True) if found)


def _move_sequences(session: Session) -> None:
    """PostgreSQL hands out ids from a sequence, which rows inserted with their own ids
    did not advance: move each past its table's largest id. (SQLite takes the largest id
    in the table plus one by itself.)"""
    for table in TABLES:
        column = table.autoincrement_column
        if column is None:
            continue
        # setval(…, NULL) does nothing: an empty table keeps its sequence as it is.
        session.execute(
            text(
                f"SELECT setval(pg_get_serial_sequence(:table, :column), "
                f"(SELECT max({column.name}) FROM {table.name}))"
            ),
            {"table": table.name, "column": column.name},
        )


def import_rows(session: Session, counts: Counts, lines: Iterator[tuple[int, str]]) -> Counts:
    """Migrate the database to this code's schema, then insert the rows of `lines`
    (numbered, after the header), which must be what `counts` announced; the rows of
    each table inserted. Raises, for the caller's transaction to roll back, if the
    database has rows or the file is not right."""
    locked_revision(session)
    migrate(session)
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        # A bot already serving on the database must not write between the check for
        # rows and the commit (on SQLite the write transaction keeps it out).
        names = ", ".join(table.name for table in TABLES)
        session.execute(text(f"LOCK TABLE {names} IN EXCLUSIVE MODE"))
    has = _has_rows(session)
    if has:
        raise NotEmptyError(has)
    found = dict.fromkeys(counts, 0)
    batch: list[dict[str, Any]] = []
    table: Table | None = None
    first = 0
    for number, row_table, values in _rows(lines):
        if batch and (row_table is not table or len(batch) >= _BATCH):
            _insert(session, table, batch, first)
            batch = []
        if not batch:
            table, first = row_table, number
        batch.append(values)
        found[row_table.name] += 1
    if batch:
        _insert(session, table, batch, first)
    for name, count in counts.items():
        if found[name] != count:
            raise TransferError(
                f"the file has {found[name]} rows of {name} where its header says {count}: "
                "it was cut short or changed"
            )
    if dialect == "postgresql":
        _move_sequences(session)
    index_new(session)  # SQLite's search index, of every message (see migration 0012)
    return found


def _insert(session: Session, table: Table | None, rows: list[dict[str, Any]], line: int) -> None:
    assert table is not None
    try:
        session.execute(insert(table), rows)
    except (IntegrityError, DataError) as exc:
        reason = str(exc.orig).splitlines()[0] if exc.orig is not None else type(exc).__name__
        last = line + len(rows) - 1
        raise TransferError(
            f"the database refused a row of {table.name} (lines {line} to {last}): {reason}"
        ) from None


def import_file(database: Database, path: Path) -> Counts:
    """Import the export `path` into `database`, which must have no rows, in one
    transaction; the rows of each table."""
    with open(path, encoding="utf-8") as source:
        lines = enumerate(source, start=1)
        try:
            _, first = next(lines, (1, ""))
            counts = read_header(first)
            with database.write_session() as session:
                return import_rows(session, counts, lines)
        except UnicodeDecodeError:
            raise TransferError("the file is not a groupmate export (not UTF-8 text)") from None
