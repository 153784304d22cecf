"""What the one gate costs a message, before and after, in one run: a state-changing
command (`/remind`, audited) and a read (`/reminders`, not audited) through `Bot.handle`
into a real SQLite file, with

- "no audit": the invoker without its audit log and with no policy (as before the gate
  had them),
- "audit": the defaults (every write is audited; its row rides the message's commit),
- "audit + policy": the defaults and a tools policy of five rules with rate limits.

The three run in turns, round after round, so that the machine's drift touches each
alike. Run: `make bench` (or `.venv/bin/python -m bench.gate`). Prints a table and
writes bench/results/gate.json.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from groupmate.bot.app import Bot, settle_heap
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage

RESULTS = Path(__file__).parent / "results" / "gate.json"
NOW = datetime(2026, 11, 23, 14, 10, tzinfo=ZoneInfo("Europe/Berlin"))
ROUNDS = 5
PER_ROUND = 200
POLICY = {
    "reminder_delete": {"who": "creator_or_admin"},
    "web_search": {"per_user_per_hour": 1000},
    "time__*": {"who": "admins"},
    "effect:write": {"per_chat_per_hour": 100_000, "chats": {"deny": ["tg:-100*"]}},
    "effect:external": {"scope": "group"},
}
SETUPS = ("no audit", "audit", "audit + policy")
_ids = itertools.count()


def _message(chat: int, text: str) -> IncomingMessage:
    return IncomingMessage(
        chat_id=f"g{chat % 50}",
        chat_type="group",
        sender_id=f"u{chat % 7}",
        sender_name="U",
        text=text,
        message_id=f"m{next(_ids)}",
    )


async def _bot(setup: str, folder: str) -> Bot:
    limits = {"command_per_minute": 1e9, "command_burst": 10**9}
    data: dict[str, Any] = {
        "bot": {"timezone": "Europe/Berlin", "rate_limits": limits},
        "storage": {"url": f"sqlite:///{folder}/{setup.replace(' ', '_')}.db"},
    }
    if setup == "audit + policy":
        data["tools"] = {"policy": POLICY}
    bot = Bot(parse_config(data, environ={}), clock=lambda: NOW.astimezone(UTC))
    await bot.__aenter__()
    if setup == "no audit":
        bot.invoker.audit = None  # the gate as it was: no audit row
    return bot


async def _timed(bot: Bot, text: str, count: int, into: list[float]) -> None:
    for n in range(count):
        started = time.perf_counter()
        (reply,) = await bot.handle(_message(n, text))
        into.append(time.perf_counter() - started)
        if not reply.text:
            raise RuntimeError("no answer")


async def _run() -> dict[str, dict[str, float]]:
    folder = tempfile.mkdtemp()
    bots = {setup: await _bot(setup, folder) for setup in SETUPS}
    writes: dict[str, list[float]] = {setup: [] for setup in SETUPS}
    reads: dict[str, list[float]] = {setup: [] for setup in SETUPS}
    try:
        for bot in bots.values():  # warm-up: connections, caches, the chats' rows
            await _timed(bot, "/remind in 5 minutes tea", 100, [])
        settle_heap()
        for _ in range(ROUNDS):
            for setup, bot in bots.items():
                await _timed(bot, "/remind in 5 minutes tea", PER_ROUND, writes[setup])
                await _timed(bot, "/reminders", PER_ROUND // 4, reads[setup])
    finally:
        for bot in bots.values():
            await bot.__aexit__(None, None, None)
    return {
        setup: {
            "write_p50_ms": statistics.median(writes[setup]) * 1000,
            "write_p95_ms": sorted(writes[setup])[int(len(writes[setup]) * 0.95)] * 1000,
            "read_p50_ms": statistics.median(reads[setup]) * 1000,
            "writes": len(writes[setup]),
            "reads": len(reads[setup]),
        }
        for setup in SETUPS
    }


def main() -> None:
    report = asyncio.run(_run())
    print(f"{'the gate, per message':<28}{'/remind p50':>12}{'p95':>8}{'/reminders p50':>16}")
    for setup, row in report.items():
        print(
            f"{setup:<28}{row['write_p50_ms']:>10.2f}ms{row['write_p95_ms']:>6.2f}ms"
            f"{row['read_p50_ms']:>14.2f}ms"
        )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
