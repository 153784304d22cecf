"""What an offline `/remind` costs: the grammar alone, and a whole command through the
router into a real SQLite file (no LLM).

Run: `make bench` (or `.venv/bin/python -m bench.commands`). Prints a table and writes
bench/results/commands.json.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.grammar import GrammarError, parse_reminder

RESULTS = Path(__file__).parent / "results" / "commands.json"
NOW = datetime(2026, 11, 23, 14, 10, tzinfo=ZoneInfo("Europe/Berlin"))
PHRASES = [
    "tomorrow at 9 call the dentist",
    "every monday at 9am send the report",
    "in 90 minutes stretch",
    "every 2 weeks on monday at 9 sprint review",
    "on dec 24 at 6pm dinner",
    "call the dentist tomorrow at 9",
    "明天上午9点 开会",
    "每周一上午9点 周会",
    "10分钟后 喝水",
    "at 3 call the plumber",  # asked back
]


def _grammar(rounds: int) -> dict[str, float]:
    started = time.perf_counter()
    for _ in range(rounds):
        for phrase in PHRASES:
            with contextlib.suppress(GrammarError):  # the ask-back is measured too
                parse_reminder(phrase, NOW)
    seconds = time.perf_counter() - started
    per_parse = seconds / (rounds * len(PHRASES))
    return {"parses": rounds * len(PHRASES), "us_per_parse": per_parse * 1e6}


async def _commands(count: int) -> dict[str, float]:
    folder = tempfile.mkdtemp()
    limits = {"command_per_minute": 1e9, "command_burst": 10**9}
    config = parse_config(
        {
            "bot": {"timezone": "Europe/Berlin", "rate_limits": limits},
            "storage": {"url": f"sqlite:///{folder}/bench.db"},
        },
        environ={},
    )
    ids = itertools.count()
    latencies: list[float] = []
    async with Bot(config, clock=lambda: NOW.astimezone(UTC)) as bot:
        for n in range(count):
            phrase = PHRASES[n % (len(PHRASES) - 1)]
            message = IncomingMessage(
                chat_id=f"g{n % 50}",
                chat_type="group",
                sender_id=f"u{n % 7}",
                sender_name="U",
                text=f"/remind {phrase}",
                message_id=f"m{next(ids)}",
            )
            started = time.perf_counter()
            (reply,) = await bot.handle(message)
            latencies.append(time.perf_counter() - started)
            assert reply.text.startswith("⏰"), reply.text
    latencies.sort()
    return {
        "commands": count,
        "p50_ms": statistics.median(latencies) * 1000,
        "p95_ms": latencies[int(len(latencies) * 0.95)] * 1000,
        "per_second": count / sum(latencies),
    }


def main() -> None:
    grammar = _grammar(2000)
    commands = asyncio.run(_commands(1000))
    print(f"grammar: {grammar['us_per_parse']:.1f} µs per phrase ({grammar['parses']} parses)")
    print(
        f"/remind through the router into SQLite: p50 {commands['p50_ms']:.2f} ms, "
        f"p95 {commands['p95_ms']:.2f} ms, {commands['per_second']:.0f}/s sequential"
    )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"grammar": grammar, "remind_command": commands}, indent=2))


if __name__ == "__main__":
    main()
