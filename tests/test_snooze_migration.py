"""Revision 0016 on SQLite and PostgreSQL: a snooze shows its reminder's number. Snoozes
made before it take their reminder's number; numbers stay unique among reminders, and the
next reminder set takes the chat's next number."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, time
from pathlib import Path
from typing import cast

import pytest
from sqlalchemy import Table, insert, inspect, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from groupmate.storage import Database, upgrade
from groupmate.storage.models import Chat, Reminder
from tests.postgres import create_database, drop_database

AT = datetime(2026, 11, 24, 13, 5, tzinfo=UTC)


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database with no schema yet, on each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'groupmate.db'}"
        return
    server: str = request.getfixturevalue("pg_server")
    url = create_database(server)
    yield url
    drop_database(server, url)


def reminder(number: int, *, snooze_of: str | None = None, status: str = "done") -> Reminder:
    return Reminder(
        id=f"{number:032d}" if snooze_of is None else f"{number + 100:032d}",
        short_id=number,
        chat_id="g1",
        chat_type="group",
        created_by="u-alice",
        created_by_name="Alice",
        content="stretch",
        kind="once",
        local_time=time(14, 10),
        local_date=AT.date(),
        timezone="Europe/Berlin",
        interval=1,
        mentions=None,
        mention_creator=True,
        everyone=False,
        snooze_of=snooze_of,
        status=status,
        next_fire_at=AT if status == "active" else None,
        version=1,
        created_at=AT,
        updated_at=AT,
    )


def stored(*rows: Reminder) -> list[dict[str, object]]:
    """The rows as 0015 held them: without the columns later revisions added."""
    columns = [column for column in Reminder.__table__.columns if column.name not in _LATER]
    return [{column.name: getattr(row, column.key) for column in columns} for row in rows]


# Added by 0017, 0018 and 0019; an insert at 0015 names none of them.
_LATER = (
    "every_seconds",
    "window_end",
    "on_days",
    "until_date",
    "until_at",
    "repeat_count",
    "calendar",
    "ack",
    "me_too",
    "confirmed_as",
)


def add_as_stored(session: Session, *rows: Reminder) -> None:
    """Insert only the columns set: an older revision lacks the columns added since."""
    table = cast(Table, Reminder.__table__)
    # And only the columns it has: a default of a later column (me_too) is not added.
    present = {column["name"] for column in inspect(session.connection()).get_columns("reminders")}
    for row in rows:
        values = {c.key: getattr(row, c.key) for c in table.columns if c.name in present}
        session.execute(insert(table).values({k: v for k, v in values.items() if v is not None}))


def numbers(database: Database) -> list[tuple[int, bool]]:
    with database.read_session() as session:
        rows = session.execute(
            select(Reminder.short_id, Reminder.snooze_of).order_by(Reminder.id)
        ).all()
    return [(row.short_id, row.snooze_of is not None) for row in rows]


def test_snoozes_made_before_0016_take_their_reminders_number(empty_url: str) -> None:
    database = Database(empty_url)
    try:
        upgrade(database, "0015")
        with database.write_session() as session:
            session.add(Chat(chat_id="g1", chat_type="group", last_short_id=4, settings={}))
            session.flush()
            session.execute(insert(Reminder), stored(reminder(1), reminder(2, status="active")))
            # Snoozes of #1 as they were stored: one that went off, one pending.
            root = f"{1:032d}"
            went_off, pending = reminder(3, snooze_of=root), reminder(4, snooze_of=root)
            pending.status, pending.next_fire_at = "active", AT
            session.execute(insert(Reminder), stored(went_off, pending))
        upgrade(database)
        assert numbers(database) == [(1, False), (2, False), (1, True), (1, True)]
        # Unique among reminders still: a second reminder #2 is refused.
        second = reminder(2, status="active")
        second.id = "f" * 32
        with pytest.raises(IntegrityError), database.write_session() as session:
            session.add(second)
    finally:
        database.close()
