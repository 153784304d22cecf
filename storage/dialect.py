"""What SQLite and PostgreSQL spell differently, asked in one place: which one a session
talks to, an insert that skips rows already there, and the rows a statement changed."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import CursorResult, Insert, Result
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session


def is_postgres(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def rowcount(result: Result[Any]) -> int:
    return cast(CursorResult[Any], result).rowcount


def insert_ignoring_conflicts(session: Session, table: Any) -> Insert:
    dialect = postgresql if is_postgres(session) else sqlite
    return cast(Insert, dialect.insert(table).on_conflict_do_nothing())
