"""On the real clock: the timer and the watchdog each deliver with the other one out of play.

Each test switches the other mechanism off through DeliveryPolicy, so that a broken timer
cannot hide behind the watchdog's sweep, nor a broken watchdog behind the timer.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from apscheduler.schedulers.base import STATE_RUNNING

from groupmate.function_calls.handlers.reminder_words import reminder_message
from groupmate.storage import (
    DeliveryPolicy,
    NewReminder,
    OutgoingMessage,
    ReminderScheduler,
    ReminderService,
    ReminderView,
    Schedule,
)
from tests.conftest import Outbox, eventually
from tests.test_delivery import deliveries, scheduler


async def once(service: ReminderService, due: datetime, content: str) -> ReminderView:
    schedule = Schedule.once_at(due, "UTC")
    return await service.create(NewReminder("chat-1", "group", "u-a", "A", content, schedule, due))


async def test_timer_fires_on_time_without_polling(database_url: str, outbox: Outbox) -> None:
    # The watchdog sweeps at startup, when this reminder is not due, and then not for an
    # hour: only the timer can deliver it.
    policy = DeliveryPolicy(watchdog_interval=timedelta(hours=1))
    async with ReminderService.open(
        database_url, sender=outbox, compose=reminder_message, policy=policy
    ) as service:
        due = datetime.now(UTC) + timedelta(seconds=1)
        await once(service, due, "now!")
        assert scheduler(service).planned == 1
        await outbox.wait_for(1, within=4)
        lateness = datetime.now(UTC) - due
    assert timedelta(0) <= lateness < timedelta(seconds=0.5)
    assert outbox.texts() == ["⏰ Reminder for @A: now!"]


async def test_watchdog_delivers_when_no_timer_fires(database_url: str, outbox: Outbox) -> None:
    # A zero horizon gives no reminder a timer; the reminder is due after the startup
    # sweep, so only a later, periodic sweep can deliver it.
    policy = DeliveryPolicy(watchdog_interval=timedelta(milliseconds=300), horizon=timedelta(0))
    async with ReminderService.open(
        database_url, sender=outbox, compose=reminder_message, policy=policy
    ) as service:
        due = datetime.now(UTC) + timedelta(seconds=1)
        await once(service, due, "still!")
        assert scheduler(service).planned == 0
        await outbox.wait_for(1, within=5)
        lateness = datetime.now(UTC) - due
    assert timedelta(0) <= lateness < timedelta(seconds=1.5)
    assert outbox.texts() == ["⏰ Reminder for @A: still!"]


async def test_watchdog_resumes_a_paused_timer(
    database_url: str, outbox: Outbox, caplog: pytest.LogCaptureFixture
) -> None:
    policy = DeliveryPolicy(watchdog_interval=timedelta(milliseconds=200))
    async with ReminderService.open(
        database_url, sender=outbox, compose=reminder_message, policy=policy
    ) as service:
        timer = scheduler(service).timer
        timer.pause()  # what a stalled AsyncIOScheduler looks like
        await eventually(lambda: timer.state == STATE_RUNNING, within=3)
    assert "the reminder timer was paused; the watchdog resumed it" in caplog.text


async def test_watchdog_resumes_deliveries_of_a_dead_dispatcher(
    database_url: str, outbox: Outbox
) -> None:
    """A dispatcher claims and dies mid-send; a running bot's sweep takes over after the lease."""
    policy = DeliveryPolicy(lease=timedelta(seconds=1.5), watchdog_interval=timedelta(seconds=0.2))
    hanging = asyncio.Event()
    first_keys: list[str | None] = []

    async def dies_mid_send(message: OutgoingMessage) -> None:
        first_keys.append(message.idempotency_key)
        hanging.set()
        await asyncio.Event().wait()

    async with ReminderService.open(database_url, policy=policy) as store:  # no timers
        reminder = await once(store, datetime.now(UTC), "resume me")
        dead = ReminderScheduler(
            store.database, dies_mid_send, compose=reminder_message, policy=policy
        )
        claiming = asyncio.create_task(dead.run_due())
        await hanging.wait()
        # The running bot starts while the lease still holds: its startup sweep leaves
        # the delivery alone, a periodic one resumes it.
        async with ReminderService.open(
            database_url, sender=outbox, compose=reminder_message, policy=policy, migrate=False
        ) as live:
            await outbox.wait_for(1, within=6)
            await scheduler(live).settle()
        claiming.cancel()
        await asyncio.gather(claiming, return_exceptions=True)
        (row,) = await deliveries(store, reminder)
    assert outbox.messages[0].idempotency_key == first_keys[0] is not None
    assert (row.outcome, len(outbox.messages)) == ("sent", 1)


async def test_timers_are_rebuilt_from_the_table_at_startup(
    database_url: str, outbox: Outbox
) -> None:
    # Far enough ahead that a loaded machine's startup (seen: over a second) ends first.
    due = datetime.now(UTC) + timedelta(seconds=4)
    async with ReminderService.open(database_url) as service:  # no sender: store only
        await once(service, due, "boot")
    async with ReminderService.open(
        database_url, sender=outbox, compose=reminder_message
    ) as service:
        assert scheduler(service).planned == 1
        await outbox.wait_for(1, within=10)


async def test_leases_of_queued_sends_are_renewed_so_no_one_takes_them_over(
    database_url: str,
) -> None:
    """One send slot, slow sends: queued claims outlive the lease unless it is renewed."""
    sent: list[str | None] = []

    async def slow(message: OutgoingMessage) -> None:
        await asyncio.sleep(0.6)  # the platform's answer takes a lease's length
        sent.append(message.idempotency_key)

    policy = DeliveryPolicy(
        lease=timedelta(milliseconds=600),
        max_concurrent_sends=1,
        watchdog_interval=timedelta(hours=1),
    )
    async with ReminderService.open(
        database_url, sender=slow, compose=reminder_message, policy=policy
    ) as service:
        due = datetime.now(UTC) + timedelta(milliseconds=100)
        for n in range(3):
            await once(service, due, f"r{n}")
        rival = ReminderScheduler(service.database, slow, compose=reminder_message, policy=policy)

        async def rival_finds_nothing_until_all_are_sent() -> bool:
            await rival.run_due()  # takes over any delivery whose lease ran out
            return len(sent) >= 3

        await eventually(rival_finds_nothing_until_all_are_sent, within=10, every=0.1)
        await scheduler(service).settle()
    assert len(sent) == 3
    assert len(set(sent)) == 3
