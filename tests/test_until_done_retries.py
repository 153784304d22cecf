"""Exactly once for "until done" reminders, on SQLite and PostgreSQL, on the fake clock:
an occurrence claimed just before people said done is not sent by a retry or by another
dispatcher taking it over (its delivery is recorded as cancelled); one that ended by
reaching its cap still has its last occurrence delivered, retries included."""

from __future__ import annotations

from datetime import timedelta

from groupmate.function_calls.handlers.reminder_words import reminder_message
from groupmate.storage import DeliveryPolicy, ReminderScheduler, ReminderService
from groupmate.storage.outgoing import Member
from tests.conftest import FakeClock, Outbox
from tests.test_delivery import TAKEOVER_POLICY, FailsOnce, claim_and_die, deliveries, scheduler
from tests.test_until_done_storage import ALICE, BOB, START, TEN, until_done

POLICY = DeliveryPolicy(retry_base=timedelta(milliseconds=20), send_attempts=3)


async def test_done_while_a_retry_is_pending_sends_nothing_and_records_it(
    database_url: str, clock: FakeClock
) -> None:
    async with ReminderService.open(database_url, policy=POLICY, clock=clock) as service:

        async def press_done() -> None:
            # Alice presses Done while the first attempt fails (a press can come before
            # the send's outcome is written).
            done = await service.acts.acknowledge(
                "chat-1", ALICE, "Alice", "button", reference="1", occurrence=START
            )
            assert done.ended

        flaky = FailsOnce(press_done)
        reminder = await until_done(service, clock, "asker")
        dispatcher = ReminderScheduler(
            service.database, flaky, compose=reminder_message, policy=POLICY, clock=clock
        )
        clock.set(START)
        await dispatcher.run_due()
        clock.set(START + TEN)
        await dispatcher.run_due()
        rows = await deliveries(service, reminder)
        stored = await service.get(reminder.id)
    assert flaky.failures == 1
    assert flaky.sent == []
    assert [(row.occurrence, row.outcome, row.attempts) for row in rows] == [
        (START, "cancelled", 1)
    ]
    assert (stored.status, stored.next_fire_at) == ("done", None)


async def test_done_after_a_dispatcher_died_mid_send_is_not_taken_over(
    database_url: str, clock: FakeClock, outbox: Outbox
) -> None:
    policy = TAKEOVER_POLICY
    async with ReminderService.open(database_url, policy=policy, clock=clock) as service:
        reminder = await until_done(service, clock, "each", people=(Member("u-bob", "Bob"),))
        clock.set(START)
        await claim_and_die(service, clock)
        for who, name in ((BOB, "Bob"), (ALICE, "Alice")):
            await service.acts.acknowledge(
                "chat-1", who, name, "button", reference="1", occurrence=START
            )
        survivor = ReminderScheduler(
            service.database, outbox, compose=reminder_message, policy=policy, clock=clock
        )
        clock.advance(timedelta(minutes=3))
        stats = await survivor.run_due()
        rows = await deliveries(service, reminder)
    assert stats.reclaimed == 0
    assert outbox.messages == []
    assert [(row.occurrence, row.outcome) for row in rows] == [(START, "cancelled")]


async def test_the_capped_last_occurrence_is_still_retried_and_delivered(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    """It ends by its cap at its last claim, with Bob done and Alice not: the rule is not
    met, so the failed first send is retried and goes out, saying whom it waits for."""
    reminder = await until_done(reminders, clock, "each", people=(Member("u-bob", "Bob"),), cap=2)
    clock.set(START)
    await scheduler(reminders).run_due()
    await reminders.acts.acknowledge(
        "chat-1", BOB, "Bob", "button", reference="1", occurrence=START
    )
    outbox.failures_left = 1
    clock.set(START + TEN)
    await scheduler(reminders).run_due()
    rows = await deliveries(reminders, reminder)
    assert [(row.occurrence, row.outcome, row.attempts) for row in rows] == [
        (START, "sent", 1),
        (START + TEN, "sent", 2),
    ]
    assert len(outbox.messages) == 2
    assert outbox.messages[-1].text.endswith("Done: Bob · waiting for: Alice")
    assert (await reminders.get(reminder.id)).status == "done"
