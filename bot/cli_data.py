"""`groupmate backup`, `export` and `import`: a copy of the SQLite database, safe while
the bot runs, and every row of the database in a file that loads into a new one (SQLite
to PostgreSQL, say). The file's format is storage.transfer's."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from groupmate.bot.config import Config
from groupmate.storage import Database
from groupmate.storage.backup import copy_sqlite, sqlite_file
from groupmate.storage.transfer import Counts, export_file, import_file

_PG_BACKUP = (
    "backup copies a SQLite file; a PostgreSQL database is backed up with its own tools, "
    "safe while the bot runs: pg_dump -Fc -f groupmate.dump DBNAME (pg_restore puts it "
    "back); `groupmate export FILE` writes a file that either backend imports"
)


def run(options: argparse.Namespace, config: Config) -> int:
    """Run `backup`, `export` or `import`; the exit status. Storage errors are the
    caller's to print."""
    database = Database(config.storage.url)
    try:
        return _COMMANDS[options.command](database, options.file)
    except OSError as exc:
        print(f"groupmate: {exc.filename or options.file}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        database.close()


def _backup(database: Database, file: Path) -> int:
    source = sqlite_file(database)
    if source is None:
        problem = (
            _PG_BACKUP
            if database.backend == "postgresql"
            else "storage.url is a database in memory: there is no file to back up"
        )
        print(f"groupmate: {problem}", file=sys.stderr)
        return 2
    copy_sqlite(source, file)
    print(f"backed up {database.safe_url} to {file} ({file.stat().st_size:,} bytes)")
    return 0


def _rows(counts: Counts) -> str:
    each = ", ".join(f"{name} {count}" for name, count in counts.items())
    return f"{sum(counts.values())} rows ({each})"


def _export(database: Database, file: Path) -> int:
    source = sqlite_file(database)
    if source is not None and not source.is_file():  # connecting would make an empty one
        print(f"groupmate: there is no database file {source}", file=sys.stderr)
        return 2
    counts = export_file(database, file)
    print(f"exported {_rows(counts)} from {database.safe_url} to {file}")
    return 0


def _import(database: Database, file: Path) -> int:
    counts = import_file(database, file)
    print(f"imported {_rows(counts)} from {file} into {database.safe_url}")
    return 0


_COMMANDS: dict[str, Callable[[Database, Path], int]] = {
    "backup": _backup,
    "export": _export,
    "import": _import,
}
