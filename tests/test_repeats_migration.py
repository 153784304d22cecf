"""Revision 0017 on SQLite and PostgreSQL: reminders stored before it keep their rule and
next time; a repeat within a day with limits is stored and read back whole."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import insert, select

from groupmate.storage import Database, Schedule, upgrade
from groupmate.storage.models import Chat, Reminder
from groupmate.storage.reminder_rows import reminder_view, schedule_columns
from tests.test_calendar_feeds_migration import downgrade
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


def test_0017_downgrade_ends_limited_reminders_rather_than_repeat_them_forever(
    empty_url: str,
) -> None:
    """Going back to 0016 drops the limits; a reminder that had one ends (done, no next
    time) as a repeat within a day does. One without stays; a cancelled one stays
    cancelled."""
    daily = Schedule("daily", time(9), "Europe/Berlin")
    rows_by_number = {
        2: (replace(daily, on_date=date(2026, 12, 1), count=5), "active"),
        3: (replace(daily, until=date(2026, 12, 4)), "active"),
        4: (replace(daily, until=AT + timedelta(days=30)), "paused"),
        5: (replace(daily, on_date=date(2026, 12, 1), count=3), "cancelled"),
        6: (daily, "active"),
        7: (daily, "paused"),
    }
    database = Database(empty_url)
    try:
        upgrade(database)
        with database.write_session() as session:
            session.add(Chat(chat_id="g1", chat_type="group", last_short_id=7, settings={}))
            session.flush()
            for number, (rule, status) in rows_by_number.items():
                row = reminder(number, status=status)
                session.execute(insert(Reminder), [stored(row)[0] | schedule_columns(rule)])
        downgrade(database, "0016")
        with database.read_session() as session:
            rows = session.execute(
                select(Reminder.short_id, Reminder.status, Reminder.next_fire_at).order_by(
                    Reminder.short_id
                )
            ).all()
        assert [(row.short_id, row.status, row.next_fire_at is None) for row in rows] == [
            (2, "done", True),
            (3, "done", True),
            (4, "done", True),
            (5, "cancelled", True),
            (6, "active", False),
            (7, "paused", True),
        ]
    finally:
        database.close()
