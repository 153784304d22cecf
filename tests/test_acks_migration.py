"""Revision 0019 on SQLite and PostgreSQL: reminders made before it need no done and let
members add themselves; a person's done is stored once per occurrence."""

from __future__ import annotations

import pytest
from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError

from groupmate.storage import Database, upgrade
from groupmate.storage.models import Acknowledgement, Chat, Reminder
from groupmate.storage.reminder_rows import reminder_view
from tests.test_snooze_migration import AT, add_as_stored, empty_url, reminder

__all__ = ["empty_url"]  # the fixture, on both backends


def test_reminders_made_before_0019_need_no_done_and_take_me_too(empty_url: str) -> None:
    database = Database(empty_url)
    try:
        upgrade(database, "0018")
        with database.write_session() as session:
            session.add(Chat(chat_id="g1", chat_type="group", last_short_id=1, settings={}))
            session.flush()
            add_as_stored(session, reminder(1, status="active"))
        upgrade(database)
        with database.write_session() as session:
            row = session.execute(select(Reminder.__table__)).one()
            assert (row.ack, row.me_too, row.confirmed_as) == (None, True, None)
            view = reminder_view(row)
            assert (view.ack, view.me_too) == (None, True)
            ack = {
                "reminder_id": row.id,
                "occurrence": AT,
                "user_id": "u-bob",
                "name": "Bob",
                "at": AT,
                "via": "button",
            }
            session.execute(insert(Acknowledgement).values(**ack))
        with pytest.raises(IntegrityError), database.write_session() as session:
            session.execute(insert(Acknowledgement).values(**ack))
    finally:
        database.close()
