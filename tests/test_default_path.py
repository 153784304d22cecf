"""The default path, end to end: the minimal config a new user writes (`llm.base_url`,
`llm.model`, `llm.tool_mode`) against a model server that says nothing about its window
and refuses, as llama.cpp's does, any request over 4,096 tokens; every built-in tool,
two plugins and six real MCP servers from PyPI and npm (about 160 tools). In native and
prompt mode: small talk, a request the model answers with a built-in, a summary, an MCP
tool with a repair round; every message answered, no request refused or over the window.

Also the same path through `groupmate serve`, as a user starts it (the before-stop
smoke test's path).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.server_info import DEFAULT_CONTEXT_TOKENS
from groupmate.testing import stub_llm as s
from tests import bots
from tests.mcp_servers import default_path_servers
from tests.ports import free_port
from tests.selection.catalog import PLUGIN_MODULES
from tests.tool_venv import ROOT, stop_process, wait_until_up

pytestmark = pytest.mark.slow

ANSWER = "Hello from the model."


def minimal_config(work: Path, stub: s.StubLLM, mode: str) -> dict[str, Any]:
    """What the README's quick start has a user write, and the tools they add."""
    return {
        "storage": {"url": f"sqlite:///{work / 'bot.db'}"},
        "llm": {"base_url": stub.base_url, "model": "local-model", "tool_mode": mode},
        "plugins": [{"module": module} for module in PLUGIN_MODULES],
        "mcp": {"servers": default_path_servers(work)},
    }


@pytest.fixture
def silent_4k(stub: s.StubLLM) -> Iterator[s.StubLLM]:
    """The test kit's model server as llama-cpp-python's: no word of its window, and a
    4,096-token window it enforces."""
    stub.context_tokens = None
    stub.window = DEFAULT_CONTEXT_TOKENS
    yield stub


def said(text: str, number: int) -> IncomingMessage:
    return bots.chat_message(f"@groupmate {text}", sender_id="u-ann", message_id=f"m{number}")


def call(mode: str, name: str, arguments: dict[str, Any]) -> s.Reply:
    """A tool call as the model writes it in `mode`."""
    if mode == "native":
        return s.calls((name, arguments))
    return s.text(
        f'<tool_call>\n{{"name": "{name}", "arguments": {json.dumps(arguments)}}}\n</tool_call>'
    )


def shown(body: dict[str, Any]) -> str:
    """Everything a request shows the model of its tools."""
    return json.dumps(body.get("tools", []), ensure_ascii=False) + str(
        body["messages"][0]["content"]
    )


def tool_result(body: dict[str, Any]) -> str:
    """The last tool result the model was given (native: a tool message; prompt mode: a
    user message with the result block)."""
    return str(body["messages"][-1]["content"])


@pytest.mark.parametrize("mode", ["native", "prompt"])
async def test_every_message_is_answered_on_the_default_path(
    tmp_path: Path, silent_4k: s.StubLLM, mode: str
) -> None:
    stub = silent_4k

    def tokyo(body: dict[str, Any]) -> s.Reply:
        # The server's answer, as the tool's result was given to the model.
        found = re.search(r'datetime\\?"\s*:\s*\\?"([0-9T:.+-]+)', tool_result(body))
        assert found is not None, tool_result(body)
        return s.text(f"In Tokyo it is {found[1]}")

    stub.script(
        s.text(ANSWER),  # "hi there!": small talk
        call(mode, "reminder_list", {}),  # a request the grammar leaves to the model
        call(mode, "time__get_current_time", {"timezone": 42}),  # wrong: repaired
        call(mode, "time__get_current_time", {"timezone": "Asia/Tokyo"}),
        tokyo,
    )
    async with Bot(parse_config(minimal_config(tmp_path, stub, mode), environ={})) as bot:
        assert bot.llm is not None and bot.mcp_tools is not None
        assert bot.llm_context is not None and bot.llm_context.tokens == DEFAULT_CONTEXT_TOKENS
        assert len(bot.registry) >= 150  # built-ins, both plugins, six servers
        (hello,) = await bot.handle(said("hi there!", 1))
        (listed,) = await bot.handle(said("what reminders do we have here?", 2))
        (tokyo_time,) = await bot.handle(said("what time is it in Tokyo?", 3))
    assert hello.text == ANSWER
    assert listed.text == "There are no active reminders in this chat."  # the tool's own reply
    assert tokyo_time.text.startswith("In Tokyo it is 20")  # the real server's clock
    assert stub.pending == 0 and stub.refused == []
    assert all(s.request_tokens(body) <= DEFAULT_CONTEXT_TOKENS for body in stub.requests)
    small, listing, _, retried, _ = stub.requests
    assert "reminder_list" not in shown(small)  # small talk: no tool list
    assert "reminder_list" in shown(listing) and "time__get_current_time" in shown(retried)
    assert "timezone" in tool_result(retried)  # the model was told what to fix


@pytest.mark.parametrize("mode", ["native", "prompt"])
def test_groupmate_serve_answers_hi_with_the_minimal_config(
    tmp_path: Path, silent_4k: s.StubLLM, mode: str
) -> None:
    """The path the before-stop smoke test takes: a config file with base_url, model and
    tool_mode, `groupmate serve`, and "@groupmate hi there!" over its HTTP API; with the
    MCP servers a user adds."""
    silent_4k.fallback = s.text(ANSWER)
    port = free_port()
    config = minimal_config(tmp_path, silent_4k, mode)
    config["adapters"] = {"webhook": {"host": "127.0.0.1", "port": port}}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GROUPMATE_"))}
    log = tmp_path / "serve.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "groupmate.bot.cli", "--config", str(path), "serve"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_up(
            process, f"http://127.0.0.1:{port}/healthz", what="groupmate serve", log=log, within=60
        )
        body = {
            "chat_id": "smoke",
            "chat_type": "group",
            "sender_id": "u1",
            "sender_name": "Ann",
            "text": "@groupmate hi there!",
            "message_id": "m1",
        }
        replies = httpx.post(f"http://127.0.0.1:{port}/v1/messages", json=body, timeout=60).json()
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).json()
    finally:
        stop_process(process)
    assert [reply["text"] for reply in replies["replies"]] == [ANSWER], log.read_text()[-2000:]
    assert "llm_problem" not in health
    assert silent_4k.refused == []
