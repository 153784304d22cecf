"""Real MCP servers for the tests.

- `mcp-server-time` and `mcp-server-sqlite` from PyPI, each in its own venv, as a
  user's `uvx` would run them. They need different SDKs: mcp-server-time (2026.10.x)
  needs `mcp` >= 2.3, and mcp-server-sqlite crashes under `mcp` 2.x, so it gets `mcp<2`.
- `tests.mcp_fixture_server`, written with the SDK, over stdio or streamable HTTP.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.tool_venv import ROOT, ensure_venv, free_port, stop_process


def time_server_command() -> str:
    python = ensure_venv("mcp-time-venv", "mcp-server-time>=2026.10", "mcp>=2.3")
    return str(python.parent / "mcp-server-time")


def sqlite_server_command() -> str:
    python = ensure_venv("mcp-sqlite-venv", "mcp-server-sqlite", "mcp<2")
    return str(python.parent / "mcp-server-sqlite")


def fixture_server_stdio() -> dict[str, object]:
    """The `mcpServers` entry that runs the fixture server over stdio."""
    return {"command": sys.executable, "args": ["-m", "tests.mcp_fixture_server"], "cwd": str(ROOT)}


@dataclass(frozen=True, slots=True)
class HttpServer:
    url: str
    token: str
    process: subprocess.Popen[bytes]


@contextmanager
def fixture_server_http(token: str, log: Path) -> Iterator[HttpServer]:
    """The fixture server on streamable HTTP at /mcp, behind a bearer token."""
    port = free_port()
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "tests.mcp_fixture_server", "http", str(port), token],
            cwd=ROOT,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the MCP fixture server exited: see {log}")
            try:
                httpx.get(url, timeout=1)  # any answer (401 here) means it is listening
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the MCP fixture server did not come up") from None
                time.sleep(0.1)
        yield HttpServer(url, token, process)
    finally:
        stop_process(process)
