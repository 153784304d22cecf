"""The search index follows the chat log: what retention prunes, a chat's data deletion
and a changed text are found no more (or found as they are now), on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import delete, insert, text, update

from groupmate.storage import Database, upgrade
from groupmate.storage.chatlog import ChatLog, LogEntry
from groupmate.storage.models import ChatMessage
from groupmate.storage.search import MessageSearch, SearchQuery, parse_query
from tests.conftest import eventually

START = datetime(2026, 3, 1, 9, tzinfo=UTC)


def entry(n: int, words: str, *, sender: str = "u-alice", minutes: int = 0) -> LogEntry:
    return LogEntry(f"m{n}", sender, sender[2:].title(), words, START + timedelta(minutes=minutes))


async def texts(search: MessageSearch, chat: str, words: str) -> list[str]:
    return [m.text for m in await search.search(chat, parse_query(words), limit=50)]


async def test_index_follows_retention_deletes_and_changes(database_url: str) -> None:
    database = Database(database_url)
    upgrade(database)
    try:
        chatlog = ChatLog(database, keep=3, max_age=timedelta(days=30))
        search = MessageSearch(database)
        for n, words in enumerate(["launch one", "launch two 预算", "launch three", "launch 4"]):
            await chatlog.append("g1", entry(n, words, minutes=n))
        await chatlog.append("g2", entry(9, "launch elsewhere", minutes=9))
        assert await texts(search, "g1", "launch") == [
            "launch 4",
            "launch three",
            "launch two 预算",
            "launch one",
        ]
        # Retention keeps the newest 3: the oldest is no longer found.
        await chatlog.prune("g1", START + timedelta(minutes=5))
        assert await texts(search, "g1", "launch") == [
            "launch 4",
            "launch three",
            "launch two 预算",
        ]
        # A changed text is found as it is now, not as it was.
        with database.write_session() as session:
            session.execute(
                update(ChatMessage)
                .where(ChatMessage.message_id == "m2")
                .values(text="liftoff three")
            )
        assert await texts(search, "g1", "launch") == ["launch 4", "launch two 预算"]
        assert await texts(search, "g1", "liftoff") == ["liftoff three"]
        # Age-based pruning of every chat.
        await chatlog.prune_expired(START + timedelta(days=30, minutes=2, seconds=30))
        assert await texts(search, "g1", "launch") == ["launch 4"]
        assert await texts(search, "g2", "launch") == ["launch elsewhere"]
        assert await search.search("g1", SearchQuery(("预算",)), limit=5) == []
        if database.backend == "sqlite":
            check_index(database)
    finally:
        await database.aclose()


def upto(database: Database) -> int:
    with database.read_session() as session:
        return int(session.scalar(text("SELECT id FROM messages_fts_upto")) or 0)


def newest(database: Database) -> int:
    with database.read_session() as session:
        return int(session.scalar(text("SELECT max(id) FROM messages")) or 0)


def check_index(database: Database) -> None:
    """FTS5's own check: the index holds exactly the indexed rows (an error otherwise)."""
    with database.read_session() as session:
        session.execute(
            text("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
        )


def filler(chat: str, count: int) -> list[dict[str, object]]:
    return [
        {
            "chat_id": chat,
            "message_id": f"f{n}",
            "sender_id": "u-bob",
            "sender_name": "Bob",
            "text": f"small talk {n}",
            "created_at": START + timedelta(hours=1),
        }
        for n in range(count)
    ]


async def test_old_messages_are_found_through_the_index(database_url: str) -> None:
    """Past the chat's newest 2,000 rows (which PostgreSQL reads without the index), the
    index serves the search: it has what was just logged, the words as they are now, and
    no deleted row."""
    database = Database(database_url)
    upgrade(database)
    try:
        chatlog = ChatLog(database, keep=10_000, max_age=timedelta(days=30))
        search = MessageSearch(database)
        for n, words in enumerate(["launch one 预算", "launch two", "launch three"]):
            await chatlog.append("g1", entry(n, words, minutes=n))
        with database.write_session() as session:
            session.execute(insert(ChatMessage), filler("g1", 2_100))
        await chatlog.log("g1", entry(5, "launch now", minutes=90))  # not written yet
        assert await texts(search, "g1", "launch") == [
            "launch now",
            "launch three",
            "launch two",
            "launch one 预算",
        ]
        with database.write_session() as session:
            session.execute(
                update(ChatMessage).where(ChatMessage.message_id == "m1").values(text="liftoff")
            )
            session.execute(delete(ChatMessage).where(ChatMessage.message_id == "m2"))
        assert await texts(search, "g1", "launch") == ["launch now", "launch one 预算"]
        assert await texts(search, "g1", "liftoff") == ["liftoff"]
        assert await texts(search, "g1", "预算") == ["launch one 预算"]
        if database.backend == "sqlite":
            check_index(database)
    finally:
        await database.aclose()


async def test_sqlite_indexes_in_batches_and_reused_ids(tmp_path: Path) -> None:
    database = Database(f"sqlite:///{tmp_path / 'index.db'}")
    upgrade(database)
    try:
        chatlog = ChatLog(database, keep=100, max_age=timedelta(days=30))
        search = MessageSearch(database)
        async with search.indexing(every=0.02):
            for n in range(30):
                await chatlog.log("g1", entry(n, f"launch {n}", minutes=n))
            await chatlog.flush()
            # The service indexes what was logged, with no search asking for it.
            await eventually(lambda: upto(database) == newest(database) == 30)
        check_index(database)
        # A message logged but not indexed yet, then deleted: the index is not touched.
        await chatlog.append("g1", entry(31, "launch pending", minutes=31))
        assert upto(database) == 30
        await search.forget_chat("g1")
        check_index(database)
        # SQLite hands the deleted ids out again: a reused id, below the mark, is
        # indexed at once by its trigger.
        await chatlog.append("g1", entry(40, "launch again", minutes=40))
        assert newest(database) <= upto(database)
        check_index(database)
        assert await texts(search, "g1", "launch") == ["launch again"]
        check_index(database)
    finally:
        await database.aclose()
