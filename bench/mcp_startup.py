"""What MCP servers add to startup: `Bot` start-up with no MCP server, then with two
(mcp-server-time and mcp-server-sqlite, each from PyPI in its own venv, over stdio),
and the cost of one MCP tool call through the invoker.

Run: `make bench` (or `.venv/bin/python -m bench.mcp_startup`). Prints a table and writes
bench/results/mcp_startup.json.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.function_calls import MessageContext
from tests.mcp_servers import sqlite_server_command, time_server_command

RESULTS = Path(__file__).parent / "results" / "mcp_startup.json"
ROUNDS = 5


async def _start(folder: Path, servers: dict[str, Any], calls: int) -> tuple[float, list[float]]:
    data = {"storage": {"url": f"sqlite:///{folder / 'bot.db'}"}, "mcp": {"servers": servers}}
    bot = Bot(parse_config(data, environ={}))
    began = time.perf_counter()
    async with bot:
        started = time.perf_counter() - began
        ctx = MessageContext(chat_id="g", chat_type="group", sender_id="u")
        latencies = []
        for _ in range(calls):
            t = time.perf_counter()
            await bot.invoker.run(ctx, "time__get_current_time", {"timezone": "Asia/Tokyo"})
            latencies.append(time.perf_counter() - t)
    return started, latencies


async def main() -> None:
    none: list[float] = []
    two: list[float] = []
    calls: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        servers: dict[str, Any] = {
            "time": {"command": time_server_command()},
            "sqlite": {
                "command": sqlite_server_command(),
                "args": ["--db-path", str(folder / "shop.db")],
            },
        }
        for n in range(ROUNDS):
            (folder / "bot.db").unlink(missing_ok=True)
            none.append((await _start(folder, {}, 0))[0])
            (folder / "bot.db").unlink(missing_ok=True)
            started, latencies = await _start(folder, servers, 50 if n == 0 else 0)
            two.append(started)
            calls.extend(latencies)
    figures = {
        "startup_s_no_mcp_median": statistics.median(none),
        "startup_s_two_mcp_median": statistics.median(two),
        "startup_s_two_mcp_max": max(two),
        "mcp_call_ms_p50": statistics.median(calls) * 1000,
        "mcp_call_ms_p95": statistics.quantiles(calls, n=20)[18] * 1000,
    }
    print(f"{'measure':<28} {'value':>10}")
    for name, value in figures.items():
        print(f"{name:<28} {value:>10.3f}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"rounds": ROUNDS, **figures}, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
