"""Acknowledgements and "remind me too" in the store, on SQLite and PostgreSQL, on the
fake clock: an "until done" reminder repeats until its rule is met (asker, anyone, each)
and not a moment after, or stops at its cap; "remind me too" changes who the next
occurrence mentions, and is refused where it may not."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from groupmate.storage import (
    AckNotNeededError,
    MeTooError,
    NewReminder,
    ReminderPermissionError,
    ReminderService,
    ReminderStateError,
    ReminderView,
    RepeatTooOftenError,
    Schedule,
)
from groupmate.storage.changes import Requester
from groupmate.storage.models import Acknowledgement, PressRecord
from groupmate.storage.outgoing import Member
from groupmate.storage.recurrence import _count_end_of
from groupmate.storage.reminder_rows import Audience
from groupmate.storage.vocabulary import AckRule
from tests.conftest import FakeClock, Outbox
from tests.test_delivery import scheduler

TEN = timedelta(minutes=10)
ALICE = Requester("u-alice")
BOB = Requester("u-bob")
CAROL = Requester("u-carol")
START = datetime(2026, 11, 27, 8, 0, tzinfo=UTC)  # Friday 09:00 in Berlin


async def until_done(
    service: ReminderService,
    clock: FakeClock,
    ack: AckRule,
    *,
    people: tuple[Member, ...] = (),
    cap: int = 12,
    start: datetime = START,
) -> ReminderView:
    """Every 10 minutes from `start` (Berlin), at most `cap` times, until done."""
    local = start.astimezone(ZoneInfo("Europe/Berlin"))
    schedule = Schedule(
        "interval", local.time(), "Europe/Berlin", local.date(), every=TEN, count=cap
    )
    clock.set(start - timedelta(minutes=1))
    first = schedule.first_after(clock())
    assert first == start
    audience = Audience(people, creator=True)
    new = NewReminder(
        "chat-1", "group", "u-alice", "Alice", "take the pills", schedule, first, audience, ack=ack
    )
    return await service.create(new)


async def fire(service: ReminderService, clock: FakeClock, at: datetime) -> None:
    clock.set(at)
    await scheduler(service).run_due()


async def test_each_waits_for_everyone_named_then_ends_done_and_fires_no_more(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    reminder = await until_done(reminders, clock, "each", people=(Member("u-bob", "Bob"),))
    await fire(reminders, clock, START)
    bob = await reminders.acts.acknowledge("chat-1", BOB, "Bob", "button", reference="1")
    assert (bob.new, bob.complete, bob.ended) == (True, False, False)
    assert bob.acked == (Member("u-bob", "Bob"),)
    assert bob.waiting == (Member("u-alice", "Alice"),)
    # Not done yet: it repeats, and says who has and who hasn't.
    await fire(reminders, clock, START + TEN)
    assert len(outbox.messages) == 2
    assert outbox.messages[-1].text.endswith("Done: Bob · waiting for: Alice")
    # Bob again (a second tap, a reply after the button): nothing new.
    again = await reminders.acts.acknowledge("chat-1", BOB, "Bob", "reply", reference="1")
    assert (again.new, again.ended) == (False, False)
    # A done from someone it does not wait for is refused; nothing recorded.
    with pytest.raises(AckNotNeededError) as refused:
        await reminders.acts.acknowledge("chat-1", CAROL, "Carol", "button", reference="1")
    assert refused.value.waiting == ("Alice", "Bob")
    alice = await reminders.acts.acknowledge("chat-1", ALICE, "Alice", "command", reference="1")
    assert (alice.new, alice.complete, alice.ended) == (True, True, True)
    assert alice.waiting == ()
    stored = await reminders.get(reminder.id)
    assert (stored.status, stored.next_fire_at) == ("done", None)
    for step in range(2, 6):
        await fire(reminders, clock, START + step * TEN)
    assert len(outbox.messages) == 2


async def test_asker_alone_ends_it(reminders: ReminderService, clock: FakeClock) -> None:
    reminder = await until_done(reminders, clock, "asker", people=(Member("u-bob", "Bob"),))
    await fire(reminders, clock, START)
    with pytest.raises(AckNotNeededError) as refused:
        await reminders.acts.acknowledge("chat-1", BOB, "Bob", "button", reference="1")
    assert refused.value.waiting == ("Alice",)
    assert (await reminders.get(reminder.id)).status == "active"
    done = await reminders.acts.acknowledge("chat-1", ALICE, "Alice", "button", reference="1")
    assert done.ended and (await reminders.get(reminder.id)).status == "done"


async def test_anyone_in_the_chat_ends_it(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    reminder = await until_done(reminders, clock, "anyone")
    await fire(reminders, clock, START)
    await fire(reminders, clock, START + TEN)
    done = await reminders.acts.acknowledge("chat-1", CAROL, "Carol", "reaction")
    assert (done.ended, done.acked, done.occurrence) == (
        True,
        (Member("u-carol", "Carol"),),
        START + TEN,
    )
    assert (await reminders.get(reminder.id)).status == "done"
    await fire(reminders, clock, START + 2 * TEN)
    assert len(outbox.messages) == 2


async def test_without_done_it_stops_at_its_cap(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    reminder = await until_done(reminders, clock, "asker", cap=3)
    for step in range(6):
        await fire(reminders, clock, START + step * TEN)
    assert len(outbox.messages) == 3
    assert (await reminders.get(reminder.id)).status == "done"


async def test_across_the_spring_change_it_keeps_ten_minutes_and_ends_on_done(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    # Berlin, Sunday 29 March 2026: 02:00 becomes 03:00. From 01:40 every 10 minutes.
    start = datetime(2026, 3, 29, 0, 40, tzinfo=UTC)
    reminder = await until_done(reminders, clock, "asker", start=start)
    for step in range(3):  # 01:40, 01:50 CET, then 03:00 CEST: ten minutes apart
        await fire(reminders, clock, start + step * TEN)
    assert [m.occurrence for m in outbox.messages] == [start, start + TEN, start + 2 * TEN]
    await reminders.acts.acknowledge("chat-1", ALICE, "Alice", "button", reference="1")
    await fire(reminders, clock, start + 3 * TEN)
    assert len(outbox.messages) == 3
    assert (await reminders.get(reminder.id)).status == "done"


async def test_started_in_the_repeated_hour_of_the_autumn_change_it_fires_its_cap(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    # Berlin, Sunday 25 October 2026: 03:00 CEST becomes 02:00 CET, so 02:00-03:00 comes
    # twice. From the second 02:20 (CET, 01:20 UTC) every 10 minutes, at most 12 times:
    # the stored rule must keep which 02:20 it started at, or it counts from the first
    # (an hour earlier) and stops after six.
    start = datetime(2026, 10, 25, 1, 20, tzinfo=UTC)
    reminder = await until_done(reminders, clock, "asker", start=start)
    assert (await reminders.get(reminder.id)).next_fire_at == start
    _count_end_of.cache_clear()  # as after a restart: the rule is read back from its row
    for step in range(14):
        await fire(reminders, clock, start + step * TEN)
    assert [m.occurrence for m in outbox.messages] == [start + k * TEN for k in range(12)]
    assert (await reminders.get(reminder.id)).status == "done"


async def test_a_plain_reminder_records_done_per_occurrence_and_goes_on(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    schedule = Schedule("daily", time(9), "Europe/Berlin")
    clock.set(START - timedelta(minutes=1))
    audience = Audience((Member("u-bob", "Bob"),), creator=False)
    new = NewReminder("chat-1", "group", "u-alice", "Alice", "standup", schedule, START, audience)
    reminder = await reminders.create(new)
    await fire(reminders, clock, START)
    # Someone it is not for, who did not set it, may not say it is done.
    with pytest.raises(ReminderPermissionError):
        await reminders.acts.acknowledge("chat-1", CAROL, "Carol", "button", reference="1")
    done = await reminders.acts.acknowledge("chat-1", BOB, "Bob", "button", reference="1")
    assert (done.complete, done.ended, done.occurrence) == (True, False, START)
    await fire(reminders, clock, START + timedelta(days=1))
    assert len(outbox.messages) == 2  # the rule goes on
    nxt = await reminders.acts.acknowledge("chat-1", BOB, "Bob", "button", reference="1")
    assert (nxt.new, nxt.occurrence) == (True, START + timedelta(days=1))
    history = await reminders.acts.acks_of([reminder.id])
    assert [a.occurrence for a in history[reminder.id]] == [START, START + timedelta(days=1)]


async def test_a_forged_occurrence_is_refused(reminders: ReminderService, clock: FakeClock) -> None:
    await until_done(reminders, clock, "anyone")
    await fire(reminders, clock, START)
    with pytest.raises(ReminderStateError, match="not_delivered"):
        await reminders.acts.acknowledge(
            "chat-1", BOB, "Bob", "button", reference="1", occurrence=START + TEN
        )


def mentioned(outbox: Outbox) -> list[str]:
    return list(outbox.messages[-1].mentions)


async def test_me_too_mentions_from_the_next_occurrence_and_off_again(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    schedule = Schedule("daily", time(9), "Europe/Berlin")
    clock.set(START - timedelta(minutes=1))
    new = NewReminder("chat-1", "group", "u-alice", "Alice", "standup", schedule, START)
    await reminders.create(new)
    await fire(reminders, clock, START)
    assert mentioned(outbox) == ["u-alice"]
    added = await reminders.acts.me_too("chat-1", BOB, "Bob", None, rules_allow=True, reference="1")
    assert (added.on, added.changed) == (True, True)
    await fire(reminders, clock, START + timedelta(days=1))
    assert mentioned(outbox) == ["u-alice", "u-bob"]
    again = await reminders.acts.me_too("chat-1", BOB, "Bob", True, rules_allow=True, reference="1")
    assert again.changed is False
    off = await reminders.acts.me_too("chat-1", BOB, "Bob", None, rules_allow=True, reference="1")
    assert (off.on, off.changed) == (False, True)
    await fire(reminders, clock, START + timedelta(days=2))
    assert mentioned(outbox) == ["u-alice"]
    # The chat's rules, and the asker's switch, refuse it; the asker's own is no "too".
    for requester, rules, problem in ((BOB, False, "rules"), (ALICE, True, "own")):
        with pytest.raises(MeTooError) as refused:
            await reminders.acts.me_too(
                "chat-1", requester, "X", True, rules_allow=rules, reference="1"
            )
        assert refused.value.problem == problem
    await reminders.acts.allow_me_too("chat-1", "1", ALICE, allowed=False)
    with pytest.raises(MeTooError) as switched_off:
        await reminders.acts.me_too("chat-1", BOB, "Bob", True, rules_allow=True, reference="1")
    assert switched_off.value.problem == "off"
    # Only the asker (or an admin) has the switch.
    with pytest.raises(ReminderPermissionError):
        await reminders.acts.allow_me_too("chat-1", "1", BOB, allowed=True)


async def test_me_too_in_a_private_chat_is_refused(
    reminders: ReminderService, clock: FakeClock
) -> None:
    schedule = Schedule("daily", time(9), "Europe/Berlin")
    new = NewReminder("chat-1", "private", "u-alice", "Alice", "standup", schedule, START)
    await reminders.create(new)
    with pytest.raises(MeTooError) as refused:
        await reminders.acts.me_too(
            "chat-1", replace(ALICE, user_id="u-alice"), "A", True, rules_allow=True, reference="1"
        )
    assert refused.value.problem in ("private", "own")


async def test_a_press_id_is_taken_once(reminders: ReminderService) -> None:
    assert await reminders.acts.take_press("tg:cb:1", "chat-1") is None
    seen = await reminders.acts.take_press("tg:cb:1", "chat-1")
    assert seen is not None and seen.answer is None
    await reminders.acts.settle_press("tg:cb:1", True, "✅ Done")
    seen = await reminders.acts.take_press("tg:cb:1", "chat-1")
    assert seen is not None and (seen.ok, seen.answer) == (True, "✅ Done")
    # The same id from another chat: no replay of it, and never its answer.
    other = await reminders.acts.take_press("tg:cb:1", "chat-2")
    assert other is not None and (other.ok, other.answer) == (False, None)
    assert await reminders.acts.prune_presses(datetime.now(UTC) + timedelta(days=2)) == 1
    assert await reminders.acts.take_press("tg:cb:1", "chat-1") is None


async def test_deleting_a_chats_data_takes_its_dones_and_presses(
    reminders: ReminderService, clock: FakeClock
) -> None:
    await until_done(reminders, clock, "anyone")
    await fire(reminders, clock, START)
    await reminders.acts.acknowledge("chat-1", BOB, "Bob", "button", reference="1")
    await reminders.acts.take_press("tg:cb:1", "chat-1")
    await reminders.acts.take_press("tg:cb:2", "chat-2")
    await reminders.delete_chat_data("chat-1")

    def left(session: Session) -> tuple[int, list[str]]:
        acks = session.scalar(select(func.count()).select_from(Acknowledgement)) or 0
        return acks, list(session.scalars(select(PressRecord.press_id)))

    assert await reminders.database.read(left) == (0, ["tg:cb:2"])


async def test_a_cap_within_a_days_bound_is_stored_and_one_over_it_refused(
    reminders: ReminderService, clock: FakeClock
) -> None:
    # Every 10 minutes all day is 144 a day, over the default 48; with a cap of 12 (or
    # 48) it fires that many times in all, so it is taken; 49 is refused with the number.
    await until_done(reminders, clock, "asker", cap=48)
    with pytest.raises(RepeatTooOftenError) as refused:
        await until_done(reminders, clock, "asker", cap=49)
    assert (refused.value.per_day, refused.value.max_per_day) == (49, 48)
