"""The write queue (storage.group_commit) and the chat log on it, on a real SQLite file
whose write lock another connection holds: the database is stuck, as a slow disk or a
long checkpoint makes it, and the queue fills up."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text as text_sql
from sqlalchemy.orm import Session

from groupmate.storage import Database, upgrade
from groupmate.storage.chatlog import ChatLog, LogEntry
from groupmate.storage.group_commit import GroupCommit

AT = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
MAX_QUEUED = 200
MAX_BATCH = 100
ROWS_PER_WRITE = 50  # storage.chatlog._ROWS_PER_WRITE: a unit's weight


@pytest.fixture
async def database(tmp_path: Path) -> AsyncIterator[Database]:
    database = Database(f"sqlite:///{tmp_path / 'log.db'}")
    upgrade(database)
    # Small bounds, so that a few hundred messages fill the queue.
    database.batches = GroupCommit(database, max_batch=MAX_BATCH, max_queued=MAX_QUEUED)
    yield database
    await database.aclose()


@contextlib.contextmanager
def stuck(database: Database) -> Iterator[None]:
    """The database's write lock held by another connection until the block ends."""
    assert database.url.database is not None
    other = sqlite3.connect(database.url.database, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("COMMIT")
        other.close()


async def settle() -> None:
    for _ in range(30):  # every task that can get on does so well within this
        await asyncio.sleep(0.01)


def log(chatlog: ChatLog, chat: str, n: int) -> asyncio.Task[None]:
    return asyncio.create_task(chatlog.log(chat, LogEntry(f"{chat}-{n}", "u", "U", f"{n}", AT)))


async def test_while_the_database_is_stuck_logging_waits_for_room(database: Database) -> None:
    chatlog = ChatLog(database, keep=10_000, max_age=timedelta(days=30))
    with stuck(database):
        tasks = [log(chatlog, "busy", n) for n in range(1_000)]
        await settle()
        logged = sum(task.done() for task in tasks)
        # A message counts as logged once its row is queued; what a crash now would lose
        # is bounded by the queue, plus the batch being written and one unit over it.
        assert 0 < logged <= MAX_QUEUED + MAX_BATCH + ROWS_PER_WRITE
    await asyncio.gather(*tasks)
    await chatlog.flush()
    written = await chatlog.recent("busy", 2_000)
    assert [message.text for message in written] == [str(n) for n in range(1_000)]


async def test_a_busy_groups_backlog_keeps_its_order_and_never_delays_another_chat(
    database: Database,
) -> None:
    chatlog = ChatLog(database, keep=10_000, max_age=timedelta(days=30))

    def received(chat: str, message_id: str) -> asyncio.Task[object]:
        return asyncio.create_task(
            chatlog.receive(chat, LogEntry(message_id, "u", "U", message_id, AT))
        )

    with stuck(database):
        backlog = [log(chatlog, "busy", n) for n in range(600)]
        await settle()
        mention = received("busy", "mention")  # came after the backlog: written after it
        other = received("quiet", "question")  # nothing queued of its own: goes first
        await settle()
        more = [log(chatlog, "busy", n) for n in range(600, 700)]  # after the mention
    await asyncio.gather(*backlog, mention, other, *more)
    await chatlog.flush()
    busy = await chatlog.page("busy", before=None, limit=2_000)
    texts = [message.text for message in busy]
    assert texts == [str(n) for n in range(600)] + ["mention"] + [str(n) for n in range(600, 700)]
    (question,) = await chatlog.page("quiet", before=None, limit=10)
    # Only the batch being written when it came was ahead of the other chat's message.
    ahead = [message for message in busy if message.id < question.id]
    assert len(ahead) <= MAX_BATCH + ROWS_PER_WRITE


def _insert(session: Session, chat: str) -> None:
    session.execute(
        text_sql(
            "INSERT INTO messages (chat_id, message_id, sender_id, sender_name, text, from_bot,"
            " created_at) VALUES (:chat, :chat, 'u', 'U', 't', 0, '2026-11-25 12:00:00')"
        ),
        {"chat": chat},
    )


def _fail(session: Session) -> None:
    _insert(session, "doomed")
    raise ValueError("a unit's own error")


async def test_one_failing_unit_costs_only_itself(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    batches = database.batches
    with stuck(database):  # so that the units below share one batch
        first = asyncio.create_task(batches.write(lambda session: _insert(session, "first")))
        failing = asyncio.create_task(batches.write(_fail))
        await batches.write_soon(_fail, what="a logged thing")
        last = asyncio.create_task(batches.write(lambda session: _insert(session, "last")))
        await settle()
    with caplog.at_level(logging.ERROR, logger="groupmate.storage.group_commit"):
        await asyncio.gather(first, last)
        with pytest.raises(ValueError, match="a unit's own error"):
            await failing
        await batches.flush()
    chats = await database.read(
        lambda session: list(session.scalars(text_sql("SELECT chat_id FROM messages")))
    )
    assert sorted(chats) == ["first", "last"]  # the failing units' rows rolled back
    assert "a logged thing not written: ValueError" in caplog.text
