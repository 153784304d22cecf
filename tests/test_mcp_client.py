"""MCP servers as tools: the fixture server (SDK, stdio and streamable HTTP) through
the same ToolInvoker as the bot's own tools."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls import (
    InvalidArgumentsError,
    ToolFailedError,
    ToolHiddenError,
    ToolInvoker,
    ToolTimeoutError,
    UnknownToolError,
)
from groupmate.function_calls.remote import McpSettings, McpTools
from groupmate.testing.stub_llm import Reply, StubLLM, calls, text
from tests import bots
from tests.conftest import eventually, make_ctx
from tests.mcp_servers import fixture_server_http, fixture_server_stdio

SECRET = "groupmate-secret-that-must-stay-home"


def settings(**servers: dict[str, Any]) -> McpSettings:
    return parse_config({"mcp": {"servers": servers}}, environ={}).mcp


@contextlib.asynccontextmanager
async def started(mcp: McpSettings, **options: Any) -> AsyncIterator[tuple[McpTools, ToolInvoker]]:
    """The servers started, and an invoker whose registry holds only their tools."""
    tools = McpTools(mcp, **options)
    await tools.start()
    try:
        yield tools, ToolInvoker(tools.toolset, call_timeout=600)
    finally:
        await tools.aclose()


@pytest.fixture
async def fixture_tools() -> AsyncIterator[tuple[McpTools, ToolInvoker]]:
    os.environ["GROUPMATE_TEST_SECRET"] = SECRET  # groupmate's own environment
    entry = {
        **fixture_server_stdio(),
        "env": {"GIVEN": "from-config"},
        "tools": {"deny": ["sleep"]},
        "timeout": 5,
    }
    try:
        async with started(settings(fx=entry), health_interval=0.5) as running:
            yield running
    finally:
        os.environ.pop("GROUPMATE_TEST_SECRET", None)


async def run(invoker: ToolInvoker, name: str, arguments: Any, **ctx: Any) -> Any:
    result = await invoker.run(make_ctx(**ctx), name, arguments)
    return result.data


async def test_tools_are_listed_with_the_prefix_and_called(
    fixture_tools: tuple[McpTools, ToolInvoker],
) -> None:
    _, invoker = fixture_tools
    names = invoker.registry.names()
    assert "fx__add" in names and "fx__whoami" in names
    assert "fx__sleep" not in names  # denied in the config
    assert "fx__broken" not in names  # its schema is invalid: skipped, the rest work
    assert await run(invoker, "fx__add", {"a": 2, "b": 40}) == "42"
    add = invoker.registry.get("fx__add")
    assert add.parameters["required"] == ["a", "b"]
    assert add.parameters["additionalProperties"] is False  # cleaned like ours


async def test_an_invalid_schema_is_skipped_with_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    tools = McpTools(settings(fx=fixture_server_stdio()))
    await tools.start()
    try:
        assert any(
            "broken" in r.getMessage() and "skipped" in r.getMessage() for r in caplog.records
        )
        assert "fx__add" in tools.toolset
    finally:
        await tools.aclose()


async def test_stage_one_refuses_before_the_server_is_asked(
    fixture_tools: tuple[McpTools, ToolInvoker],
) -> None:
    _, invoker = fixture_tools
    with pytest.raises(InvalidArgumentsError) as refused:
        await run(invoker, "fx__add", {"a": "two", "b": 1, "c": 3})
    report = str(refused.value)
    assert "a:" in report and "c" in report  # a wrong type and an unknown field, both named


async def test_a_tool_side_error_goes_back_as_a_repairable_report(
    fixture_tools: tuple[McpTools, ToolInvoker],
) -> None:
    _, invoker = fixture_tools
    with pytest.raises(ToolFailedError) as failed:
        await run(invoker, "fx__jam", {})
    assert str(failed.value) == "the widget is jammed"
    assert not failed.value.internal  # the model sees the server's words and may retry


async def test_the_server_gets_its_env_and_not_groupmates(
    fixture_tools: tuple[McpTools, ToolInvoker],
) -> None:
    _, invoker = fixture_tools
    assert await run(invoker, "fx__env", {"name": "GIVEN"}) == "from-config"
    assert await run(invoker, "fx__env", {"name": "GROUPMATE_TEST_SECRET"}) == "<unset>"
    assert await run(invoker, "fx__env", {"name": "PATH"}) != "<unset>"


async def test_chat_and_sender_reach_a_server_only_when_its_config_asks() -> None:
    for pass_context, expected in ((False, "no context given"), (True, None)):
        entry = {**fixture_server_stdio(), "pass_context": pass_context}
        async with started(settings(fx=entry)) as (_, invoker):
            said = json.loads(await run(invoker, "fx__whoami", {}, chat_id="g-7", sender_id="u-9"))
        if expected is not None:
            assert said == expected
        else:
            assert said["chat_id"] == "g-7" and said["sender_id"] == "u-9"


async def test_images_are_named_not_passed_on(fixture_tools: tuple[McpTools, ToolInvoker]) -> None:
    _, invoker = fixture_tools
    said = await run(invoker, "fx__picture", {})
    assert said.startswith("a red square\n")
    assert "image (image/png)" in said and "iVBOR" not in said


async def test_a_changed_tool_list_is_picked_up(
    fixture_tools: tuple[McpTools, ToolInvoker],
) -> None:
    tools, invoker = fixture_tools
    assert "fx__extra" not in invoker.registry
    tools.servers[0].health_interval = 3600  # only the notification can bring it now
    await asyncio.sleep(0.6)  # let the watcher start its long wait
    assert await run(invoker, "fx__grow", {}) == "grown"
    await eventually(lambda: "fx__extra" in invoker.registry, within=5)
    assert await run(invoker, "fx__extra", {}) == "extra ran"


async def test_scope_and_admin_only_hide_a_servers_tools() -> None:
    entry = {**fixture_server_stdio(), "admin_only": True, "scope": "group"}
    async with started(settings(fx=entry)) as (_, invoker):
        with pytest.raises(ToolHiddenError):
            await run(invoker, "fx__add", {"a": 1, "b": 1}, is_admin=False)
        with pytest.raises(ToolHiddenError):
            await run(invoker, "fx__add", {"a": 1, "b": 1}, is_admin=True, chat_type="private")
        assert await run(invoker, "fx__add", {"a": 1, "b": 1}, is_admin=True) == "2"


async def test_a_hung_call_times_out_and_the_next_one_runs() -> None:
    async with started(settings(fx={**fixture_server_stdio(), "timeout": 1})) as (_, invoker):
        began = time.monotonic()
        with pytest.raises(ToolTimeoutError):
            await run(invoker, "fx__sleep", {"seconds": 3600})
        assert time.monotonic() - began < 3
        assert await run(invoker, "fx__add", {"a": 1, "b": 2}) == "3"


def _dead(pid: int) -> bool:
    """The process is gone, or a zombie its parent has yet to reap: it answers nothing."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status


