"""Revision 0017 on SQLite and PostgreSQL: reminders stored before it keep their rule and
next time; a repeat within a day with limits is stored and read back whole."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import insert, select

from groupmate.storage import Database, Schedule, upgrade
from groupmate.storage.models import Chat, Reminder
from groupmate.storage.repository import reminder_view, schedule_columns
from tests.test_snooze_migration import AT, empty_url, reminder, stored

__all__ = ["empty_url"]  # the fixture, on both backends

RULE = Schedule(
    "interval",
    time(9),
    "Europe/Berlin",
    on_date=date(2026, 12, 1),
    every=timedelta(minutes=90),
    window_end=time(17),
    on_days=(0, 2, 4),
    until=datetime(2026, 12, 24, 12, tzinfo=UTC),
    count=20,
)


def test_0017_keeps_old_reminders_and_stores_repeats_whole(empty_url: str) -> None:
    database = Database(empty_url)
    try:
        upgrade(database, "0016")
        with database.write_session() as session:
            session.add(Chat(chat_id="g1", chat_type="group", last_short_id=2, settings={}))
            session.flush()
            old = reminder(1, status="active")
            old.kind, old.local_date = "daily", None
            session.execute(insert(Reminder), stored(old))
        upgrade(database)
        with database.read_session() as session:
            (row,) = session.execute(select(Reminder.__table__)).all()
        view = reminder_view(row)
        assert view.schedule == Schedule("daily", time(14, 10), "Europe/Berlin")
        assert view.next_fire_at == AT
        with database.write_session() as session:
            new = reminder(2, status="active")
            session.execute(
                insert(Reminder),
                [stored(new)[0] | schedule_columns(RULE)],
            )
        with database.read_session() as session:
            rows = session.execute(select(Reminder.__table__).order_by(Reminder.short_id)).all()
        assert reminder_view(rows[1]).schedule == RULE
    finally:
        database.close()
