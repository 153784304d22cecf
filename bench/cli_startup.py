"""How long `groupmate --help` and `groupmate check` take to answer, as a person typing
them waits: a new `python -m groupmate.bot.cli` process each time (the interpreter's start, the
imports, the work), on a config of SQLite and no model.

Each runs ROUNDS times in turns; prints the median and the slowest and writes
bench/results/cli_startup.json. Run: `make bench` (or `.venv/bin/python -m
bench.cli_startup`). The imports behind the figures: `python -X importtime -m bot.cli
--help`.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "cli_startup.json"
ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 7


def _seconds(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "groupmate.bot.cli", *args],
        env=env,
        cwd=ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def main() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "config.yaml"
        config.write_text(
            f"bot: {{timezone: Europe/Berlin}}\nstorage: {{url: 'sqlite:///{folder}/bot.db'}}\n"
        )
        commands = {"--help": ["--help"], "check": ["--config", str(config), "check"]}
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(ROUNDS):
            for name, args in commands.items():
                times[name].append(_seconds(args, env))
    print(f"{'groupmate …':<14}{'median':>9}{'slowest':>9}")
    report = {}
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"{name:<14}{median:>8.2f}s{max(seconds):>8.2f}s")
        report[name] = {"median_s": median, "max_s": max(seconds), "runs": seconds}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
