"""Per-message overhead before and after a change, measured in one run: the embedded
`Bot.handle` overhead (bench/per_message.py's first figure) of a base revision and of
this checkout, in turns, so that whatever else the machine does weighs on both alike.

Run: `make bench` (BENCH_BASE=<revision>, the commit before the work being judged) or
`.venv/bin/python -m bench.versus --base <revision>`. The base is exported with `git
archive` into a temporary folder and run from there with its own code; both sides use
SQLite and the stub LLM in its own process. Prints the medians of each side's rounds and
writes bench/results/versus.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "versus.json"
# Run inside each tree with its own code: the function per_message.py has always had.
_ROUND = """
import asyncio, json, sys
from bench.per_message import _embedded, _in_process
from tests.processes import databases
with databases("sqlite") as new_database:
    print("RESULT", json.dumps(asyncio.run(_in_process(_embedded, new_database(), {messages}))))
"""


def _round(tree: Path, messages: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", _ROUND.format(messages=messages)],
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{tree}: {done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(lines[-1].removeprefix("RESULT "))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", required=True, help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--messages", type=int, default=1000)
    options = parser.parse_args()
    revision = subprocess.run(
        ["git", "rev-parse", "--short", options.base],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        archive = subprocess.run(
            ["git", "archive", revision], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        sides: dict[str, list[dict[str, float]]] = {revision: [], "this checkout": []}
        for n in range(options.rounds):
            for name, tree in ((revision, base), ("this checkout", ROOT)):
                print(f"round {n + 1}/{options.rounds}: {name}…", flush=True)
                sides[name].append(_round(tree, options.messages))
    keys = ("overhead_p50_ms", "overhead_p99_ms")
    report = {
        name: {key: statistics.median(r[key] for r in rounds) for key in keys}
        for name, rounds in sides.items()
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"rounds": sides, "medians": report}, indent=2))
    print(f"\n{'Bot.handle overhead (ms)':<28}{'p50':>10}{'p99':>10}")
    for name, figures in report.items():
        print(f"{name:<28}" + "".join(f"{figures[key]:>10.2f}" for key in keys))
    print(f"JSON written to {RESULTS}")


if __name__ == "__main__":
    main()
