"""What choosing each message's tools costs: `ToolSelector.select` over the selection
corpus's messages, with 10, 100 and 1,000 tools to choose from, and building the index
(once per tool set, never per message).

The tools are the corpus's 157 (built-ins, two plugins, six MCP servers); 10 and 100 are
the first of them, 1,000 adds variants of them under other names with their words
shuffled, as a bot with many plugins and servers would have. Each message is ranked
with its history, against an index already built, as a running bot does.

Run: `make bench` (or `.venv/bin/python -m bench.tool_selection`). Prints a table and
writes bench/results/tool_selection.json.
"""

from __future__ import annotations

import dataclasses
import json
import random
import statistics
import time
from pathlib import Path

from groupmate.function_calls.registry import Tool
from groupmate.function_calls.selection import ToolSelector
from tests.selection.catalog import load_corpus
from tests.selection.measure import corpus_tools

RESULTS = Path(__file__).parent / "results" / "tool_selection.json"
SIZES = (10, 100, 1000)
ROUNDS = 5
BUILDS = 5


def tools_of(size: int) -> list[Tool]:
    """`size` tools: the corpus's, then variants of them."""
    base = [tool for tool in corpus_tools() if tool.for_model]
    shuffle = random.Random(7)
    tools = list(base[:size])
    number = 0
    while len(tools) < size:
        model = base[number % len(base)]
        words = model.description.split()
        shuffle.shuffle(words)
        tools.append(
            dataclasses.replace(
                model, name=f"{model.name[:50]}_v{number}", description=" ".join(words)
            )
        )
        number += 1
    return tools


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def main() -> None:
    corpus = load_corpus()
    rows = {}
    for size in SIZES:
        tools = tools_of(size)
        builds = []
        for _ in range(BUILDS):
            began = time.perf_counter()
            ToolSelector().index(tools)
            builds.append((time.perf_counter() - began) * 1e3)
        selector = ToolSelector()
        selector.index(tools)
        times = []
        for _ in range(ROUNDS):
            for entry in corpus:
                began = time.perf_counter()
                selector.select(
                    tools, entry.text, budget=1100, cost=lambda tool: 120, history=entry.history
                )
                times.append((time.perf_counter() - began) * 1e3)
        rows[size] = {
            "messages": len(times),
            "p50_ms": round(statistics.median(times), 3),
            "p95_ms": round(percentile(times, 0.95), 3),
            "p99_ms": round(percentile(times, 0.99), 3),
            "index_build_ms": round(statistics.median(builds), 1),
        }
    print("| tools | select p50 ms | p95 ms | p99 ms | index build ms (once per tool set) |")
    print("| --- | --- | --- | --- | --- |")
    for size, row in rows.items():
        print(
            f"| {size} | {row['p50_ms']} | {row['p95_ms']} | {row['p99_ms']} "
            f"| {row['index_build_ms']} |"
        )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
