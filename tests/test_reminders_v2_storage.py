"""Reminders v2 in storage: snoozes across a SIGKILL, edits racing a firing, and every v2
operation of the service on SQLite and PostgreSQL.

Real parts only: real database files and servers, the real scheduler and its claim
path, real worker processes. Deliveries are read back from the deliveries table.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Awaitable, Iterator
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from sqlalchemy import Row, text
from sqlalchemy.orm import Session

from groupmate.function_calls.handlers.reminder_words import reminder_message
from groupmate.storage import (
    Database,
    Kind,
    Member,
    NewReminder,
    ReminderChangedError,
    ReminderNotFoundError,
    ReminderPermissionError,
    ReminderService,
    ReminderStateError,
    ReminderView,
    Schedule,
    SnoozeTargetError,
)
from groupmate.storage.changes import ReminderChange, Requester
from groupmate.storage.deliveries import deliveries_of
from groupmate.storage.reminder_rows import Audience
from groupmate.storage.repository import create_reminder, get_reminder
from groupmate.storage.scheduler import DispatchStats
from tests.conftest import FAST_POLICY, FakeClock, Outbox, Worker, eventually
from tests.test_delivery import deliveries, make, outcomes, scheduler
from tests.test_restart import sink_lines, wait_until

T = TypeVar("T")
ALICE = Requester("u-alice")
BOB = Requester("u-bob")
ADMIN = Requester("u-admin", is_admin=True)
DUE = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)  # the first 09:00 Berlin after the clock
_DAILY_9 = Schedule("daily", time(9, 0), "Europe/Berlin")


def _new(
    content: str, schedule: Schedule, first: datetime, audience: Audience | None = None
) -> NewReminder:
    """Alice's reminder in the group chat-1."""
    return NewReminder(
        "chat-1", "group", "u-alice", "Alice", content, schedule, first, audience or Audience()
    )


# --- 1. a snooze survives a SIGKILL of the deliverer -----------------------------------


def _snooze(url: str, chat: str, until: datetime) -> tuple[ReminderView, ReminderView]:
    """Snooze the reminder that just went off in `chat`, as the chat front end would."""

    async def run() -> tuple[ReminderView, ReminderView]:
        async with ReminderService.open(url, migrate=False) as service:
            return await service.snooze(chat, Requester("u-1"), until)

    return asyncio.run(run())


def _stored(database: Database, *ids: str) -> tuple[list[ReminderView], list[Row[Any]]]:
    """The reminders as stored, and their deliveries."""
    with database.read_session() as session:
        return [get_reminder(session, i) for i in ids], deliveries_of(session, ids)


