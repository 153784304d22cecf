"""A reminder-delivery process for the restart and racing suites.

It runs the real storage stack (migrations, timers, dispatcher, watchdog) and delivers
into a JSON-lines file, which stands in for the chat platform:

    python -m tests.reminder_worker --url URL --sink FILE [--lease S] [--grace-once S]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
from datetime import UTC, datetime, timedelta

from storage import DEFAULT_GRACE, DeliveryPolicy, OutgoingMessage, ReminderService, Sender


def _sink(path: str, worker: str) -> Sender:
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    async def deliver(message: OutgoingMessage) -> None:
        line = {
            "key": message.idempotency_key,
            "chat": message.chat_id,
            "text": message.text,
            "worker": worker,
            "at": datetime.now(UTC).isoformat(),
        }
        # One write() per line on an O_APPEND file: whole lines even with two writers.
        os.write(descriptor, (json.dumps(line) + "\n").encode())

    return deliver


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
    sender = _sink(options.sink, options.name)
    async with ReminderService.open(options.url, sender=sender, policy=policy):
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
    asyncio.run(_main(parser.parse_args()))


if __name__ == "__main__":
    main()
