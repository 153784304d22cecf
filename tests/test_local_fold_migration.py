"""Revision 0021 on SQLite and PostgreSQL: a database of 0020, with its reminders, gets
`reminders.local_fold`; a rule stored before reads as the first of a repeated wall time
(as it did), one stored after keeps which it is; downgrading drops the column and leaves
the reminders."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

from sqlalchemy import inspect, select, update

from groupmate.storage import Database, Schedule, upgrade
from groupmate.storage.models import Chat, Reminder
from groupmate.storage.reminder_rows import schedule_columns, schedule_of
from tests.test_calendar_feeds_migration import downgrade
from tests.test_snooze_migration import add_as_stored, empty_url, reminder

__all__ = ["empty_url"]  # the fixture, on both backends

# Berlin, 25 October 2026: 02:00-03:00 comes twice; the second 02:20 is 01:20 UTC.
SECOND_0220 = time(2, 20, fold=1)
AUTUMN = date(2026, 10, 25)


def test_0021_keeps_which_of_a_repeated_wall_time_a_rule_starts_at(empty_url: str) -> None:
    database = Database(empty_url)
    try:
        upgrade(database, "0020")
        with database.write_session() as session:
            session.add(Chat(chat_id="g1", chat_type="group", last_short_id=2, settings={}))
            session.flush()
            add_as_stored(session, reminder(1, status="active"))
        upgrade(database)
        with database.read_session() as session:
            before = session.execute(select(Reminder.__table__)).one()
            assert before.local_fold is False
            assert schedule_of(before).wall_time.fold == 0
        rule = Schedule(
            "interval", SECOND_0220, "Europe/Berlin", AUTUMN, every=timedelta(minutes=10), count=12
        )
        with database.write_session() as session:
            session.execute(
                update(Reminder).where(Reminder.id == before.id).values(**schedule_columns(rule))
            )
        with database.read_session() as session:
            after = schedule_of(session.execute(select(Reminder.__table__)).one())
        assert after.wall_time.fold == 1
        first = after.first_after(datetime(2026, 10, 25, 0, 0, tzinfo=UTC))
        assert first == datetime(2026, 10, 25, 1, 20, tzinfo=UTC)
        assert after.last() == first + 11 * timedelta(minutes=10)
        downgrade(database, "0020")
        with database.read_session() as session:
            columns = {c["name"] for c in inspect(session.connection()).get_columns("reminders")}
            assert "local_fold" not in columns
            assert session.execute(select(Reminder.id)).scalar_one() == f"{1:032d}"
    finally:
        database.close()