def test_a_snooze_survives_a_sigkill_and_fires_once_at_its_time(
    database_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    sink = tmp_path / "sink.jsonl"
    database = Database(database_url)
    options: dict[str, float | int] = {"watchdog": 0.2, "lease": 1.0}
    workers.append(Worker(database_url, sink, options, name="first"))
    due = datetime.now(UTC) + timedelta(seconds=0.3)
    schedule = Schedule("daily", due.time(), "UTC")
    new = NewReminder("chat-s", "group", "u-1", "Ann", "stretch", schedule, due)
    with database.write_session() as session:
        root_id = create_reminder(session, new, datetime.now(UTC)).id
    wait_until(lambda: [d.outcome for d in _stored(database, root_id)[1]] == ["sent"], 10)

    until = datetime.now(UTC) + timedelta(seconds=2.5)
    root, snooze = _snooze(database_url, "chat-s", until)
    assert (root.id, snooze.snooze_of, snooze.next_fire_at) == (root_id, root_id, until)
    workers[0].kill()  # before the snooze is due; it had it on its timer
    assert datetime.now(UTC) < until
    workers.append(Worker(database_url, sink, options, name="second"))
    wait_until(lambda: _stored(database, snooze.id)[1] != [], 10)
    wait_until(lambda: _stored(database, snooze.id)[1][0].outcome != "pending", 5)
    workers[1].stop()

    (stored_root, stored_snooze), rows = _stored(database, root_id, snooze.id)
    database.close()
    assert [(row.reminder_id, row.occurrence, row.outcome) for row in rows] == sorted(
        [(root_id, due, "sent"), (snooze.id, until, "sent")]
    )
    # The root keeps its rule and its next time; the snooze is done.
    assert (stored_root.status, stored_root.schedule) == ("active", schedule)
    assert stored_root.next_fire_at == due + timedelta(days=1)
    assert (stored_snooze.status, stored_snooze.next_fire_at) == ("done", None)
    lines = sink_lines(sink)
    keys = Counter(line["key"] for line in lines)
    assert keys == {f"{root_id}:{due.isoformat()}": 1, f"{snooze.id}:{until.isoformat()}": 1}
    (fired,) = [line for line in lines if line["key"].startswith(snooze.id)]
    assert fired["worker"] == "second"
    assert datetime.fromisoformat(fired["at"]) >= until, "a snooze never fires early"
    assert fired["text"] == "⏰ Reminder for @Ann: stretch"


# --- 2. an edit racing a firing: one delivery, at the old time or at the new ----------


def _rule(kind: str, at: datetime) -> Schedule:
    if kind == "once":
        return Schedule.once_at(at, "UTC")
    return Schedule("daily", at.time(), "UTC")


@pytest.fixture
def editor(database_url: str, clock: FakeClock) -> Iterator[ReminderService]:
    """Another process's view of the store (the chat front end): its own engine, no timers."""
    database = Database(database_url)
    yield ReminderService(database, clock=clock)
    database.close()


async def _add(editor: ReminderService, kind: str, due: datetime, content: str) -> ReminderView:
    return await editor.create(_new(content, _rule(kind, due), due))


async def _move(
    editor: ReminderService, reminder: ReminderView, to: datetime, version: int
) -> ReminderView:
    change = ReminderChange(schedule=_rule(reminder.schedule.kind, to), first_fire_at=to)
    reference = str(reminder.short_id)
    return await editor.update("chat-1", reference, ALICE, change, expected_version=version)


async def _one_delivery(
    service: ReminderService,
    clock: FakeClock,
    reminder: ReminderView,
    due: datetime,
    later: datetime,
) -> str:
    """After the race: which time the reminder went out at, checked to be the only one."""
    clock.set(later)
    await scheduler(service).run_due()
    rows = outcomes(await deliveries(service, reminder))
    assert rows in ([(due, "sent")], [(later, "sent")]), rows
    stored = await service.get(reminder.id)
    if rows[0][0] == due:
        # The edit was refused: the rule is as it was, moved on past the firing.
        assert stored.schedule == reminder.schedule
        following = due + timedelta(days=1) if reminder.schedule.recurring else None
        assert stored.next_fire_at == following
        return "old"
    assert stored.schedule == _rule(reminder.schedule.kind, later)
    return "new"


@pytest.mark.parametrize("kind", ["daily", "once"])
async def test_a_firing_between_an_edits_read_and_write_refuses_the_edit(
    reminders: ReminderService,
    editor: ReminderService,
    clock: FakeClock,
    outbox: Outbox,
    kind: str,
) -> None:
    """The edit tools read the reminder, work out the new time, then write: the firing
    lands in between. The edit is refused; the reminder went out once, at its old time."""
    reminder = await _add(editor, kind, DUE, "ship it")
    seen = await editor.find("chat-1", "1", ALICE)
    clock.set(DUE)
    await scheduler(reminders).run_due()
    refused = ReminderChangedError if kind == "daily" else ReminderNotFoundError
    with pytest.raises(refused):
        await _move(editor, reminder, DUE + timedelta(minutes=10), seen.version)
    assert (
        await _one_delivery(reminders, clock, reminder, DUE, DUE + timedelta(minutes=10)) == "old"
    )
    assert len(outbox.messages) == 1


@pytest.mark.parametrize("kind", ["daily", "once"])
async def test_an_edit_written_before_the_firing_moves_it(
    reminders: ReminderService, editor: ReminderService, clock: FakeClock, kind: str
) -> None:
    reminder = await _add(editor, kind, DUE, "ship it")
    await _move(editor, reminder, DUE + timedelta(minutes=10), reminder.version)
    clock.set(DUE)
    await scheduler(reminders).run_due()
    assert await deliveries(reminders, reminder) == []
    assert (
        await _one_delivery(reminders, clock, reminder, DUE, DUE + timedelta(minutes=10)) == "new"
    )


async def test_edits_racing_firings_deliver_each_reminder_once(
    reminders: ReminderService, editor: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    """Edit and dispatcher really concurrent, on two engines: either order, never both."""
    rounds = 24
    won: Counter[str] = Counter()
    jitter = random.Random(7)
    for n in range(rounds):
        due = DUE + n * timedelta(minutes=30)  # all within a day: no daily fires twice
        later = due + timedelta(minutes=10)
        clock.set(due - timedelta(minutes=1))
        reminder = await _add(editor, "daily" if n % 2 else "once", due, f"r{n}")
        seen = await editor.find("chat-1", str(reminder.short_id), ALICE)
        clock.set(due)

        pauses = [jitter.uniform(0, 0.004) for _ in range(2)]
        fired, edited = await asyncio.gather(
            _after(pauses[0], scheduler(reminders).run_due()),
            _after(pauses[1], _move(editor, reminder, later, seen.version)),
            return_exceptions=True,
        )
        assert isinstance(fired, DispatchStats)
        moved = isinstance(edited, ReminderView)
        assert moved or isinstance(edited, ReminderChangedError | ReminderNotFoundError), edited
        path = await _one_delivery(reminders, clock, reminder, due, later)
        assert moved == (path == "new")
        won[path] += 1
    assert len(outbox.messages) == rounds
    assert won["old"] and won["new"], f"only one order happened: {won}"


async def _after(pause: float, work: Awaitable[T]) -> T:
    await asyncio.sleep(pause)
    return await work


async def test_an_edit_waiting_on_a_claim_in_progress_is_refused(
    pg_server: str, pg_template: str, clock: FakeClock, outbox: Outbox
) -> None:
    """PostgreSQL: the edit arrives while the dispatcher's claim holds the row, between
    its read and its commit. It waits for the row lock, then finds the new version."""
    from tests.postgres import create_database, drop_database

    url = create_database(pg_server, template=pg_template)
    blocker = Database(url)
    try:
        async with ReminderService.open(
            url,
            sender=outbox,
            compose=reminder_message,
            policy=FAST_POLICY,
            clock=clock,
            migrate=False,
        ) as service:
            reminder = await _add(service, "daily", DUE, "ship it")
            seen = await service.find("chat-1", "1", ALICE)
            clock.set(DUE)
            # An uncommitted row with the occurrence's key: the claim's insert of its
            # deliveries row waits on it, with the reminder row locked and moved on. No
            # foreign key check here: its share lock on the reminder would make the claim
            # skip the row.
            with blocker.engine.connect() as hold:  # closed, it lets the claim go on
                hold.begin()
                hold.execute(text("SET LOCAL session_replication_role = replica"))
                hold.execute(
                    text(
                        "INSERT INTO deliveries (reminder_id, occurrence, outcome, attempts,"
                        " late, claimed_at) VALUES (:id, :at, 'pending', 0, false, :at)"
                    ),
                    {"id": reminder.id, "at": DUE},
                )
                firing = asyncio.create_task(scheduler(service).run_due())
                await _waiting(blocker, "%INSERT INTO deliveries%")
                editing = asyncio.create_task(
                    _move(service, reminder, DUE + timedelta(minutes=10), seen.version)
                )
                await _waiting(blocker, "SELECT reminders.%FOR UPDATE")
                assert not editing.done()
                hold.rollback()
            await firing
            with pytest.raises(ReminderChangedError):
                await editing
            later = DUE + timedelta(minutes=10)
            assert await _one_delivery(service, clock, reminder, DUE, later) == "old"
    finally:
        blocker.close()
        drop_database(pg_server, url)


async def _waiting(database: Database, query: str) -> None:
    """Until a backend runs `query` (a LIKE pattern) and waits for a lock."""

    def waiting(session: Session) -> bool:
        found = session.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                " AND query LIKE :query"
            ),
            {"query": query},
        )
        return bool(found)

    await eventually(lambda: database.read(waiting), within=5, every=0.02)


