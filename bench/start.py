"""How long a person waits for groupmate to start: `groupmate --help`, `groupmate check`
and `groupmate serve` until its first 200 from GET /healthz (issue 39's goals: 0.5 s,
0.5 s and 3 s). Each run is a new `python -m groupmate.bot.cli` process (the
interpreter's start, the imports, the work) on the README's minimal config (llm.base_url,
model and tool_mode) against a stub model that says nothing of its window; `serve` gets a
new SQLite database each run, as a first start has, with the web playground and every
built-in tool.

Each runs ROUNDS times in turns; prints the median and the slowest and writes
bench/results/start.json. Run: `make bench` (or `.venv/bin/python -m bench.start`). The
imports behind the figures: `python -X importtime -m groupmate.bot.cli --help`.
`--checkout DIR` times another checkout's code (an earlier commit's, for a before and
after on the same machine at the same time).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from groupmate.testing.stub_llm import StubLLM

RESULTS = Path(__file__).parent / "results" / "start.json"
ROOT = Path(__file__).resolve().parent.parent
ROUNDS = 7
CLI = [sys.executable, "-m", "groupmate.bot.cli"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _command(args: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run([*CLI, *args], env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):  # not listening yet, or 503 while not healthy
        return False


def _serve(config: Path, database: Path, env: dict[str, str]) -> float:
    """Seconds from starting `serve` on a new database to its first green /healthz."""
    database.unlink(missing_ok=True)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/healthz"
    start = time.perf_counter()
    server = subprocess.Popen(
        [*CLI, "--config", str(config), "serve", "--port", str(port)],
        env=env,
        cwd=config.parent,  # not a checkout: `-m` would import the one it is in
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not _healthy(url):
            if server.poll() is not None or time.perf_counter() - start > 60:
                raise RuntimeError(f"serve did not become healthy (exit {server.returncode})")
            time.sleep(0.01)
        return time.perf_counter() - start
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the code to time")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    options = parser.parse_args()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GROUPMATE_"))},
        "PYTHONPATH": str(options.checkout.resolve()),
    }
    model = StubLLM(record=False)
    model.context_tokens = None  # says nothing of its window, as most servers
    model.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            database = folder / "bot.db"
            config = folder / "config.yaml"
            config.write_text(
                f"storage: {{url: 'sqlite:///{database}'}}\n"
                f"llm: {{base_url: 'http://127.0.0.1:{model.port}/v1', model: stub, "
                "tool_mode: auto}\n"
            )
            runs: dict[str, list[float]] = {"--help": [], "check": [], "serve to /healthz": []}
            for _ in range(options.rounds):
                runs["--help"].append(_command(["--help"], env, folder))
                runs["check"].append(_command(["--config", str(config), "check"], env, folder))
                runs["serve to /healthz"].append(_serve(config, database, env))
    finally:
        model.stop()
    print(f"{'groupmate …':<20}{'median':>9}{'slowest':>9}")
    report = {}
    for name, seconds in runs.items():
        median = statistics.median(seconds)
        print(f"{name:<20}{median:>8.2f}s{max(seconds):>8.2f}s")
        report[name] = {"median_s": median, "max_s": max(seconds), "runs": seconds}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"rounds": options.rounds, **report}, indent=2))


if __name__ == "__main__":
    main()
