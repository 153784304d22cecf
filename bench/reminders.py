"""Reminder engine at scale, on SQLite and PostgreSQL.

Run: `make bench` (or `.venv/bin/python -m bench.reminders [--backend sqlite|postgresql]`).
Prints a table and writes bench/results/reminders.json.

For each backend: 100,000 active reminders across 1,000 chats are inserted, then a fresh
process starts the engine (migrations, timer rebuild) and measures
- startup until ready (from process spawn, and inside the process) and RSS when ready;
- `reminder_list` latency for one chat, through the tool path;
- 5,000 reminders due in the same second: lateness p50/p99/max and the longest
  event-loop stall while they are delivered;
- single reminders one at a time: lateness p50/p99/max.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from groupmate.bot.outbound import OutboundRouter
from groupmate.bot.press_buttons import compose_with_buttons
from groupmate.function_calls.handlers import builtin_tools
from groupmate.storage import (
    Database,
    NewReminder,
    OutgoingMessage,
    ReminderReader,
    ReminderService,
    Schedule,
    upgrade,
)
from groupmate.storage.models import Chat, Reminder

TOTAL = 100_000
CHATS = 1_000
BURST = 5_000
SINGLES = 100
RESULTS = Path(__file__).parent / "results"


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _rows(count: int, start: datetime, spread: timedelta, chats: int) -> list[dict[str, Any]]:
    rows = []
    for n in range(count):
        due = start + spread * (n / count)
        rows.append(
            {
                "id": uuid.uuid4().hex,
                "short_id": n // chats + 1,
                "chat_id": f"chat-{n % chats}",
                "chat_type": "group",
                "created_by": "u-1",
                "created_by_name": "Ann",
                "content": f"reminder {n}",
                "kind": "once",
                "local_time": due.time(),
                "local_date": due.date(),
                "weekday": None,
                "day": None,
                "timezone": "UTC",
                "status": "active",
                "next_fire_at": due,
                "version": 1,
                "created_at": start,
                "updated_at": start,
            }
        )
    return rows


def populate(url: str) -> None:
    """100k reminders spread over the next 30 days, 1,000 chats."""
    database = Database(url)
    upgrade(database)
    now = datetime.now(UTC)
    with database.write_session() as session:
        session.execute(
            insert(Chat),
            [
                {
                    "chat_id": f"chat-{n}",
                    "chat_type": "group",
                    "timezone": None,
                    "settings": {},
                    "last_short_id": TOTAL // CHATS + 1_000,
                    "created_at": now,
                    "updated_at": now,
                }
                for n in range(CHATS)
            ],
        )
    rows = _rows(TOTAL, now + timedelta(minutes=30), timedelta(days=30), CHATS)
    for start in range(0, TOTAL, 10_000):
        with database.write_session() as session:
            session.execute(insert(Reminder), rows[start : start + 10_000])
    if database.backend == "postgresql":
        # Autovacuum would do this after a bulk load; the benchmark should not wait for it.
        with database.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as c:
            c.exec_driver_sql("ANALYZE")
    database.close()


class _StallMonitor:
    def __init__(self, tick: float = 0.005) -> None:
        self.tick = tick
        self.longest = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(self.tick)
            self.longest = max(self.longest, loop.time() - before - self.tick)

    def start(self) -> None:
        self.longest = 0.0
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> float:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        return self.longest


async def measure(url: str, spawned_at: float) -> dict[str, Any]:
    from groupmate.function_calls import Deps, MessageContext

    received: dict[str, float] = {}
    arrived = asyncio.Event()

    async def sender(message: OutgoingMessage) -> None:
        assert message.occurrence is not None and message.idempotency_key is not None
        late = (datetime.now(UTC) - message.occurrence).total_seconds()
        received[message.idempotency_key] = late
        arrived.set()

    async def wait_for(count: int, within: float) -> None:
        async with asyncio.timeout(within):
            while len(received) < count:
                arrived.clear()
                await arrived.wait()

    # Routed as a bot with the outbound webhook routes them: the chats of no platform,
    # claimed under that reach (what each claim's filter costs is in the figures).
    router = OutboundRouter()
    router.register_others(sender)
    started = time.perf_counter()
    async with ReminderService.open(
        url, sender=router, compose=compose_with_buttons, reach=router.reach
    ) as service:
        figures: dict[str, Any] = {
            "ready_in_process_s": time.perf_counter() - started,
            "ready_from_spawn_s": time.time() - spawned_at,
            "rss_ready_mb": _rss_mb(),
        }
        scheduler = service.scheduler
        assert scheduler is not None

        tool = builtin_tools().get("reminder_list")
        ctx = MessageContext(
            "chat-7",
            "group",
            "u-1",
            deps=Deps({ReminderService: service, ReminderReader: ReminderReader(service)}),
        )
        latencies = []
        for _ in range(200):
            begin = time.perf_counter()
            result = await tool.invoke(ctx, tool.validate({}, ctx))
            latencies.append((time.perf_counter() - begin) * 1000)
        assert result.reply is not None and "chat" in result.reply
        figures["list_ms_p50"] = statistics.median(latencies)
        figures["list_ms_p99"] = _percentile(latencies, 0.99)

        # The burst: 5,000 reminders in 250 chats, all due in the same second.
        due = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=4)
        burst = _rows(BURST, due, timedelta(0), 250)
        for row in burst:
            row["chat_id"] = f"burst-{row['chat_id']}"
        await service.database.write(lambda s: s.execute(insert(Chat), _burst_chats(250)))
        await service.database.write(lambda s: s.execute(insert(Reminder), burst))
        await scheduler.refill()  # what the watchdog does for rows written elsewhere
        monitor = _StallMonitor()
        monitor.start()
        await wait_for(BURST, within=60)
        figures["burst_stall_ms"] = await monitor.stop() * 1000
        late = [seconds * 1000 for seconds in received.values()]
        figures["burst_delivered"] = len(received)
        figures["burst_late_ms_p50"] = statistics.median(late)
        figures["burst_late_ms_p99"] = _percentile(late, 0.99)
        figures["burst_late_ms_max"] = max(late)
        figures["rss_after_burst_mb"] = _rss_mb()

        received.clear()
        for n in range(SINGLES):
            due = datetime.now(UTC) + timedelta(milliseconds=300)
            schedule = Schedule.once_at(due, "UTC")
            new = NewReminder("chat-single", "group", "u-1", "Ann", f"s{n}", schedule, due)
            await service.create(new)
            await wait_for(n + 1, within=10)
        single = [seconds * 1000 for seconds in received.values()]
        figures["single_late_ms_p50"] = statistics.median(single)
        figures["single_late_ms_p99"] = _percentile(single, 0.99)
        figures["single_late_ms_max"] = max(single)
    return figures


def _burst_chats(count: int) -> list[dict[str, Any]]:
    now = datetime.now(UTC)
    return [
        {
            "chat_id": f"burst-chat-{n}",
            "chat_type": "group",
            "timezone": None,
            "settings": {},
            "last_short_id": 100,
            "created_at": now,
            "updated_at": now,
        }
        for n in range(count)
    ]


def run_backend(name: str, url: str) -> dict[str, Any]:
    print(f"[{name}] inserting {TOTAL:,} reminders across {CHATS:,} chats…", flush=True)
    began = time.perf_counter()
    populate(url)
    print(f"[{name}] inserted in {time.perf_counter() - began:.1f} s; measuring…", flush=True)
    spawned = time.time()
    child = subprocess.run(
        [sys.executable, "-m", "bench.reminders", "--measure", url, "--spawned", str(spawned)],
        capture_output=True,
        text=True,
        check=False,
    )
    if child.returncode != 0:
        raise RuntimeError(f"measurement failed:\n{child.stderr}")
    figures: dict[str, Any] = json.loads(child.stdout.strip().splitlines()[-1])
    return figures


ROWS = [
    ("startup until ready, from spawn (s)", "ready_from_spawn_s", "<= 5"),
    ("startup until ready, in process (s)", "ready_in_process_s", ""),
    ("RSS when ready (MB)", "rss_ready_mb", "<= 300"),
    ("RSS after the burst (MB)", "rss_after_burst_mb", ""),
    ("reminder_list p50 (ms)", "list_ms_p50", "<= 10"),
    ("reminder_list p99 (ms)", "list_ms_p99", ""),
    ("burst delivered (of 5,000)", "burst_delivered", "all"),
    ("burst lateness p50 (ms)", "burst_late_ms_p50", ""),
    ("burst lateness p99 (ms)", "burst_late_ms_p99", "<= 2000"),
    ("burst lateness max (ms)", "burst_late_ms_max", ""),
    ("longest event-loop stall in burst (ms)", "burst_stall_ms", "<= 100"),
    ("single reminder lateness p50 (ms)", "single_late_ms_p50", ""),
    ("single reminder lateness p99 (ms)", "single_late_ms_p99", "<= 50"),
    ("single reminder lateness max (ms)", "single_late_ms_max", ""),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--spawned", type=float, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.measure:
        print(json.dumps(asyncio.run(measure(options.measure, options.spawned))))
        return
    results: dict[str, dict[str, Any]] = {}
    with ExitStack() as stack:
        if options.backend in ("sqlite", "both"):
            folder = stack.enter_context(tempfile.TemporaryDirectory())
            results["sqlite"] = run_backend("sqlite", f"sqlite:///{folder}/bench.db")
        if options.backend in ("postgresql", "both"):
            from tests.postgres import create_database, postgres_server

            server = stack.enter_context(postgres_server())
            results["postgresql"] = run_backend("postgresql", create_database(server))
    backends = list(results)
    print(f"\n{'metric':<42}" + "".join(f"{b:>14}" for b in backends) + f"{'target':>10}")
    for label, key, target in ROWS:
        cells = "".join(f"{results[b][key]:>14.2f}" for b in backends)
        print(f"{label:<42}{cells}{target:>10}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "reminders.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