async def test_a_killed_server_gives_a_clear_error_then_recovers(
    fixture_tools: tuple[McpTools, ToolInvoker],
) -> None:
    tools, invoker = fixture_tools
    server = tools.servers[0]
    pid = int(await run(invoker, "fx__pid", {}))
    os.kill(pid, signal.SIGKILL)
    await eventually(lambda: _dead(pid))
    try:
        await run(invoker, "fx__add", {"a": 1, "b": 1})
    except ToolFailedError as exc:
        assert "stopped answering" in str(exc) and not exc.internal
    except UnknownToolError:
        pass  # the health check saw it first: its tools are already gone
    else:
        raise AssertionError("a call to a killed server succeeded")
    await eventually(lambda: server.state == "up" and server.restarts == 1, within=15)
    assert await run(invoker, "fx__add", {"a": 1, "b": 1}) == "2"
    assert int(await run(invoker, "fx__pid", {})) != pid


async def test_a_dead_server_offers_no_tools() -> None:
    began = time.monotonic()
    async with started(settings(gone={"command": "/nonexistent/mcp-server"})) as (tools, _):
        assert time.monotonic() - began < 5  # startup is not held by it
        assert tools.servers[0].state == "down"
        assert list(tools.servers[0]) == []


async def test_streamable_http_with_a_bearer_token(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    token = "tok-" + SECRET
    with fixture_server_http(token, tmp_path / "http.log") as server:
        config = {"url": server.url, "headers": {"Authorization": "Bearer ${FX_TOKEN}"}}
        good = parse_config({"mcp": {"servers": {"web": config}}}, environ={"FX_TOKEN": token})
        async with started(good.mcp) as (_, invoker):
            assert await run(invoker, "web__add", {"a": 20, "b": 22}) == "42"
        bad = parse_config({"mcp": {"servers": {"web": config}}}, environ={"FX_TOKEN": "wrong"})
        async with started(bad.mcp) as (tools, _):
            assert tools.servers[0].state == "down" and list(tools.servers[0]) == []
    assert token not in caplog.text and "wrong" not in caplog.text


async def test_a_hung_server_never_holds_the_chat(tmp_path: Path, stub: StubLLM) -> None:
    def report(body: dict[str, Any]) -> Reply:
        said = body["messages"][-1]["content"]
        return text("That tool timed out." if "timed out" in said else f"odd: {said}")

    stub.script(calls(("fx__sleep", {"seconds": 3600})), report, text("pong"))
    data = {
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "llm": {"base_url": stub.base_url, "api_key": "sk-test"},
        "mcp": {"servers": {"fx": {**fixture_server_stdio(), "timeout": 1}}},
    }
    async with Bot(parse_config(data, environ={})) as bot:
        began = time.monotonic()
        (first,) = await bot.handle(chat_message("@groupmate wait for the slow thing", "m1"))
        (second,) = await bot.handle(chat_message("@groupmate ping", "m2"))
        elapsed = time.monotonic() - began
    assert first.text == "That tool timed out."
    assert second.text == "pong"
    assert elapsed < 5  # one second for the hung call, not an hour


def chat_message(words: str, message_id: str) -> IncomingMessage:
    return bots.chat_message(words, message_id=message_id)
