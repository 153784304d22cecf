"""Shutting down with sends in flight: nothing lost, nothing recorded twice.

Each test leaves `ReminderService.open` (which closes the scheduler) while a send is
running, then opens the store again as the next process would.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, time, timedelta
from typing import Any

from sqlalchemy import Row

from groupmate.function_calls.handlers.reminder_words import reminder_message
from groupmate.storage import DeliveryPolicy, OutgoingMessage, ReminderService, SendError
from tests.conftest import FakeClock, Outbox
from tests.test_delivery import deliveries, make, outcomes, scheduler

DUE = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)  # the first 09:00 Berlin after the clock


def policy(**changes: object) -> DeliveryPolicy:
    # No periodic sweep and timers on the real clock never fire for 2026 times: the test
    # decides when dispatching happens (wake, run_due).
    values: dict[str, object] = {"watchdog_interval": timedelta(hours=1)}
    values.update(changes)
    return DeliveryPolicy(**values)  # type: ignore[arg-type]


async def test_a_send_finishing_within_the_close_grace_is_recorded_sent(
    database_url: str, clock: FakeClock, outbox: Outbox
) -> None:
    started = asyncio.Event()
    finished: list[str | None] = []

    async def slow(message: OutgoingMessage) -> None:
        started.set()
        await asyncio.sleep(0.3)  # the platform takes a moment to answer
        finished.append(message.idempotency_key)

    calm = policy(close_grace=timedelta(seconds=10))
    async with ReminderService.open(
        database_url, sender=slow, compose=reminder_message, policy=calm, clock=clock
    ) as bot:
        reminder = await make(bot, clock, "daily", time(9, 0))
        clock.set(DUE)
        scheduler(bot).wake()
        await started.wait()
    assert len(finished) == 1  # closing waited for it

    async with ReminderService.open(
        database_url, sender=outbox, compose=reminder_message, policy=calm, clock=clock
    ) as bot:
        clock.advance(timedelta(minutes=10))  # every lease long over
        stats = await scheduler(bot).run_due()
        rows = await deliveries(bot, reminder)
    assert outcomes(rows) == [(DUE, "sent")]
    assert (stats.claimed, stats.reclaimed, outbox.messages) == (0, 0, [])


async def test_a_send_running_past_the_grace_is_resumed_once_by_the_next_process(
    database_url: str, clock: FakeClock, outbox: Outbox
) -> None:
    started = asyncio.Event()
    first_keys: list[str | None] = []

    async def never_answers(message: OutgoingMessage) -> None:
        first_keys.append(message.idempotency_key)
        started.set()
        await asyncio.Event().wait()

    brief = policy(close_grace=timedelta(milliseconds=200), lease=timedelta(minutes=2))
    loop = asyncio.get_running_loop()
    async with ReminderService.open(
        database_url, sender=never_answers, compose=reminder_message, policy=brief, clock=clock
    ) as bot:
        reminder = await make(bot, clock, "daily", time(9, 0))
        clock.set(DUE)
        scheduler(bot).wake()
        await started.wait()
        closing_began = loop.time()
    assert loop.time() - closing_began < 3, "closing waited for the hung send"
    (row,) = await _rows(database_url, clock, reminder.id)
    assert row.outcome == "pending"

    async with ReminderService.open(
        database_url, sender=outbox, compose=reminder_message, policy=brief, clock=clock
    ) as bot:
        clock.advance(timedelta(minutes=1))
        await scheduler(bot).run_due()
        assert outbox.messages == []  # its lease still holds
        clock.advance(timedelta(minutes=2))
        # This run or the startup sweep (queued behind the first run) resumes it.
        await scheduler(bot).run_due()
        await scheduler(bot).run_due()
        rows = await deliveries(bot, reminder)
    assert [message.idempotency_key for message in outbox.messages] == first_keys
    assert first_keys[0] is not None
    assert outcomes(rows) == [(DUE, "sent_late")]


async def test_a_retry_waiting_at_shutdown_is_resumed_with_its_attempts(
    database_url: str, clock: FakeClock, outbox: Outbox
) -> None:
    tried = asyncio.Event()

    async def refuses(message: OutgoingMessage) -> None:
        tried.set()
        raise SendError("the platform answered 502")

    patient = policy(
        retry_base=timedelta(minutes=10),
        retry_max=timedelta(minutes=10),
        close_grace=timedelta(milliseconds=100),
    )
    async with ReminderService.open(
        database_url, sender=refuses, compose=reminder_message, policy=patient, clock=clock
    ) as bot:
        reminder = await make(bot, clock, "daily", time(9, 0))
        clock.set(DUE)
        scheduler(bot).wake()
        await tried.wait()
    (row,) = await _rows(database_url, clock, reminder.id)
    # The failed attempt was written at close; the lease covers the retry delay.
    assert (row.outcome, row.attempts, row.last_error) == (
        "pending",
        1,
        "the platform answered 502",
    )

    async with ReminderService.open(
        database_url, sender=outbox, compose=reminder_message, policy=patient, clock=clock
    ) as bot:
        clock.advance(timedelta(minutes=5))  # still inside retry delay plus lease
        await scheduler(bot).run_due()
        assert outbox.messages == []
        clock.advance(timedelta(minutes=8))
        await scheduler(bot).run_due()
        (row,) = await deliveries(bot, reminder)
    assert (row.outcome, row.attempts) == ("sent_late", 2)
    assert len(outbox.messages) == 1


async def _rows(database_url: str, clock: FakeClock, reminder_id: str) -> list[Row[Any]]:
    """The deliveries of one reminder, read by a process that does not deliver."""
    async with ReminderService.open(database_url, clock=clock, migrate=False) as store:
        return await deliveries(store, await store.get(reminder_id))
