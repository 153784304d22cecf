"""Write tests/selection/mcp_tools.json: the tools six real MCP servers list, as they
answer `tools/list` (name, description, inputSchema), for the selection corpus.

    .venv/bin/python -m tests.selection.capture_mcp_tools

The servers are installed by tests.mcp_servers (PyPI venvs and npm packages in .cache)
and run over stdio with the project's `mcp` SDK client, the way the bot runs them. The
servers that need a place to work get a throwaway one: an empty SQLite database, a
memory file, a git repository and a directory for the filesystem server.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.mcp_servers import (
    fetch_server_command,
    filesystem_server_command,
    git_server_command,
    memory_server_command,
    memory_server_env,
    sqlite_server_command,
    time_server_command,
)

OUTPUT = Path(__file__).with_name("mcp_tools.json")
SERVERS = ("time", "fetch", "git", "sqlite", "memory", "filesystem")


def server_params(name: str, work: Path) -> StdioServerParameters:
    """How to start server `name`, its files (if any) under `work`."""
    env: dict[str, str] = {}
    if name == "time":
        argv = [time_server_command()]
    elif name == "fetch":
        argv = fetch_server_command()
    elif name == "git":
        repository = work / "repo"
        subprocess.run(["git", "init", "--quiet", str(repository)], check=True)
        argv = git_server_command(repository)
    elif name == "sqlite":
        argv = [sqlite_server_command(), "--db-path", str(work / "test.db")]
    elif name == "memory":
        argv = memory_server_command()
        env = memory_server_env(work / "memory.jsonl")
    elif name == "filesystem":
        shared = work / "shared"
        shared.mkdir()
        argv = filesystem_server_command(shared)
    else:
        raise ValueError(f"no such server: {name}")
    return StdioServerParameters(command=argv[0], args=argv[1:], env=env or None)


async def list_tools(params: StdioServerParameters) -> list[dict[str, Any]]:
    """Every tool the server lists (all pages), as it sent them."""
    tools: list[dict[str, Any]] = []
    async with asyncio.timeout(120), Client(params, mode="legacy", cache=None) as client:
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                tools.append(
                    {
                        "name": tool.name,
                        "description": tool.description or "",
                        "inputSchema": tool.input_schema,
                    }
                )
            cursor = page.next_cursor
            if not cursor:
                return tools


async def capture() -> dict[str, list[dict[str, Any]]]:
    with tempfile.TemporaryDirectory(prefix="mcp-tools-") as tmp:
        found: dict[str, list[dict[str, Any]]] = {}
        for name in SERVERS:
            work = Path(tmp) / name
            work.mkdir()
            found[name] = await list_tools(server_params(name, work))
            print(f"{name}: {len(found[name])} tools", file=sys.stderr)
        return found


def main() -> None:
    found = asyncio.run(capture())
    text = json.dumps(found, ensure_ascii=False, indent=2, sort_keys=False)
    OUTPUT.write_text(text + "\n", encoding="utf-8")
    print(f"wrote {OUTPUT} ({sum(map(len, found.values()))} tools)", file=sys.stderr)


if __name__ == "__main__":
    main()
