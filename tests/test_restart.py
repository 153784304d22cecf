"""Real processes: SIGKILL the deliverer while reminders are due, and dispatchers racing."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from groupmate.storage import Database, NewReminder, Schedule
from groupmate.storage.deliveries import deliveries_of
from groupmate.storage.models import Delivery
from groupmate.storage.repository import create_reminder
from tests.conftest import Worker


def add_once(database: Database, chat: str, due: datetime, content: str) -> str:
    schedule = Schedule.once_at(due, "UTC")
    new = NewReminder(chat, "group", "u-1", "Ann", content, schedule, due)
    with database.write_session() as session:
        return create_reminder(session, new, datetime.now(UTC)).id


def add_overdue_daily(database: Database, chat: str, due: datetime) -> str:
    schedule = Schedule("daily", due.time(), "UTC")
    new = NewReminder(chat, "group", "u-1", "Ann", "daily", schedule, due)
    with database.write_session() as session:
        return create_reminder(session, new, datetime.now(UTC)).id


def sink_lines(sink: Path) -> list[dict[str, Any]]:
    if not sink.exists():
        return []
    # Complete lines only: a worker may be writing one right now.
    return [
        json.loads(line) for line in sink.read_text().splitlines(keepends=True) if line[-1:] == "\n"
    ]


def wait_until(condition: Callable[[], bool], within: float) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def pending_count(database: Database) -> int:
    with database.read_session() as session:
        query = select(func.count()).where(Delivery.outcome == "pending")
        return session.scalar(query) or 0


def settled(database: Database, ids: list[str]) -> bool:
    with database.read_session() as session:
        rows = deliveries_of(session, ids)
    return len({row.reminder_id for row in rows}) == len(ids) and all(
        row.outcome != "pending" for row in rows
    )


def test_sigkill_while_reminders_are_due_then_restart(
    database_url: str, tmp_path: Path, workers: list[Worker]
) -> None:
    sink = tmp_path / "sink.jsonl"
    database = Database(database_url)
    options: dict[str, float | int] = {"lease": 1.0, "watchdog": 0.3, "grace_once": 3600.0}
    # From the eleventh send on, the platform gets the message but never answers: the
    # kill lands with those deliveries claimed and in flight.
    workers.append(Worker(database_url, sink, {**options, "hang_after": 10}, name="first"))
    start = datetime.now(UTC)
    on_time = [
        add_once(database, "chat-a", start + timedelta(seconds=0.5 + n * 0.05), f"a{n}")
        for n in range(40)
    ]
    wait_until(lambda: sum(line["hung"] for line in sink_lines(sink)) >= 5, within=20)
    workers[0].kill()
    claimed_at_kill = pending_count(database)
    hung = {line["key"] for line in sink_lines(sink) if line["hung"]}
    assert claimed_at_kill >= len(hung) >= 5
    down = datetime.now(UTC)
    while_down = [
        add_once(database, "chat-b", down + timedelta(seconds=0.1 + n * 0.02), f"b{n}")
        for n in range(10)
    ]
    # Due long before this downtime: the daily grace window (30 min) has passed.
    missed = [
        add_overdue_daily(database, "chat-c", down - timedelta(hours=2, minutes=n))
        for n in range(5)
    ]
    # The next worker starts when everything is due; the hung sends' leases may still hold.
    last_due = down + timedelta(seconds=0.1 + 9 * 0.02)
    wait_until(lambda: datetime.now(UTC) > last_due, within=5)
    workers.append(Worker(database_url, sink, options, name="second"))
    wait_until(lambda: settled(database, on_time + while_down + missed), within=30)
    workers[1].stop()

    with database.read_session() as session:
        rows = deliveries_of(session, on_time + while_down + missed)
    database.close()
    per_reminder = Counter(row.reminder_id for row in rows)
    assert set(per_reminder.values()) == {1}, "one delivery row per occurrence"
    outcome = {row.reminder_id: row.outcome for row in rows}
    assert {outcome[r] for r in on_time} <= {"sent", "sent_late"}
    assert {outcome[r] for r in while_down + missed} <= {"sent", "sent_late", "skipped_missed"}
    assert [outcome[r] for r in missed] == ["skipped_missed"] * 5

    lines = sink_lines(sink)
    keys = Counter(line["key"] for line in lines)
    delivered = {row.reminder_id for row in rows if row.outcome.startswith("sent")}
    assert {key.split(":")[0] for key in keys} == delivered
    assert delivered == set(on_time + while_down)
    # At-least-once on the wire, exactly once per idempotency key: the sends in flight at
    # the kill are sent again by the next worker, with the same key; nothing else repeats.
    resent = {line["key"] for line in lines if line["worker"] == "second"} & hung
    assert resent == hung
    repeats = sum(count - 1 for count in keys.values())
    assert len(hung) <= repeats <= claimed_at_kill


def test_two_processes_racing_deliver_each_occurrence_once(
    pg_server: str, pg_template: str, tmp_path: Path, workers: list[Worker]
) -> None:
    from tests.postgres import create_database, drop_database

    url = create_database(pg_server, template=pg_template)
    database = Database(url)
    sink = tmp_path / "sink.jsonl"
    # Each worker's first send waits for the other's, so both claim a share of the batch.
    options: dict[str, float | int] = {"watchdog": 0.2, "batch": 50, "meet_rival": 30.0}
    workers.extend(Worker(url, sink, options, name=f"w{n}") for n in range(2))
    due = datetime.now(UTC) + timedelta(seconds=1.5)
    ids = [add_once(database, f"chat-{n % 7}", due, f"r{n}") for n in range(300)]
    wait_until(lambda: settled(database, ids), within=30)
    for worker in workers:
        worker.stop()
    with database.read_session() as session:
        rows = deliveries_of(session, ids)
    database.close()
    drop_database(pg_server, url)

    lines = sink_lines(sink)
    keys = Counter(line["key"] for line in lines)
    assert len(lines) == 300
    assert set(keys.values()) == {1}, "no occurrence was sent twice"
    assert len(rows) == 300
    assert {row.outcome for row in rows} == {"sent"}
    by_worker = Counter(line["worker"] for line in lines)
    assert set(by_worker) == {"w0", "w1"}, "both processes dispatched"
    assert sum(by_worker.values()) == 300
