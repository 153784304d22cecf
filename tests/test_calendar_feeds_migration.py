"""Revision 0020 on SQLite and PostgreSQL: a database of 0019, with its reminders, gets
the calendar links' table; a link made then opens its chat, only by its token (the
table holds the token's sha256, unique), and is closed once revoked; downgrading drops
the table and leaves the reminders."""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import insert, inspect, select
from sqlalchemy.exc import IntegrityError

from groupmate.storage import Database, migrate, upgrade
from groupmate.storage.calendar_feeds import FeedOwner, feed_chat, make_feed, revoke_feed
from groupmate.storage.models import CalendarFeed, Chat, Reminder
from tests.test_snooze_migration import AT, add_as_stored, empty_url, reminder

__all__ = ["empty_url"]  # the fixture, on both backends


def test_0020_adds_the_calendar_links_table(empty_url: str) -> None:
    database = Database(empty_url)
    try:
        upgrade(database, "0019")
        with database.write_session() as session:
            session.add(Chat(chat_id="g1", chat_type="group", last_short_id=1, settings={}))
            session.flush()
            add_as_stored(session, reminder(1, status="active"))
        upgrade(database)
        owner = FeedOwner("g1", "u-alice")
        with database.write_session() as session:
            made = make_feed(session, owner, AT)
        with database.read_session() as session:
            stored = session.execute(select(CalendarFeed.__table__)).one()
            assert stored.token_hash == hashlib.sha256(made.token.encode()).hexdigest()
            assert made.token not in repr(tuple(stored))
            assert (stored.chat_id, stored.owner_id, stored.revoked_at) == ("g1", "u-alice", None)
            assert feed_chat(session, made.token) == "g1"
            other = made.token[:-1] + ("B" if made.token.endswith("A") else "A")
            assert feed_chat(session, other) is None
        with pytest.raises(IntegrityError), database.write_session() as session:
            session.execute(
                insert(CalendarFeed).values(
                    token_hash=stored.token_hash, chat_id="g2", owner_id=None, created_at=AT
                )
            )
        with database.write_session() as session:
            assert revoke_feed(session, owner, AT + timedelta(minutes=1))
        with database.read_session() as session:
            assert feed_chat(session, made.token) is None
        downgrade(database, "0019")
        with database.read_session() as session:
            assert "calendar_feeds" not in inspect(session.connection()).get_table_names()
            assert session.execute(select(Reminder.id)).scalar_one() == f"{1:032d}"
    finally:
        database.close()


def downgrade(database: Database, revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(Path(migrate.__file__).parent / "migrations"))
    with database.write_session() as session:
        config.attributes["connection"] = session.connection()
        command.downgrade(config, revision)
