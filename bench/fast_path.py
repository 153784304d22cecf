"""The grammar first: what a reminder request the grammar reads costs end to end, and
how precise the reading is.

- The precision corpus (tests/fast_path_corpus.yaml): taken, declined and wrong.
- `groupmate serve` with a model configured (the stub, answering after 500 ms, so that a
  model call would show), requests posted one after another to `POST /v1/messages`:
  latency per request. Every reply must be the reminder's confirmation: the stub's own
  answer would be a reminder list.

Run: `make bench` (or `.venv/bin/python -m bench.fast_path`). Prints a table and writes
bench/results/fast_path.json.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import yaml

from groupmate.function_calls.grammar import read_whole
from tests.processes import serve, stub_llm

RESULTS = Path(__file__).parent / "results" / "fast_path.json"
CORPUS = Path(__file__).parent.parent / "tests" / "fast_path_corpus.yaml"
MODEL_DELAY_S = 0.5
REQUESTS = 300


def precision() -> dict[str, int]:
    corpus = yaml.safe_load(CORPUS.read_text("utf-8"))
    now = datetime.strptime(corpus["now"], "%Y-%m-%d %H:%M").replace(
        tzinfo=ZoneInfo(corpus["zone"])
    )
    taken = declined = wrong = 0
    for case in corpus["take"]:
        request = read_whole(case["say"], now)
        if request is None:
            declined += 1
        elif request.arguments == case["set"]:
            taken += 1
        else:
            wrong += 1
    near_misses_taken = sum(1 for said in corpus["decline"] if read_whole(said, now))
    return {
        "messages": len(corpus["take"]) + len(corpus["decline"]),
        "requests": len(corpus["take"]),
        "near_misses": len(corpus["decline"]),
        "taken": taken,
        "declined": declined + len(corpus["decline"]) - near_misses_taken,
        "requests_declined": declined,
        "wrong": wrong + near_misses_taken,
    }


# Requests whose times are always ahead, whenever the bench runs.
PHRASES = [
    "@groupmate remind me in 30 minutes to check the oven",
    "@groupmate remind us every monday at 9am to send the report",
    "@groupmate remind me tomorrow at 9 to call the dentist",
    "@groupmate in 2 hours remind me to move the car",
    "@groupmate 明天上午9点提醒我开会",
    "@groupmate 每天早上7点提醒我跑步",
]


def http_latency(requests: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder, stub_llm(MODEL_DELAY_S) as llm:
        config = {
            "storage": {"url": f"sqlite:///{folder}/bench.db"},
            "llm": {"base_url": llm, "api_key": "sk-bench", "tool_mode": "prompt"},
            "bot": {"timezone": "Europe/Berlin", "rate_limits": {"burst": 10**9}},
        }
        with serve(config) as base_url, httpx.Client(base_url=base_url, timeout=30) as client:
            latencies: list[float] = []
            for number in range(requests):
                body: dict[str, Any] = {
                    "chat_id": f"bench-{number % 20}",
                    "chat_type": "group",
                    "sender_id": f"u-{number}",
                    "sender_name": "Member",
                    "text": PHRASES[number % len(PHRASES)],
                }
                began = time.perf_counter()
                response = client.post("/v1/messages", json=body)
                latencies.append((time.perf_counter() - began) * 1000)
                (reply,) = response.json()["replies"]
                if not reply["text"].startswith("⏰"):
                    raise RuntimeError(f"not set by the fast path: {reply['text']!r}")
    ordered = sorted(latencies)
    return {
        "requests": requests,
        "p50_ms": statistics.median(ordered),
        "p95_ms": ordered[int(0.95 * (len(ordered) - 1))],
        "p99_ms": ordered[int(0.99 * (len(ordered) - 1))],
        "max_ms": ordered[-1],
    }


def main() -> None:
    corpus, http = precision(), http_latency(REQUESTS)
    figures = {"precision": corpus, "http": http}
    print("fast path (the grammar first)                  figure   goal")
    print(f"corpus messages (requests / near-misses)   {corpus['messages']:>4} "
          f"({corpus['requests']} / {corpus['near_misses']})")  # fmt: skip
    print(f"  taken                                    {corpus['taken']:>8}")
    print(f"  declined (to the model)                  {corpus['declined']:>8}")
    print(f"  wrong                                    {corpus['wrong']:>8}   0")
    print(f"POST /v1/messages p50 (ms), model not called {http['p50_ms']:>6.1f}   <= 50")
    print(f"  p95 / p99 / max (ms)            {http['p95_ms']:.1f} / {http['p99_ms']:.1f} / "
          f"{http['max_ms']:.1f}")  # fmt: skip
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    main()
