"""Firing on a fake clock: exactly once per occurrence, grace windows, retries, leases."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, time, timedelta
from typing import Any

import pytest
from sqlalchemy import Row, update
from sqlalchemy.orm import Session

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
from groupmate.storage.changes import Requester
from groupmate.storage.deliveries import deliveries_of
from groupmate.storage.models import Reminder
from groupmate.storage.outgoing import SendError
from groupmate.storage.vocabulary import ChatType
from tests.conftest import FAST_POLICY, FakeClock, Outbox, chat_ctx
from tests.test_reminder_tools import call


async def deliveries(service: ReminderService, *reminders: ReminderView) -> list[Row[Any]]:
    ids = [reminder.id for reminder in reminders]
    return await service.database.read(lambda session: deliveries_of(session, ids))


def outcomes(rows: list[Row[Any]]) -> list[tuple[datetime, str]]:
    return [(row.occurrence, row.outcome) for row in rows]


async def make(
    service: ReminderService,
    clock: FakeClock,
    kind: str,
    wall: time,
    *,
    chat_type: ChatType = "group",
    content: str = "stand-up",
    **rule: Any,
) -> ReminderView:
    schedule = Schedule(kind, wall, "Europe/Berlin", **rule)  # type: ignore[arg-type]
    first = schedule.first_after(clock())
    assert first is not None
    new = NewReminder("chat-1", chat_type, "u-alice", "Alice", content, schedule, first)
    return await service.create(new)


def scheduler(service: ReminderService) -> ReminderScheduler:
    assert service.scheduler is not None
    return service.scheduler


async def test_fires_at_its_time_not_before(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    reminder = await make(reminders, clock, "daily", time(9, 0))
    due = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)
    clock.set(due - timedelta(seconds=1))
    await scheduler(reminders).run_due()
    assert outbox.messages == []
    clock.set(due)
    await scheduler(reminders).run_due()
    assert outbox.texts() == ["⏰ Reminder for @Alice: stand-up"]
    message = outbox.messages[0]
    assert message.mentions == ("u-alice",)
    assert message.chat_id == "chat-1"
    assert message.idempotency_key == f"{reminder.id}:2026-11-22T08:00:00+00:00"
    assert outcomes(await deliveries(reminders, reminder)) == [(due, "sent")]
    # Running again at the same moment finds nothing: the occurrence was claimed.
    await scheduler(reminders).run_due()
    assert len(outbox.messages) == 1
    (stored,), _ = await reminders.list_for_chat("chat-1")
    assert stored.next_fire_at == due + timedelta(days=1)


async def test_private_reminder_does_not_mention(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    await make(reminders, clock, "daily", time(9, 0), chat_type="private", content="tea")
    clock.set(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))
    await scheduler(reminders).run_due()
    assert outbox.texts() == ["⏰ Reminder: tea"]
    assert outbox.messages[0].mentions == ()


async def test_once_reminder_fires_once_and_is_done(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    ctx = chat_ctx(reminders, clock)
    await call("reminder_set", ctx, type="once", in_minutes=90, content="call Bob")
    clock.advance(timedelta(minutes=90))
    await scheduler(reminders).run_due()
    clock.advance(timedelta(days=2))
    await scheduler(reminders).run_due()
    assert outbox.texts() == ["⏰ Reminder for @Alice: call Bob"]
    assert await reminders.list_for_chat("chat-1") == ([], 0)


async def test_backlog_collapses_to_one_late_delivery(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    reminder = await make(reminders, clock, "daily", time(9, 0))
    # Down from before Sunday's 09:00 until Wednesday 09:20 (daily grace: 30 min).
    clock.set(datetime(2026, 11, 25, 8, 20, tzinfo=UTC))
    await scheduler(reminders).run_due()
    assert outbox.texts() == [
        "⏰ Reminder for @Alice: stand-up\n(scheduled 09:00, delivered 09:20 after downtime)"
    ]
    assert outcomes(await deliveries(reminders, reminder)) == [
        (datetime(2026, 11, 22, 8, 0, tzinfo=UTC), "skipped_missed"),
        (datetime(2026, 11, 23, 8, 0, tzinfo=UTC), "skipped_missed"),
        (datetime(2026, 11, 24, 8, 0, tzinfo=UTC), "skipped_missed"),
        (datetime(2026, 11, 25, 8, 0, tzinfo=UTC), "sent_late"),
    ]


@pytest.mark.parametrize(
    ("kind", "rule", "late", "outcome"),
    [
        (
            "once",
            {"on_date": datetime(2026, 11, 22).date()},
            timedelta(hours=5, minutes=59),
            "sent_late",
        ),
        (
            "once",
            {"on_date": datetime(2026, 11, 22).date()},
            timedelta(hours=6, minutes=1),
            "skipped_missed",
        ),
        ("daily", {}, timedelta(minutes=29), "sent_late"),
        ("daily", {}, timedelta(minutes=31), "skipped_missed"),
        ("weekly", {"weekday": 6}, timedelta(hours=1, minutes=59), "sent_late"),
        ("weekly", {"weekday": 6}, timedelta(hours=2, minutes=1), "skipped_missed"),
        # Monday 23 Nov is the first weekday after the clock's Saturday.
        ("weekdays", {}, timedelta(minutes=29), "sent_late"),
        ("weekdays", {}, timedelta(minutes=31), "skipped_missed"),
        ("monthly", {"day": 22}, timedelta(hours=5, minutes=59), "sent_late"),
        ("monthly", {"day": 22}, timedelta(hours=6, minutes=1), "skipped_missed"),
        ("daily", {}, timedelta(seconds=30), "sent"),
    ],
)
async def test_grace_windows(
    reminders: ReminderService,
    clock: FakeClock,
    outbox: Outbox,
    kind: str,
    rule: dict[str, Any],
    late: timedelta,
    outcome: str,
) -> None:
    reminder = await make(reminders, clock, kind, time(9, 0), **rule)
    due = reminder.next_fire_at
    first_weekday = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)
    assert due is not None
    assert due == (first_weekday if kind == "weekdays" else first_weekday - timedelta(days=1))
    clock.set(due + late)
    await scheduler(reminders).run_due()
    assert outcomes(await deliveries(reminders, reminder)) == [(due, outcome)]
    assert len(outbox.messages) == (0 if outcome == "skipped_missed" else 1)
    if outcome == "sent_late":
        assert "after downtime" in outbox.texts()[0]


async def test_failed_send_is_retried_then_recorded(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    reminder = await make(reminders, clock, "daily", time(9, 0))
    clock.set(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))
    outbox.failures_left = 2
    await scheduler(reminders).run_due()
    assert outbox.attempts == 3
    (row,) = await deliveries(reminders, reminder)
    assert (row.outcome, row.attempts) == ("sent", 3)
    assert row.last_error == "the platform answered 502"


async def test_send_that_keeps_failing_is_recorded_as_failed(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox, caplog: Any
) -> None:
    reminder = await make(reminders, clock, "daily", time(9, 0))
    clock.set(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))
    outbox.failures_left = 10
    await scheduler(reminders).run_due()
    (row,) = await deliveries(reminders, reminder)
    assert (row.outcome, row.attempts) == ("failed", FAST_POLICY.send_attempts)
    assert "failed after 3 attempts" in caplog.text
    # The reminder itself carries on with its next occurrence.
    (stored,), _ = await reminders.list_for_chat("chat-1")
    assert stored.next_fire_at == datetime(2026, 11, 23, 8, 0, tzinfo=UTC)


async def test_wake_for_a_deleted_reminder_does_nothing(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    reminder = await make(reminders, clock, "daily", time(9, 0))
    await reminders.delete("chat-1", "1", Requester("u-alice"))
    clock.set(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))
    await scheduler(reminders).run_due()
    assert outbox.messages == []
    assert await deliveries(reminders, reminder) == []


async def test_wake_at_the_old_time_of_an_edited_reminder_does_nothing(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    await make(reminders, clock, "daily", time(9, 0))
    await reminders.set_timezone("chat-1", "group", "America/New_York")
    clock.set(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))  # 09:00 Berlin, the old time
    await scheduler(reminders).run_due()
    assert outbox.messages == []
    clock.set(datetime(2026, 11, 21, 14, 0, tzinfo=UTC) + timedelta(days=1))  # 09:00 NY
    await scheduler(reminders).run_due()
    assert len(outbox.messages) == 1


async def test_two_dispatchers_on_one_database_never_double_send(
    reminders: ReminderService, database_url: str, clock: FakeClock, outbox: Outbox
) -> None:
    for n in range(60):
        await make(reminders, clock, "daily", time(9, 0), content=f"r{n}")
    rival = ReminderScheduler(
        reminders.database, outbox, compose=reminder_message, policy=FAST_POLICY, clock=clock
    )
    clock.set(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))
    await asyncio.gather(scheduler(reminders).run_due(), rival.run_due(), rival.run_due())
    keys = [message.idempotency_key for message in outbox.messages]
    assert len(keys) == 60
    assert len(set(keys)) == 60


async def test_a_delivered_occurrence_is_not_sent_again_when_the_row_is_rewound(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    """A restored backup or a hand edit moves next_fire_at back: the deliveries key holds."""
    reminder = await make(reminders, clock, "daily", time(9, 0))
    due = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)
    clock.set(due)
    await scheduler(reminders).run_due()

    def rewind(session: Session) -> None:
        query = update(Reminder).where(Reminder.id == reminder.id)
        session.execute(query.values(next_fire_at=due))

    await reminders.database.write(rewind)
    clock.advance(timedelta(minutes=1))
    await scheduler(reminders).run_due()
    assert len(outbox.messages) == 1
    assert outcomes(await deliveries(reminders, reminder)) == [(due, "sent")]
    (stored,), _ = await reminders.list_for_chat("chat-1")
    assert stored.next_fire_at == due + timedelta(days=1)


TAKEOVER_POLICY = DeliveryPolicy(
    lease=timedelta(minutes=2), retry_base=timedelta(milliseconds=5), send_attempts=2
)


async def claim_and_die(service: ReminderService, clock: FakeClock) -> list[str | None]:
    """A dispatcher (on TAKEOVER_POLICY) claims what is due, starts sending and dies
    mid-send, as under kill -9: its deliveries stay pending under their lease. Returns
    the idempotency keys of the sends it began."""
    hanging = asyncio.Event()
    keys: list[str | None] = []

    async def dies_mid_send(message: OutgoingMessage) -> None:
        keys.append(message.idempotency_key)
        hanging.set()
        await asyncio.Event().wait()

    dead = ReminderScheduler(
        service.database,
        dies_mid_send,
        compose=reminder_message,
        policy=TAKEOVER_POLICY,
        clock=clock,
    )
    claiming = asyncio.create_task(dead.run_due())
    await hanging.wait()
    claiming.cancel()
    return keys


async def test_stale_pending_delivery_is_resumed_after_its_lease(
    database_url: str, clock: FakeClock, outbox: Outbox
) -> None:
    """A dispatcher that claimed and then died: the next one resumes after the lease."""
    policy = TAKEOVER_POLICY
    async with ReminderService.open(database_url, policy=policy, clock=clock) as service:
        reminder = await make(service, clock, "daily", time(9, 0))
        clock.set(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))
        first_keys = await claim_and_die(service, clock)
        (row,) = await deliveries(service, reminder)
        assert row.outcome == "pending"

        survivor = ReminderScheduler(
            service.database, outbox, compose=reminder_message, policy=policy, clock=clock
        )
        clock.advance(timedelta(minutes=1))
        await survivor.run_due()
        assert outbox.messages == []  # the lease still holds
        clock.advance(timedelta(minutes=2))
        stats = await survivor.run_due()
        assert stats.reclaimed == 1
        # The resumed send carries the same idempotency key, so a receiver can drop it.
        assert outbox.messages[0].idempotency_key == first_keys[0] is not None
        assert "after downtime" in outbox.texts()[0]
        (row,) = await deliveries(service, reminder)
        assert row.outcome == "sent_late"


async def test_send_errors_never_put_secrets_in_logs(
    database_url: str, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    async def leaky(message: Any) -> None:
        raise RuntimeError("POST https://api.telegram.org/bot123:SECRET-TOKEN/sendMessage")

    async with ReminderService.open(database_url, policy=FAST_POLICY, clock=clock) as service:
        reminder = await make(service, clock, "daily", time(9, 0))
        dispatcher = ReminderScheduler(
            service.database, leaky, compose=reminder_message, policy=FAST_POLICY, clock=clock
        )
        clock.set(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))
        await dispatcher.run_due()
        (row,) = await deliveries(service, reminder)
    assert (row.outcome, row.last_error) == ("failed", "RuntimeError")
    assert "RuntimeError" in caplog.text
    assert "SECRET-TOKEN" not in caplog.text


class FailsOnce:
    """A sender whose first attempt runs `meanwhile` (a user's act) and then fails: the
    act is committed before the retry looks, so no sleep length can make a test racy.
    Later attempts succeed, into `sent`."""

    def __init__(self, meanwhile: Callable[[], Awaitable[None]]) -> None:
        self.meanwhile = meanwhile
        self.failures = 0
        self.sent: list[OutgoingMessage] = []

    async def __call__(self, message: OutgoingMessage) -> None:
        if self.failures == 0:
            self.failures += 1
            await self.meanwhile()
            raise SendError("502")
        self.sent.append(message)


async def test_deleting_during_a_retry_cancels_the_delivery(
    database_url: str, clock: FakeClock
) -> None:
    policy = DeliveryPolicy(retry_base=timedelta(milliseconds=300), send_attempts=3)
    async with ReminderService.open(database_url, policy=policy, clock=clock) as service:

        async def delete() -> None:
            await service.delete("chat-1", "1", Requester("u-alice"))

        flaky = FailsOnce(delete)
        reminder = await make(service, clock, "daily", time(9, 0))
        dispatcher = ReminderScheduler(
            service.database, flaky, compose=reminder_message, policy=policy, clock=clock
        )
        clock.set(datetime(2026, 11, 22, 8, 0, tzinfo=UTC))
        await dispatcher.run_due()
        (row,) = await deliveries(service, reminder)
    assert flaky.failures == 1
    assert flaky.sent == []
    assert row.outcome == "cancelled"


async def test_changing_the_zone_keeps_an_occurrence_that_is_already_due(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    reminder = await make(reminders, clock, "daily", time(9, 0))
    due = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)
    clock.set(due + timedelta(milliseconds=300))  # due, not yet claimed
    await reminders.set_timezone("chat-1", "group", "America/New_York")
    await scheduler(reminders).run_due()
    assert outcomes(await deliveries(reminders, reminder)) == [(due, "sent")]
    (stored,), _ = await reminders.list_for_chat("chat-1")
    assert stored.next_fire_at == datetime(2026, 11, 22, 14, 0, tzinfo=UTC)  # 09:00 New York
