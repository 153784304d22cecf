"""groupmate as an MCP server, driven by the SDK's own client: `groupmate mcp` over
stdio, and `/mcp` on the HTTP API behind the bearer token."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from groupmate.storage import ReminderService
from tests.http_harness import TOKEN, Servers
from tests.tool_venv import ROOT

SERVE = {"chat_id": "g-mcp", "user_id": "u-claude", "user_name": "Claude"}


def texts(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def stored(url: str, chat_id: str) -> list[Any]:
    async with ReminderService.open(url) as service:
        found, _ = await service.list_for_chat(chat_id)
    return found


async def test_stdio_lists_and_sets_the_configured_chats_reminders(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {"storage": {"url": url}, "bot": {"timezone": "Europe/Berlin"}, "mcp": {"serve": SERVE}}
        )
    )
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "groupmate.bot.cli", "--config", str(config), "mcp"],
        cwd=ROOT,
    )
    async with Client(params, mode="legacy") as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert {"reminder_set", "reminder_list", "reminder_delete"} <= set(names)
        made = await client.call_tool(
            "reminder_set", {"when": "every monday at 9am", "content": "send the report"}
        )
        assert not made.is_error, texts(made)
        assert "every Monday" in texts(made) and "send the report" in texts(made)
        # The chat is the configured one: a caller cannot name another.
        elsewhere = await client.call_tool(
            "reminder_set", {"when": "in 5 minutes", "content": "x", "chat_id": "g-other"}
        )
        assert elsewhere.is_error and "chat_id" in texts(elsewhere)
        listed = await client.call_tool("reminder_list", {})
        assert "send the report" in texts(listed)
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error and "no_such_tool" in texts(unknown)
    (reminder,) = await stored(url, "g-mcp")
    assert reminder.content == "send the report"
    assert reminder.created_by == "u-claude"
    assert await stored(url, "g-other") == []


@pytest.fixture
async def servers(tmp_path: Path) -> Any:
    running = Servers(tmp_path)
    yield running
    await running.aclose()


async def test_http_mcp_needs_the_token_and_acts_in_the_configured_chat(
    servers: Servers,
) -> None:
    api = await servers.start(mcp={"serve": SERVE})
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    async with Client(streamable_http_client(f"{api.base_url}/mcp", http_client=http)) as client:
        made = await client.call_tool("reminder_set", {"when": "in 10 minutes", "content": "tea"})
        assert not made.is_error, texts(made)
    found, _ = await api.bot.reminders.list_for_chat("g-mcp")  # type: ignore[union-attr]
    assert [r.content for r in found] == ["tea"]
    async with httpx.AsyncClient() as anonymous:
        refused = await anonymous.post(f"{api.base_url}/mcp", json={})
    assert refused.status_code == 401


async def test_http_mcp_is_not_served_without_a_chat(servers: Servers) -> None:
    api = await servers.start()
    answer = await api.client.post("/mcp", json={})
    assert answer.status_code == 404
