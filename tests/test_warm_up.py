"""The warm-up: one request at startup that puts the prompt's stable start into the LLM
server's prefix cache, in the background, reported by /healthz. Real uvicorn, a stub LLM
of each test's own (a late warm-up of another test's bot must not land in it)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from groupmate.testing import stub_llm as s
from tests.conftest import eventually
from tests.http_harness import Api, Servers, llm_section
from tests.ports import free_port

_CONTEXT = "\n\n[Context: "


@pytest.fixture
def llm() -> Iterator[s.StubLLM]:
    stub = s.StubLLM()
    stub.start()
    yield stub
    stub.warm_up_gate.set()
    stub.stop()


async def _health(api: Api) -> dict[str, Any]:
    response = await api.client.get("/healthz")
    assert response.status_code == 200
    health: dict[str, Any] = response.json()
    return health


async def _llm_state(api: Api) -> str:
    state: str = (await _health(api))["llm"]
    return state


def _stable(system: str) -> str:
    """A system prompt without its volatile context line (prompt mode puts it last)."""
    return system.split(_CONTEXT, 1)[0]


@pytest.mark.parametrize("mode", ["native", "prompt"])
async def test_one_request_warms_exactly_what_the_first_message_sends(
    servers: Servers, llm: s.StubLLM, mode: str
) -> None:
    api = await servers.start(llm={**llm_section(llm), "tool_mode": mode})
    await eventually(lambda: api.bot.llm_status == "ready")
    [warm] = llm.warm_ups
    assert warm["max_tokens"] == 1
    llm.script(s.text("Hello Alice!"))
    (reply,) = await api.say("@groupmate hello")
    assert reply["text"] == "Hello Alice!"
    [first] = llm.requests
    assert llm.warm_ups == [warm]  # one warm-up, however many messages follow
    assert first["max_tokens"] == 512 and first["temperature"] == 0  # the defaults
    assert warm["temperature"] == first["temperature"] and warm["model"] == first["model"]
    warm_system, first_system = warm["messages"][0], first["messages"][0]
    assert warm_system["role"] == first_system["role"] == "system"
    # Small talk is offered no tools, the warm-up ("hi") neither.
    assert "tools" not in warm and "tools" not in first
    if mode == "native":
        # The system prompt, byte for byte as the message sent it.
        assert json.dumps(warm_system) == json.dumps(first_system)
    else:
        # The clock, chat and sender come after the stable part.
        assert _CONTEXT in first_system["content"]
        assert _stable(warm_system["content"]) == _stable(first_system["content"])
    # A message that needs tools starts with what the warm-up had the server read.
    llm.script(s.text("None yet."))
    await api.say("@groupmate what reminders do we have here?")
    tooled = llm.requests[1]["messages"][0]["content"]
    assert tooled.startswith(_stable(warm_system["content"]).rstrip())
    offered = llm.requests[1].get("tools") or []
    assert "reminder_list" in (tooled if mode == "prompt" else json.dumps(offered))


async def test_auto_mode_warms_prompt_mode_where_the_server_rejects_tools(
    servers: Servers, llm: s.StubLLM
) -> None:
    def rejects_tools(body: dict[str, Any]) -> s.Reply:
        if "tools" in body:
            return s.error(400, "tools is not supported by this model")
        return s.text("")

    llm.warm_up_reply = rejects_tools
    api = await servers.start(llm={**llm_section(llm), "tool_mode": "auto"})
    await eventually(lambda: api.bot.llm_status == "ready")
    rejected, warm = llm.warm_ups
    assert "tools" in rejected and "tools" not in warm
    # The first message goes straight to prompt mode, whose start is now cached.
    llm.script(s.text("Hi!"))
    (reply,) = await api.say("@groupmate hello")
    assert reply["text"] == "Hi!"
    [first] = llm.requests
    assert "tools" not in first
    assert _stable(warm["messages"][0]["content"]) == _stable(first["messages"][0]["content"])


async def test_healthz_says_warming_until_the_warm_up_is_answered(
    servers: Servers, llm: s.StubLLM
) -> None:
    llm.warm_up_gate.clear()  # the server holds the warm-up request
    async with asyncio.timeout(10):  # startup does not wait for it
        api = await servers.start(llm=llm_section(llm))
    await eventually(lambda: len(llm.warm_ups) == 1)
    assert await _llm_state(api) == "warming"
    # Startup is over and messages are handled while the warm-up waits.
    (listed,) = await api.say("/reminders")
    assert listed["text"] == "There are no active reminders in this chat."
    assert await _llm_state(api) == "warming"
    llm.warm_up_gate.set()
    await eventually(lambda: api.bot.llm_status == "ready")
    assert await _llm_state(api) == "ready"
    assert len(llm.warm_ups) == 1


async def test_a_failed_warm_up_is_reported_and_the_bot_still_answers(
    servers: Servers, llm: s.StubLLM, caplog: pytest.LogCaptureFixture
) -> None:
    llm.warm_up_reply = s.error(500, "out of memory")
    api = await servers.start(llm=llm_section(llm))
    await eventually(lambda: api.bot.llm_status != "warming")
    assert await _llm_state(api) == "warm-up failed"
    assert len(llm.warm_ups) == 1  # not retried: one request, whatever its outcome
    assert "LLM warm-up failed" in caplog.text
    assert "sk-test" not in caplog.text
    llm.script(s.text("Still here."))
    (reply,) = await api.say("@groupmate are you there?")
    assert reply["text"] == "Still here."


async def test_an_unreachable_server_leaves_the_bot_answering(servers: Servers) -> None:
    port = free_port()  # closed again: nothing listens there
    section = {"base_url": f"http://127.0.0.1:{port}/v1", "api_key": "sk-test"}
    api = await servers.start(llm=section)
    await eventually(lambda: api.bot.llm_status != "warming")
    assert await _llm_state(api) == "warm-up failed"
    assert api.bot.llm is not None and api.bot.llm.context_tokens == 4096  # nothing said
    (reply,) = await api.say("/remind in 10 minutes stretch")
    assert "Reminder #1" in reply["text"]


async def test_warm_up_off_sends_nothing(servers: Servers, llm: s.StubLLM) -> None:
    api = await servers.start(llm={**llm_section(llm), "warm_up": False})
    assert await _llm_state(api) == "ready"
    llm.script(s.text("Hello!"))
    (reply,) = await api.say("@groupmate hello")
    assert reply["text"] == "Hello!"
    assert llm.warm_ups == [] and len(llm.requests) == 1


async def test_healthz_says_off_without_a_model(servers: Servers) -> None:
    api = await servers.start()
    assert await _llm_state(api) == "off"
