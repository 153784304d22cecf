"""Framework overhead per message, with a stub LLM in its own process.

Run: `make bench` (or `.venv/bin/python -m bench.tool_overhead`). Prints a table and
writes bench/results/tool_overhead.json.

Overhead is a message's wall time minus the time spent inside the SDK's
request calls (`client.post`) (HTTP round trip plus the stub's own time).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

from groupmate.function_calls import FunctionCallLLM, FunctionResult, MessageContext, ToolRegistry

RESULTS = Path(__file__).parent / "results" / "tool_overhead.json"
_llm_seconds: contextvars.ContextVar[list[float]] = contextvars.ContextVar("llm_seconds")


class EchoArgs(BaseModel):
    text: str


def _registry() -> ToolRegistry:
    registry = ToolRegistry()

    @registry.tool(description="Echo the text back")
    async def echo(ctx: MessageContext, args: EchoArgs) -> FunctionResult:
        return FunctionResult.for_model({"echo": args.text})

    return registry


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _stub_process(delay: float) -> Iterator[str]:
    port = _free_port()
    command = [sys.executable, "-m", "groupmate.testing.stub_llm", "--port", str(port)]
    command += ["--delay", str(delay)]
    process = subprocess.Popen(command)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                httpx.get(f"{base_url}/models", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("stub LLM did not start") from None
                time.sleep(0.05)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=10)


def _timed_llm(base_url: str, http_backend: str) -> FunctionCallLLM:
    llm = FunctionCallLLM(
        model="bench",
        base_url=base_url,
        api_key="bench",
        registry=_registry(),
        http_backend=http_backend,  # type: ignore[arg-type]
    )
    client = llm.client
    post = client.post

    async def timed_post(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await post(*args, **kwargs)
        finally:
            _llm_seconds.get().append(time.perf_counter() - started)

    client.post = timed_post  # type: ignore[method-assign]
    return llm


def _ctx(chat: int) -> MessageContext:
    return MessageContext(
        chat_id=f"chat-{chat}", chat_type="group", sender_id=f"user-{chat}", sender_name="Bench"
    )


async def _one(llm: FunctionCallLLM, chat: int) -> tuple[float, float]:
    spent: list[float] = []
    _llm_seconds.set(spent)
    started = time.perf_counter()
    result = await llm.run(_ctx(chat), "echo hi")
    total = time.perf_counter() - started
    if result.text != "done" or result.llm_calls != 2:
        raise RuntimeError(f"unexpected turn: {result}")
    return total, sum(spent)


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


async def _sequential(base_url: str, http_backend: str, messages: int) -> dict[str, float]:
    llm = _timed_llm(base_url, http_backend)
    for _ in range(100):  # warm-up: connections, caches
        await _one(llm, 0)
    totals, overheads = [], []
    for index in range(messages):
        total, in_llm = await _one(llm, index % 100)
        totals.append(total)
        overheads.append(total - in_llm)
    await llm.aclose()
    ms = 1000.0
    return {
        "messages": messages,
        "overhead_p50_ms": _percentile(overheads, 0.50) * ms,
        "overhead_p99_ms": _percentile(overheads, 0.99) * ms,
        "overhead_mean_ms": statistics.fmean(overheads) * ms,
        "end_to_end_p50_ms": _percentile(totals, 0.50) * ms,
        "end_to_end_p99_ms": _percentile(totals, 0.99) * ms,
    }


async def _concurrent(
    base_url: str, http_backend: str, chats: int, rounds: int
) -> dict[str, float]:
    llm = _timed_llm(base_url, http_backend)
    await asyncio.gather(*(_one(llm, chat) for chat in range(chats)))  # warm-up
    started = time.perf_counter()
    for _ in range(rounds):
        await asyncio.gather(*(_one(llm, chat) for chat in range(chats)))
    elapsed = time.perf_counter() - started
    await llm.aclose()
    return {
        "chats": chats,
        "messages": chats * rounds,
        "seconds": elapsed,
        "messages_per_s": chats * rounds / elapsed,
        "seconds_per_burst": elapsed / rounds,
    }


def _measure(backend: str, messages: int, chats: int) -> dict[str, Any]:
    with _stub_process(delay=0.0) as base_url:
        sequential = asyncio.run(_sequential(base_url, backend, messages))
        instant = asyncio.run(_concurrent(base_url, backend, chats, 10))
    with _stub_process(delay=0.2) as base_url:
        slow = asyncio.run(_concurrent(base_url, backend, chats, 3))
    return {"sequential_0ms": sequential, "concurrent_0ms": instant, "concurrent_200ms": slow}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--chats", type=int, default=100)
    options = parser.parse_args()
    report = {
        backend: _measure(backend, options.messages, options.chats)
        for backend in ("aiohttp", "httpx")
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2))
    rows: list[tuple[str, str, str, str]] = []
    for label, key, field, fmt, target in [
        ("framework overhead p50 (ms)", "sequential_0ms", "overhead_p50_ms", ".3f", "<= 2"),
        ("framework overhead p99 (ms)", "sequential_0ms", "overhead_p99_ms", ".3f", "<= 10"),
        ("end-to-end incl. HTTP p50 (ms)", "sequential_0ms", "end_to_end_p50_ms", ".2f", ""),
        ("end-to-end incl. HTTP p99 (ms)", "sequential_0ms", "end_to_end_p99_ms", ".2f", ""),
        (
            f"msgs/s, {options.chats} chats, 0 ms stub",
            "concurrent_0ms",
            "messages_per_s",
            ".0f",
            "",
        ),
        (
            f"{options.chats} chats at once, 200 ms stub (s)",
            "concurrent_200ms",
            "seconds_per_burst",
            ".3f",
            "~0.4 (2 x 200 ms)",
        ),
    ]:
        values = [format(report[b][key][field], fmt) for b in ("aiohttp", "httpx")]
        rows.append((label, values[0], values[1], target))
    width = max(len(row[0]) for row in rows)
    print(f"{'metric'.ljust(width)}  {'aiohttp':>9}  {'httpx':>9}  target")
    for label, aio, plain, target in rows:
        print(f"{label.ljust(width)}  {aio:>9}  {plain:>9}  {target}")
    print(
        f"each message = 1 tool call + final answer; {options.messages} sequential messages; "
        "aiohttp is the default transport"
    )
    print(f"JSON written to {RESULTS}")


if __name__ == "__main__":
    main()
