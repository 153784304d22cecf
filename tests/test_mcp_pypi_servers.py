"""Real MCP servers from PyPI, each in its own venv, behind the whole bot and the stub LLM:
mcp-server-time (SDK 2.x) and mcp-server-sqlite (SDK 1.x)."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.testing.stub_llm import Reply, StubLLM, calls, text
from tests import bots
from tests.mcp_servers import sqlite_server_command, time_server_command

pytestmark = pytest.mark.slow


def bot_with(tmp_path: Path, stub: StubLLM, servers: dict[str, Any]) -> Bot:
    data = {
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "llm": {"base_url": stub.base_url, "api_key": "sk-test"},
        "mcp": {"servers": servers},
    }
    return Bot(parse_config(data, environ={}))


def ask(words: str, n: int = 1) -> IncomingMessage:
    return bots.chat_message(f"@groupmate {words}", message_id=f"m{n}")


def last_tool_result(body: dict[str, Any]) -> str:
    message = body["messages"][-1]
    assert message["role"] == "tool", message
    return str(message["content"])


def offered(body: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in body.get("tools", [])]


async def test_what_time_is_it_in_tokyo(tmp_path: Path, stub: StubLLM) -> None:
    def answer(body: dict[str, Any]) -> Reply:
        said = json.loads(last_tool_result(body))
        return text(f"In Tokyo it is {said['datetime']} ({said['day_of_week']}).")

    stub.script(calls(("time__get_current_time", {"timezone": "Asia/Tokyo"})), answer)
    async with bot_with(tmp_path, stub, {"time": {"command": time_server_command()}}) as bot:
        (reply,) = await bot.handle(ask("what time is it in Tokyo?"))
    assert "time__get_current_time" in offered(stub.requests[0])
    found = re.search(r"In Tokyo it is (\S+) \((\w+)\)", reply.text)
    assert found is not None, reply.text
    stamp = datetime.fromisoformat(found.group(1))
    assert stamp.utcoffset() == timedelta(hours=9)
    assert abs(stamp - datetime.now(UTC)) < timedelta(minutes=2)  # the server's real clock
    assert found.group(2) == stamp.strftime("%A")


async def test_a_query_then_a_dependent_write(tmp_path: Path, stub: StubLLM) -> None:
    database = tmp_path / "shop.db"
    with sqlite3.connect(database) as db:
        db.execute("CREATE TABLE items (name TEXT PRIMARY KEY, qty INTEGER)")
        db.execute("INSERT INTO items VALUES ('apples', 3), ('pears', 5)")

    def write_one_more(body: dict[str, Any]) -> Reply:
        # The write depends on what the read returned: it can only come in the next round.
        found = re.search(r"'qty': (\d+)", last_tool_result(body))
        assert found is not None, last_tool_result(body)
        qty = int(found.group(1)) + 1
        update = f"UPDATE items SET qty = {qty} WHERE name = 'apples'"
        return calls(("sqlite__write_query", {"query": update}))

    def done(body: dict[str, Any]) -> Reply:
        return text(f"Done: {last_tool_result(body)}")

    stub.script(
        calls(("sqlite__read_query", {"query": "SELECT qty FROM items WHERE name = 'apples'"})),
        write_one_more,
        done,
    )
    server = {"command": sqlite_server_command(), "args": ["--db-path", str(database)]}
    async with bot_with(tmp_path, stub, {"sqlite": server}) as bot:
        (reply,) = await bot.handle(ask("we bought one more apple, update the stock"))
    assert reply.text.startswith("Done:")
    assert "1" in reply.text  # the server's own words: one row affected
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT name, qty FROM items ORDER BY name").fetchall() == [
            ("apples", 4),
            ("pears", 5),
        ]
    assert [body["messages"][-1]["role"] for body in stub.requests] == ["user", "tool", "tool"]
