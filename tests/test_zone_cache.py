"""The chat time-zone cache: queries counted on the real engine, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import event

from groupmate.storage import Database, ReminderService, upgrade
from groupmate.storage.chat_settings import ZONE_CACHE_SECONDS
from tests.conftest import FakeClock


def _is_zone_read(statement: str) -> bool:
    return statement.lstrip().upper().startswith("SELECT") and "chats.timezone" in statement


class ZoneReads:
    """Counts the time-zone queries that reach the database."""

    def __init__(self, database: Database) -> None:
        self.count = 0
        self._engine = database.engine
        event.listen(self._engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if _is_zone_read(statement):
            self.count += 1

    def close(self) -> None:
        event.remove(self._engine, "before_cursor_execute", self._seen)


@pytest.fixture
def zone_reads(reminders: ReminderService) -> Iterator[ZoneReads]:
    counter = ZoneReads(reminders.database)
    yield counter
    counter.close()


async def test_repeated_lookups_use_the_cache(
    reminders: ReminderService, zone_reads: ZoneReads
) -> None:
    assert await reminders.timezone_of("chat-1") == "Europe/Berlin"  # the default
    assert zone_reads.count == 1
    for _ in range(5):
        assert await reminders.timezone_of("chat-1") == "Europe/Berlin"
    assert zone_reads.count == 1
    await reminders.timezone_of("chat-2")
    assert zone_reads.count == 2


async def test_set_timezone_is_seen_at_once(
    reminders: ReminderService, zone_reads: ZoneReads
) -> None:
    assert await reminders.timezone_of("chat-1") == "Europe/Berlin"
    await reminders.set_timezone("chat-1", "group", "Asia/Tokyo")
    assert await reminders.timezone_of("chat-1") == "Asia/Tokyo"
    assert await reminders.timezone_of("chat-1") == "Asia/Tokyo"
    assert zone_reads.count == 2  # re-read once after the change, cached again after


async def test_entries_expire_and_a_clock_going_back_ends_them(
    reminders: ReminderService, clock: FakeClock, zone_reads: ZoneReads
) -> None:
    await reminders.timezone_of("chat-1")
    clock.advance(timedelta(seconds=ZONE_CACHE_SECONDS - 1))
    await reminders.timezone_of("chat-1")
    assert zone_reads.count == 1
    clock.advance(timedelta(seconds=1))
    await reminders.timezone_of("chat-1")
    assert zone_reads.count == 2
    clock.advance(timedelta(hours=-1))
    await reminders.timezone_of("chat-1")
    assert zone_reads.count == 3


async def test_a_change_by_another_process_shows_after_the_ttl(
    reminders: ReminderService, database_url: str, clock: FakeClock
) -> None:
    await reminders.timezone_of("chat-1")
    async with ReminderService.open(database_url, clock=clock, migrate=False) as other:
        await other.set_timezone("chat-1", "group", "America/New_York")
    assert await reminders.timezone_of("chat-1") == "Europe/Berlin"  # cached
    clock.advance(timedelta(seconds=ZONE_CACHE_SECONDS))
    assert await reminders.timezone_of("chat-1") == "America/New_York"


async def test_the_cache_is_bounded(database_url: str, clock: FakeClock) -> None:
    database = Database(database_url)
    try:
        await asyncio.to_thread(upgrade, database)
        service = ReminderService(database, clock=clock, zone_cache_size=2)
        reads = ZoneReads(database)
        for chat in ("a", "b", "c"):
            await service.timezone_of(chat)
        assert reads.count == 3
        await service.timezone_of("c")
        await service.timezone_of("b")
        assert reads.count == 3  # the two newest are kept
        await service.timezone_of("a")
        assert reads.count == 4  # the oldest was dropped
        reads.close()
    finally:
        database.close()


async def test_a_read_that_raced_a_change_is_not_cached(reminders: ReminderService) -> None:
    """The old zone, read while set_timezone committed, must not outlive the change."""
    executed = threading.Event()
    release = threading.Event()

    def hold_first_read(_conn: Any, _cursor: Any, statement: str, *_rest: Any) -> None:
        if _is_zone_read(statement) and not executed.is_set():
            executed.set()
            release.wait(10)

    engine = reminders.database.engine
    event.listen(engine, "after_cursor_execute", hold_first_read)
    try:
        reading = asyncio.create_task(reminders.timezone_of("chat-1"))
        assert await asyncio.to_thread(executed.wait, 10)
        await reminders.set_timezone("chat-1", "group", "Asia/Tokyo")
        release.set()
        assert await reading == "Europe/Berlin"  # it read before the change committed
    finally:
        release.set()
        event.remove(engine, "after_cursor_execute", hold_first_read)
    assert await reminders.timezone_of("chat-1") == "Asia/Tokyo"
