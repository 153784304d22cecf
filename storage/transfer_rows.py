"""The export format's rows (storage.transfer has the format and the files): which
tables go, in what order, and how each column's value is written as JSON and read back,
checked, from it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Any

from sqlalchemy import JSON, Boolean, Column, Date, Integer, String, Table, Time
from sqlalchemy.sql.elements import ColumnElement

from groupmate.storage.exceptions import GroupmateError
from groupmate.storage.models import Base, UTCDateTime

# Every table of the schema, parents before children (a delivery names its reminder, a
# reminder its chat); a table added to the models goes too. Not rows of their own: the
# schema's revision (the header says it; the importing database has its migrations'),
# and the search index (messages_fts on SQLite, a trigram index on PostgreSQL), which is
# made from the messages again.
TABLES: tuple[Table, ...] = tuple(Base.metadata.sorted_tables)
BY_NAME: Mapping[str, Table] = {table.name: table for table in TABLES}


class RowError(GroupmateError, ValueError):
    """A value in a file that does not fit its column; the message says what it should be."""


@dataclass(frozen=True, slots=True)
class Codec:
    """A column's value to JSON, and back from JSON (RowError if it does not fit)."""

    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]


def _checked(kind: type, what: str) -> Callable[[Any], Any]:
    def decode(value: Any) -> Any:
        # bool is an int to Python, not to the file: true is no count.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise RowError(f"should be {what}, not {value!r:.40}")
        return value

    return decode


def _parsed(parse: Callable[[str], Any], what: str) -> Callable[[Any], Any]:
    def decode(value: Any) -> Any:
        try:
            return parse(_checked(str, what)(value))
        except ValueError:
            raise RowError(f"should be {what}, not {value!r:.40}") from None

    return decode


def _utc(text: str) -> datetime:
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:  # a time without its zone is no moment
        raise ValueError(text)
    return moment.astimezone(UTC)


def _text(length: int | None) -> Callable[[Any], Any]:
    check = _checked(str, "text")

    def decode(value: Any) -> Any:
        # SQLite keeps longer text than the column says; PostgreSQL refuses it.
        if length is not None and len(check(value)) > length:
            raise RowError(f"should be at most {length} characters, not {len(value)}")
        return check(value)

    return decode


def _isoformat(value: date | time) -> str:
    return value.isoformat()


def codec(column: Column[Any]) -> Codec:
    """How `column`'s values are written: times as ISO 8601 with their offset (always
    +00:00: every stored time is UTC), dates and wall times as ISO 8601, JSON as itself."""
    kind = column.type
    if isinstance(kind, UTCDateTime):
        return Codec(_isoformat, _parsed(_utc, "a time with its UTC offset (ISO 8601)"))
    if isinstance(kind, Date):
        return Codec(_isoformat, _parsed(date.fromisoformat, "a date (YYYY-MM-DD)"))
    if isinstance(kind, Time):
        return Codec(_isoformat, _parsed(time.fromisoformat, "a time of day (HH:MM:SS)"))
    if isinstance(kind, JSON):
        return Codec(_same, _same)
    if isinstance(kind, Boolean):
        return Codec(_same, _checked(bool, "true or false"))
    if isinstance(kind, Integer):
        return Codec(_same, _checked(int, "a whole number"))
    if isinstance(kind, String):
        return Codec(_same, _text(kind.length))
    # A column type the format does not know yet must be given a codec, not guessed at.
    raise TypeError(f"no export codec for {column.table.name}.{column.name} ({kind!r})")


def _same(value: Any) -> Any:
    return value


CODECS: Mapping[str, Mapping[str, Codec]] = {
    table.name: {column.name: codec(column) for column in table.columns} for table in TABLES
}


def encode_row(table: Table, row: Mapping[Any, Any]) -> dict[str, Any]:
    codecs = CODECS[table.name]
    return {name: None if row[name] is None else codecs[name].encode(row[name]) for name in codecs}


def decode_row(table: Table, row: Any) -> dict[str, Any]:
    """A row of the file as the table's values: every column, and no other."""
    if not isinstance(row, dict):
        raise RowError("a row should be a JSON object")
    codecs = CODECS[table.name]
    missing = [name for name in codecs if name not in row]
    extra = [name for name in row if name not in codecs]
    if missing or extra:
        problem = f"lacks {', '.join(missing)}" if missing else f"has {', '.join(extra)}"
        raise RowError(f"a row of {table.name} {problem}: the columns differ from this schema's")
    values: dict[str, Any] = {}
    for name, column_codec in codecs.items():
        value = row[name]
        column = table.columns[name]
        try:
            if value is None:
                # A JSON column's null is a value like any other (a plugin may store one).
                if not column.nullable and not isinstance(column.type, JSON):
                    raise RowError("is required")
                values[name] = None
            else:
                values[name] = column_codec.decode(value)
        except RowError as exc:
            raise RowError(f"{table.name}.{name} {exc}") from None
    return values


def in_key_order(table: Table, dialect: str) -> list[ColumnElement[Any]]:
    """The table's primary key, to order its rows by: the same order on both backends, so
    that the same rows give the same file (text by code point: PostgreSQL's "C")."""
    key: list[ColumnElement[Any]] = []
    for column in table.primary_key.columns:
        text = dialect == "postgresql" and isinstance(column.type, String)
        key.append(column.collate("C") if text else column)
    return key