# --- 3. the v2 service operations, on SQLite and PostgreSQL --------------------------


async def test_edit_changes_content_rule_and_audience_once_per_version(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    reminder = await make(reminders, clock, "daily", time(9, 0), content="stand-up")
    ten = Schedule("daily", time(10, 0), "Europe/Berlin")
    bob = Audience(mentions=(Member("u-bob", "Bob"),), creator=False)
    change = ReminderChange("retro", ten, DUE + timedelta(hours=1), bob)
    edited = await reminders.update("chat-1", "#1", ALICE, change, expected_version=1)
    assert (edited.content, edited.schedule, edited.audience) == ("retro", ten, bob)
    assert (edited.next_fire_at, edited.version) == (DUE + timedelta(hours=1), 2)
    assert await reminders.get(reminder.id) == edited
    with pytest.raises(ReminderChangedError):
        await reminders.update("chat-1", "1", ALICE, ReminderChange("x"), expected_version=1)
    with pytest.raises(ReminderPermissionError):
        await reminders.update("chat-1", "1", BOB, ReminderChange("x"))
    by_admin = await reminders.update("chat-1", reminder.id, ADMIN, ReminderChange("retro!"))
    assert (by_admin.content, by_admin.version) == ("retro!", 3)
    clock.set(DUE)  # the old time: nothing
    await scheduler(reminders).run_due()
    clock.set(DUE + timedelta(hours=1))
    await scheduler(reminders).run_due()
    assert outbox.texts() == ["⏰ Reminder for @Bob (set by @Alice): retro!"]
    assert outbox.messages[0].mentions == ("u-alice", "u-bob")  # who set it, always


async def test_pause_and_resume(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    reminder = await make(reminders, clock, "weekly", time(9, 0), weekday=6)
    paused = await reminders.set_paused("chat-1", "1", ALICE, paused=True)
    assert (paused.status, paused.next_fire_at) == ("paused", None)
    # An edit keeps it paused, without a next time.
    ten = Schedule("weekly", time(10, 0), "Europe/Berlin", weekday=6)
    edited = await reminders.update(
        "chat-1", "1", ALICE, ReminderChange(schedule=ten, first_fire_at=DUE)
    )
    assert (edited.status, edited.next_fire_at, edited.schedule) == ("paused", None, ten)
    clock.set(DUE + timedelta(hours=1))  # its time, paused
    await scheduler(reminders).run_due()
    assert outbox.messages == []
    assert await deliveries(reminders, reminder) == []
    with pytest.raises(ReminderPermissionError):
        await reminders.set_paused("chat-1", "1", BOB, paused=False)
    resumed = await reminders.set_paused("chat-1", "1", ALICE, paused=False)
    following = DUE + timedelta(days=7, hours=1)
    assert (resumed.status, resumed.next_fire_at) == ("active", following)
    clock.set(following)
    await scheduler(reminders).run_due()
    assert outcomes(await deliveries(reminders, reminder)) == [(following, "sent")]
    tomorrow = clock() + timedelta(days=1)
    once = await reminders.create(_new("x", Schedule.once_at(tomorrow, "UTC"), tomorrow))
    with pytest.raises(ReminderStateError):
        await reminders.set_paused("chat-1", str(once.short_id), ALICE, paused=True)


async def test_snooze_fires_again_once_and_keeps_the_rule(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    bob = Audience(mentions=(Member("u-bob", "Bob"),))
    root = await reminders.create(_new("pills", _DAILY_9, DUE, bob))
    with pytest.raises(ReminderStateError):  # not gone off yet
        await reminders.snooze("chat-1", ALICE, DUE + timedelta(minutes=5), reference="1")
    clock.set(DUE)
    await scheduler(reminders).run_due()
    clock.advance(timedelta(minutes=1))
    # The one reminder that just went off; Bob, mentioned in it, may snooze it.
    first, snooze = await reminders.snooze("chat-1", BOB, DUE + timedelta(minutes=5))
    assert (first.id, snooze.snooze_of, snooze.audience) == (root.id, root.id, bob)
    # Snoozing again (by replying to the message) moves the pending snooze.
    _, moved = await reminders.snooze(
        "chat-1", ALICE, DUE + timedelta(minutes=10), message_id="msg-1"
    )
    assert (moved.id, moved.next_fire_at) == (snooze.id, DUE + timedelta(minutes=10))
    with pytest.raises(ReminderNotFoundError):
        await reminders.snooze("chat-1", ALICE, DUE, message_id="msg-404")
    with pytest.raises(ReminderPermissionError):
        await reminders.snooze("chat-1", Requester("u-carol"), DUE, reference="1")
    for minutes in (5, 10, 20):  # 5: the first snooze time, moved away
        clock.set(DUE + timedelta(minutes=minutes))
        await scheduler(reminders).run_due()
    assert outbox.texts() == ["⏰ Reminder for @Alice, @Bob: pills"] * 2
    assert outcomes(await deliveries(reminders, moved)) == [(DUE + timedelta(minutes=10), "sent")]
    stored = await reminders.get(root.id)
    assert (stored.schedule, stored.next_fire_at) == (root.schedule, DUE + timedelta(days=1))
    assert (await reminders.get(snooze.id)).status == "done"
    history = await reminders.history("chat-1")
    assert [(e.short_id, e.outcome) for e in history] == [(1, "sent"), (1, "snoozed"), (1, "sent")]
    assert history[1].until == datetime(2026, 11, 22, 9, 10) and history[1].detail is None
    assert await reminders.history("chat-1", created_by="u-bob") == []


async def test_a_reply_to_a_message_that_could_be_several_reminders_asks_which(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    """Where the platform gives no message ids, two reminders with the same words share
    one; a reply to it names neither, so the snooze asks instead of picking."""
    first = await reminders.create(_new("stand up", _DAILY_9, DUE))
    second = await reminders.create(_new("stand up", _DAILY_9, DUE))
    outbox.same_id = "dt-stand-up"
    clock.set(DUE)
    await scheduler(reminders).run_due()
    with pytest.raises(SnoozeTargetError) as asked:
        await reminders.snooze(
            "chat-1", ALICE, DUE + timedelta(minutes=5), message_id="dt-stand-up"
        )
    assert asked.value.problem == "several_match"
    assert sorted(asked.value.labels) == sorted((first.label, second.label))
    assert [e.outcome for e in await reminders.history("chat-1")] == ["sent", "sent"]  # no snooze


async def test_a_snooze_that_went_off_can_be_snoozed_again(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    """Its message is the reminder going off again: a reply to it, or "snooze" alone, moves
    the reminder on once more (a snooze and its reminder are not two recent reminders)."""
    root = await reminders.create(_new("pills", _DAILY_9, DUE))
    clock.set(DUE)
    await scheduler(reminders).run_due()
    _, first = await reminders.snooze("chat-1", ALICE, DUE + timedelta(minutes=5))
    clock.set(DUE + timedelta(minutes=5))
    await scheduler(reminders).run_due()
    _, second = await reminders.snooze("chat-1", ALICE, DUE + timedelta(minutes=10))
    clock.set(DUE + timedelta(minutes=10))
    await scheduler(reminders).run_due()
    _, third = await reminders.snooze(
        "chat-1", ALICE, DUE + timedelta(minutes=15), message_id="msg-3"
    )
    clock.set(DUE + timedelta(minutes=15))
    await scheduler(reminders).run_due()
    assert [s.snooze_of for s in (first, second, third)] == [root.id] * 3
    assert len({first.id, second.id, third.id}) == 3
    assert len(outbox.messages) == 4
    history = await reminders.history("chat-1")
    assert [e.short_id for e in history] == [1] * 7  # 4 sent, 3 snoozed: all of #1
    # Another reminder went off too: "snooze" alone asks which.
    clock.advance(timedelta(minutes=1))
    tea = await reminders.create(_new("tea", Schedule.once_at(clock(), "UTC"), clock()))
    await scheduler(reminders).run_due()
    with pytest.raises(SnoozeTargetError) as unclear:
        await reminders.snooze("chat-1", ALICE, DUE + timedelta(hours=1))
    assert (unclear.value.problem, unclear.value.labels) == ("several_recent", (tea.label, "#1"))


async def test_a_one_time_reminder_can_be_snoozed_after_it_went_off(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    once = await reminders.create(_new("call Bob", Schedule.once_at(DUE, "UTC"), DUE))
    clock.set(DUE)
    await scheduler(reminders).run_due()
    assert (await reminders.get(once.id)).status == "done"
    ways: list[dict[str, Any]] = [{"reference": "#1"}, {"message_id": "msg-1"}, {}]
    for n, how in enumerate(ways, 1):
        root, snooze = await reminders.snooze(
            "chat-1", ALICE, DUE + timedelta(minutes=5 * n), **how
        )
        assert (root.id, snooze.snooze_of) == (once.id, once.id)
        assert snooze.next_fire_at == DUE + timedelta(minutes=5 * n)
    clock.set(DUE + timedelta(minutes=15))
    await scheduler(reminders).run_due()
    assert outbox.texts() == ["⏰ Reminder for @Alice: call Bob"] * 2
    assert outcomes(await deliveries(reminders, snooze)) == [(DUE + timedelta(minutes=15), "sent")]


async def test_remind_others_and_everyone_are_stored_and_read_back(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    others = Audience(mentions=(Member("u-bob", "Bob"), Member("u-carol", "Carol")), creator=False)
    everyone = Audience(everyone=True)
    for content, audience in (("slides", others), ("standup", everyone)):
        await reminders.create(_new(content, _DAILY_9, DUE, audience))
    listed, total = await reminders.list_for_chat("chat-1")
    assert total == 2
    assert [r.audience for r in listed] == [others, everyone]
    # Bob may snooze what is for him, not edit it.
    with pytest.raises(ReminderPermissionError):
        await reminders.update("chat-1", "1", BOB, ReminderChange("x"))
    clock.set(DUE)
    await scheduler(reminders).run_due()
    slides = "⏰ Reminder for @Bob, @Carol (set by @Alice): slides"
    standup = "⏰ Reminder for everyone (set by @Alice): standup"
    assert sorted(outbox.texts()) == [slides, standup]
    mentions = {m.text: m.mentions for m in outbox.messages}
    assert mentions[slides] == ("u-alice", "u-bob", "u-carol")
    # The names as the text shows them, for adapters that render real mentions.
    people = {m.text: m.people for m in outbox.messages}
    assert people[slides] == (
        Member("u-alice", "Alice"),
        Member("u-bob", "Bob"),
        Member("u-carol", "Carol"),
    )
    assert people[standup] == (Member("u-alice", "Alice"),)
    assert [m.everyone for m in outbox.messages if m.text == standup] == [True]
    _, snooze = await reminders.snooze("chat-1", BOB, DUE + timedelta(minutes=5), reference="1")
    assert snooze.audience == others


def _every(kind: Kind, interval: int, since: date, **rule: Any) -> Schedule:
    return Schedule(kind, time(9, 0), "Europe/Berlin", since, interval=interval, **rule)


@pytest.mark.parametrize(
    ("rule", "first", "then"),
    [
        (_every("daily", 3, DUE.date()), DUE, DUE + timedelta(days=3)),
        (_every("weekly", 2, DUE.date(), weekday=6), DUE, DUE + timedelta(days=14)),
        (
            _every("monthly", 2, date(2026, 11, 30), day=31),  # the month's last day
            datetime(2026, 11, 30, 8, 0, tzinfo=UTC),
            datetime(2027, 1, 31, 8, 0, tzinfo=UTC),
        ),
    ],
    ids=["every-3-days", "every-2-weeks", "every-2-months"],
)
async def test_interval_rules_are_stored_and_step_on(
    reminders: ReminderService,
    clock: FakeClock,
    outbox: Outbox,
    rule: Schedule,
    first: datetime,
    then: datetime,
) -> None:
    assert rule.first_after(clock()) == first
    reminder = await reminders.create(_new("water", rule, first))
    assert (await reminders.get(reminder.id)).schedule == rule
    clock.set(first)
    await scheduler(reminders).run_due()
    stored = await reminders.get(reminder.id)
    assert (stored.schedule, stored.next_fire_at) == (rule, then)
    clock.set(then - timedelta(seconds=1))
    await scheduler(reminders).run_due()
    clock.set(then)
    await scheduler(reminders).run_due()
    assert outcomes(await deliveries(reminders, reminder)) == [(first, "sent"), (then, "sent")]


async def test_delete_cancels_pending_snoozes(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox
) -> None:
    root = await make(reminders, clock, "daily", time(9, 0))
    clock.set(DUE)
    await scheduler(reminders).run_due()
    _, snooze = await reminders.snooze("chat-1", ALICE, DUE + timedelta(minutes=5))
    with pytest.raises(ReminderPermissionError):
        await reminders.delete("chat-1", "1", Requester("u-bob"))
    await reminders.delete("chat-1", "1", Requester("u-alice"))
    assert (await reminders.get(snooze.id)).status == "cancelled"
    assert (await reminders.get(root.id)).status == "cancelled"
    assert await reminders.list_for_chat("chat-1") == ([], 0)
    clock.set(DUE + timedelta(minutes=5))
    await scheduler(reminders).run_due()
    assert len(outbox.messages) == 1
    assert await deliveries(reminders, snooze) == []
