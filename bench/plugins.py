"""What plugins cost: loading them, and a call of a plugin's tool through `Bot.handle`.

- Loading: `groupmate check`'s and `serve`'s first step, in a fresh process each time
  (imports included): the built-in families alone, then with the test fixtures' dice
  plugin (settings, a service, a store) and the README's split_bill plugin.
- A call: `/roll` (the dice plugin: settings, a service and its store per call, one
  write) against `/remind` (a built-in write of the same kind) on one SQLite file,
  in turns, round after round.

Run: `make bench` (or `.venv/bin/python -m bench.plugins`). Prints a table and writes
bench/results/plugins.json.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from groupmate.bot.app import Bot, settle_heap
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage

RESULTS = Path(__file__).parent / "results" / "plugins.json"
ROOT = Path(__file__).resolve().parent.parent
LOADS = 5
ROUNDS = 5
PER_ROUND = 200
PLUGINS = ["tests.plugin_fixtures.dice", "tests.plugin_fixtures.plain"]
COMMANDS = {"/roll (plugin)": "/roll", "/remind (built-in)": "/remind in 2 hours stretch"}
_ids = itertools.count()

_LOAD = """
import sys, time, json
began = time.perf_counter()
from groupmate.bot.config import parse_config
from groupmate.bot.plugin_runtime import configured_plugins
imported = time.perf_counter()
plugins = configured_plugins(parse_config({"plugins": json.loads(sys.argv[1])}))
done = time.perf_counter()
assert not plugins.failed, plugins.failed
print(json.dumps({"imports_ms": (imported - began) * 1e3, "load_ms": (done - imported) * 1e3}))
"""


def _load(plugins: list[str]) -> dict[str, float]:
    runs = []
    for _ in range(LOADS):
        done = subprocess.run(
            [sys.executable, "-c", _LOAD, json.dumps(plugins)],
            cwd=ROOT, capture_output=True, text=True, check=True,
        )  # fmt: skip
        runs.append(json.loads(done.stdout))
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def _message(text: str) -> IncomingMessage:
    number = next(_ids)
    return IncomingMessage(
        chat_id=f"g{number % 50}",
        chat_type="group",
        sender_id=f"u{number % 7}",
        sender_name="U",
        text=text,
        message_id=f"m{number}",
    )


async def _calls(folder: str) -> dict[str, list[float]]:
    limits = {"command_per_minute": 1e9, "command_burst": 10**9}
    config = parse_config(
        {
            "storage": {"url": f"sqlite:///{folder}/bench.db"},
            "adapters": {"console": {"enabled": False}},
            "bot": {"rate_limits": limits},
            "plugins": PLUGINS,
        }
    )
    rounds: dict[str, list[float]] = {name: [] for name in COMMANDS}
    async with Bot(config) as bot:
        settle_heap()
        for name, text in COMMANDS.items():  # warm
            replies = await bot.handle(_message(text))
            assert replies, name
            assert "🎲" in replies[0].text or not name.startswith("/roll"), replies
        for _ in range(ROUNDS):
            for name, text in COMMANDS.items():
                latencies = []
                for _ in range(PER_ROUND):
                    began = time.perf_counter()
                    await bot.handle(_message(text))
                    latencies.append(time.perf_counter() - began)
                rounds[name].append(statistics.median(latencies) * 1e3)
    return rounds


def main() -> None:
    loads = {"built-ins": _load([]), "built-ins + 2 plugins": _load(PLUGINS)}
    with tempfile.TemporaryDirectory() as folder:
        calls = asyncio.run(_calls(folder))
    print(f"Loading, median of {LOADS} fresh processes (ms):")
    for name, figures in loads.items():
        print(f"  {name:<24} imports {figures['imports_ms']:7.1f}  load {figures['load_ms']:6.1f}")
    print(f"A call through Bot.handle, p50 per round of {PER_ROUND} (ms):")
    for name, rounds in calls.items():
        print(f"  {name:<20} " + " ".join(f"{value:6.2f}" for value in rounds))
    report: dict[str, Any] = {"load_ms": loads, "call_p50_ms_per_round": calls}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
