"""End to end through HTTP: `groupmate serve` and a stub LLM, each in its own process.

Run: `make bench` (or `.venv/bin/python -m bench.http_api`). 100 private chats send
messages concurrently (each chat waits for its reply before the next message, as people
do); every message costs one LLM request (the stub calls `reminder_list`, which answers
directly) plus the chat log and reminder reads and writes. Reported for the stub
answering at once and after 200 ms. Prints a table and writes bench/results/http_api.json.
"""

from __future__ import annotations

import asyncio
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

CHATS = 100
MESSAGES_PER_CHAT = 10
RESULTS = Path(__file__).parent / "results"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_port(port: int, within: float = 30) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


async def _chat(client: httpx.AsyncClient, chat: int, latencies: list[float]) -> None:
    for n in range(MESSAGES_PER_CHAT):
        body = {
            "chat_id": f"bench-{chat}",
            "chat_type": "private",
            "sender_id": f"user-{chat}",
            "sender_name": f"User {chat}",
            "text": "what reminders do I have?",
            "message_id": f"{chat}-{n}",
        }
        began = time.perf_counter()
        response = await client.post("/v1/messages", json=body)
        latencies.append((time.perf_counter() - began) * 1000)
        response.raise_for_status()
        assert response.json()["replies"], response.text


async def _load(port: int) -> dict[str, float]:
    latencies: list[float] = []
    limits = httpx.Limits(
        max_connections=CHATS, max_keepalive_connections=CHATS, keepalive_expiry=5
    )
    async with httpx.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", limits=limits, timeout=60
    ) as client:
        await _chat(client, -1, [])  # warm-up
        began = time.perf_counter()
        await asyncio.gather(*(_chat(client, chat, latencies) for chat in range(CHATS)))
        elapsed = time.perf_counter() - began
    ordered = sorted(latencies)
    return {
        "messages": len(latencies),
        "messages_per_s": len(latencies) / elapsed,
        "latency_ms_p50": statistics.median(ordered),
        "latency_ms_p99": ordered[round(0.99 * (len(ordered) - 1))],
    }


def run(delay: float) -> dict[str, float]:
    stub_port, bot_port = _free_port(), _free_port()
    with tempfile.TemporaryDirectory() as folder:
        config = {
            "storage": {"url": f"sqlite:///{folder}/bench.db"},
            "llm": {"base_url": f"http://127.0.0.1:{stub_port}/v1", "api_key": "sk-bench"},
            "adapters": {"webhook": {"port": bot_port}},
            "bot": {"rate_limits": {"user_per_minute": 100000, "burst": 100000}},
        }
        path = Path(folder) / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        stub_options = ["--delay", str(delay), "--tool", "reminder_list", "--arguments", "{}"]
        stub = subprocess.Popen(
            [sys.executable, "-m", "tests.stub_llm", "--port", str(stub_port), *stub_options]
        )
        bot = subprocess.Popen([sys.executable, "-m", "bot.cli", "--config", str(path), "serve"])
        try:
            _wait_port(stub_port)
            _wait_port(bot_port)
            return asyncio.run(_load(bot_port))
        finally:
            for process in (bot, stub):
                process.terminate()
                process.wait(30)


def main() -> None:
    results: dict[str, Any] = {}
    for delay in (0.0, 0.2):
        label = f"stub {delay * 1000:.0f} ms"
        print(f"[{label}] {CHATS} chats x {MESSAGES_PER_CHAT} messages…", flush=True)
        results[label] = run(delay)
    print(f"\n{'metric':<28}" + "".join(f"{label:>16}" for label in results))
    for key in ("messages_per_s", "latency_ms_p50", "latency_ms_p99"):
        print(f"{key:<28}" + "".join(f"{r[key]:>16.1f}" for r in results.values()))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "http_api.json").write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
