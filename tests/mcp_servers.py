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
from typing import Any

import httpx

from tests.ports import free_port
from tests.tool_venv import ROOT, ensure_venv, stop_process


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


# --- more real servers, for the tool-selection corpus (tests/selection) -----------------
#
# Each function below returns the server's command line as a list (the program first),
# ready for `StdioServerParameters(command=argv[0], args=argv[1:])` or an `mcpServers`
# entry. mcp-server-fetch (2026.10.x) and mcp-server-git (2026.10.x) declare
# `mcp>=2.3,<3` themselves, like mcp-server-time; the npm servers bring their own SDK.

NPM_MCP_PACKAGES = (
    "@modelcontextprotocol/server-memory@2026.8.31",
    "@modelcontextprotocol/server-filesystem@2026.8.31",
)


def fetch_server_command() -> list[str]:
    python = ensure_venv("mcp-fetch-venv", "mcp-server-fetch>=2026.10", "mcp>=2.3,<3")
    return [str(python.parent / "mcp-server-fetch")]


def git_server_command(repository: Path | None = None) -> list[str]:
    """mcp-server-git; with `repository`, the server is limited to that repository
    (`--repository`), otherwise every call names its `repo_path`."""
    python = ensure_venv("mcp-git-venv", "mcp-server-git>=2026.10", "mcp>=2.3,<3")
    where = ["--repository", str(repository)] if repository is not None else []
    return [str(python.parent / "mcp-server-git"), *where]


def ensure_npm_servers() -> Path:
    """The `node_modules` with NPM_MCP_PACKAGES, installed once in .cache/npm-mcp (the
    same lock and `.installed` marker as `ensure_venv`)."""
    import fcntl

    prefix = ROOT / ".cache" / "npm-mcp"
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with open(prefix.parent / "npm-mcp.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = prefix / ".installed"
        if not ready.exists():
            prefix.mkdir(exist_ok=True)
            subprocess.run(
                ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                 "--loglevel=error", *NPM_MCP_PACKAGES],
                check=True,
            )  # fmt: skip
            ready.touch()
    return prefix / "node_modules"


def _npm_server(package: str) -> list[str]:
    """`node` and the script the package's `bin` names."""
    import json

    folder = ensure_npm_servers() / package
    manifest = json.loads((folder / "package.json").read_text(encoding="utf-8"))
    bin_ = manifest["bin"]
    script = bin_ if isinstance(bin_, str) else next(iter(bin_.values()))
    return ["node", str((folder / script).resolve())]


def memory_server_command() -> list[str]:
    """@modelcontextprotocol/server-memory; it keeps its graph in the file the
    environment's MEMORY_FILE_PATH names (see `memory_server_env`)."""
    return _npm_server("@modelcontextprotocol/server-memory")


def memory_server_env(memory_file: Path) -> dict[str, str]:
    """The environment that points the memory server at `memory_file` (JSON lines)."""
    return {"MEMORY_FILE_PATH": str(memory_file)}


def filesystem_server_command(*allowed: Path) -> list[str]:
    """@modelcontextprotocol/server-filesystem, limited to the `allowed` directories.
    At least one: without any the server waits for the client's MCP roots, which
    groupmate's client does not offer, and every call fails."""
    if not allowed:
        raise ValueError("the filesystem server needs at least one allowed directory")
    return [*_npm_server("@modelcontextprotocol/server-filesystem"), *map(str, allowed)]


def default_path_servers(work: Path) -> dict[str, Any]:
    """The `mcp.servers` of the default path's tests and eval: six real MCP servers
    (time, fetch, git and sqlite from PyPI; memory and filesystem from npm), each on a
    workspace of its own under `work`."""
    repository, shared = work / "repo", work / "shared"
    shared.mkdir()
    (shared / "notes.md").write_text("standup moved to 10:00\n")
    subprocess.run(["git", "init", "-q", str(repository)], check=True)
    fetch, git = fetch_server_command(), git_server_command(repository)
    memory, files = memory_server_command(), filesystem_server_command(shared)
    return {
        "time": {"command": time_server_command()},
        "fetch": {"command": fetch[0], "args": fetch[1:]},
        "git": {"command": git[0], "args": git[1:]},
        "memory": {
            "command": memory[0],
            "args": memory[1:],
            "env": memory_server_env(work / "memory.jsonl"),
        },
        "filesystem": {"command": files[0], "args": files[1:]},
        "sqlite": {"command": sqlite_server_command(), "args": ["--db-path", str(work / "s.db")]},
    }
