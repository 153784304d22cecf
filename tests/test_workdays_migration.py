"""Revision 0018 on SQLite and PostgreSQL: weekdays reminders made before it keep firing
Monday to Friday (no calendar), and a reminder can then store the calendar it follows."""

from __future__ import annotations

from sqlalchemy import select, update

from groupmate.storage import Database, upgrade
from groupmate.storage.models import Chat, Reminder
from groupmate.storage.reminder_rows import reminder_view
from groupmate.storage.workdays import work_calendar
from tests.test_snooze_migration import add_as_stored, empty_url, reminder

__all__ = ["empty_url"]  # the fixture, on both backends


def test_weekdays_reminders_made_before_0018_stay_monday_to_friday(empty_url: str) -> None:
    database = Database(empty_url)
    try:
        upgrade(database, "0017")
        with database.write_session() as session:
            session.add(Chat(chat_id="g1", chat_type="group", last_short_id=1, settings={}))
            session.flush()
            add_as_stored(session, replace_kind(reminder(1, status="active")))
        upgrade(database)
        with database.write_session() as session:
            row = session.execute(select(Reminder.__table__)).one()
            assert row.calendar is None
            assert reminder_view(row).schedule.calendar is None
            session.execute(update(Reminder).values(calendar="CN"))
        with database.read_session() as session:
            row = session.execute(select(Reminder.__table__)).one()
            assert reminder_view(row).schedule.calendar == work_calendar("CN")
    finally:
        database.close()


def replace_kind(row: Reminder) -> Reminder:
    row.kind, row.local_date = "weekdays", None
    return row
