"""A reminder-delivery process for the restart and racing suites.

It runs the real storage stack (migrations, timers, dispatcher, watchdog) and delivers
into a JSON-lines file, which stands in for the chat platform:

    python -m tests.reminder_worker --url URL --sink FILE [--lease S] [--grace-once S]
        [--hang-after N] [--meet-rival S]

--hang-after N: after N sends, each send reaches the platform (its line is written, marked
"hung") and then never returns, as when the platform's answer is lost: a kill then lands
with those deliveries claimed and in flight.

--meet-rival S: the first send blocks the whole process, claim loop included, until
another worker's line is in the sink (at most S seconds), so that a rival process gets a
share of the due reminders instead of this one claiming them all before it wakes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import time
from datetime import UTC, datetime, timedelta

from groupmate.function_calls.handlers.reminder_words import reminder_message
from groupmate.storage import (
    DEFAULT_GRACE,
    DeliveryPolicy,
    OutgoingMessage,
    ReminderService,
    Sender,
)


def _sink(path: str, worker: str, hang_after: int | None, meet_rival: float) -> Sender:
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    sent = 0

    async def deliver(message: OutgoingMessage) -> None:
        nonlocal sent
        sent += 1
        hung = hang_after is not None and sent > hang_after
        line = {
            "key": message.idempotency_key,
            "chat": message.chat_id,
            "text": message.text,
            "worker": worker,
            "at": datetime.now(UTC).isoformat(),
            "hung": hung,
        }
        # One write() per line on an O_APPEND file: whole lines even with two writers.
        os.write(descriptor, (json.dumps(line) + "\n").encode())
        if sent == 1 and meet_rival:
            _wait_for_rival(path, worker, meet_rival)
        if hung:
            await asyncio.Event().wait()

    return deliver


def _wait_for_rival(path: str, worker: str, within: float) -> None:
    """Block (on purpose: the event loop too) until another worker has delivered."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with open(path, encoding="utf-8") as sink:
            # Complete lines only: the rival may be writing one right now.
            lines = [line for line in sink if line.endswith("\n")]
        if any(json.loads(line)["worker"] != worker for line in lines):
            return
        time.sleep(0.01)


async def _main(options: argparse.Namespace) -> None:
    policy = DeliveryPolicy(
        grace={**DEFAULT_GRACE, "once": timedelta(seconds=options.grace_once)},
        lease=timedelta(seconds=options.lease),
        watchdog_interval=timedelta(seconds=options.watchdog),
        claim_batch=options.batch,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    sender = _sink(options.sink, options.name, options.hang_after, options.meet_rival)
    async with ReminderService.open(
        options.url, sender=sender, compose=reminder_message, policy=policy
    ):
        print("ready", flush=True)
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--sink", required=True)
    parser.add_argument("--name", default="worker")
    parser.add_argument("--lease", type=float, default=120)
    parser.add_argument("--grace-once", type=float, default=6 * 3600)
    parser.add_argument("--watchdog", type=float, default=30)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--hang-after", type=int, default=None)
    parser.add_argument("--meet-rival", type=float, default=0.0)
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
