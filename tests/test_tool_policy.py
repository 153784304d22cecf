"""The tools policy and a chat's switches: a tool denied or switched off is not shown to
the model and is refused on every path (a command, the REST API, an MCP client, the
model's own call), in plain words; rate limits count per user and per chat."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import BaseModel

from groupmate.bot.config import ConfigError, parse_config
from groupmate.function_calls import (
    MessageContext,
    ToolCall,
    ToolHiddenError,
    ToolInvoker,
    ToolPolicy,
    ToolRateLimitedError,
    ToolRegistry,
    ToolRule,
)
from groupmate.storage.changes import Requester
from groupmate.testing.stub_llm import StubLLM, calls, text
from tests.conftest import make_ctx
from tests.docs_pages import page
from tests.http_harness import TOKEN, Api, Servers, llm_section

NOT_AVAILABLE = "Sorry, that isn't available to you in this chat."
SERVE = {"chat_id": "g1", "user_id": "u-claude", "user_name": "Claude"}


def offered(stub: StubLLM, request: int = -1) -> set[str]:
    tools = stub.requests[request].get("tools") or []
    return {tool["function"]["name"] for tool in tools}


async def said(api: Api, words: str, **fields: Any) -> str:
    replies = await api.say(words, **fields)
    return "\n".join(reply["text"] for reply in replies)


async def test_a_denied_tool_is_hidden_from_the_model_and_refused_everywhere(
    servers: Servers, stub: StubLLM
) -> None:
    policy = {"reminder_pause": {"who": "nobody"}, "reminder_delete": {"who": "admins"}}
    api = await servers.start(llm=llm_section(stub), mcp={"serve": SERVE}, tools={"policy": policy})
    await said(api, "/remind every monday at 9 standup")
    assert await said(api, "/pause #1") == NOT_AVAILABLE
    assert await said(api, "/cancel #1") == NOT_AVAILABLE  # a member
    answer = await api.client.post("/v1/chats/g1/reminders/1/pause")
    assert answer.status_code == 403 and answer.json()["reason"] == "policy"
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    async with Client(streamable_http_client(f"{api.base_url}/mcp", http_client=http)) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        assert "reminder_pause" not in listed and "reminder_list" in listed
        refused = await client.call_tool("reminder_pause", {"reminder_id": "1"})
        assert refused.is_error
    # The model is not shown it; called anyway, it is refused and never runs.
    stub.script(calls(("reminder_pause", {"reminder_id": "1"})), text("It is paused."))
    await said(api, "@groupmate pause the standup")
    # The message is shown the reminder tools it needs, the denied one left out.
    assert "reminder_pause" not in offered(stub, 0) and "reminder_resume" in offered(stub, 0)
    assert "not available" in stub.requests[1]["messages"][-1]["content"]
    listing = await api.client.get("/v1/chats/g1/reminders/1")
    assert listing.json()["status"] == "active"  # never paused on any path
    # An admin may delete; the API token holder is one.
    assert "Deleted" in await said(api, "/cancel #1", sender_id="u-admin")


async def test_rules_by_chat_scope_and_effect(servers: Servers) -> None:
    policy = {
        "reminder_list": {"chats": {"deny": ["g1*"]}},
        "reminder_history": {"scope": "private"},
        "effect:write": {"chats": {"allow": ["g1", "g2", "dm-*"]}},
    }
    api = await servers.start(tools={"policy": policy})
    assert await said(api, "/reminders") == NOT_AVAILABLE
    assert "no active reminders" in await said(api, "/reminders", chat_id="g2")
    assert await said(api, "/history") == NOT_AVAILABLE
    assert "No reminder has gone off" in await said(
        api, "/history", chat_id="dm-alice", chat_type="private"
    )
    assert "⏰" in await said(api, "/remind in 10 minutes tea")
    assert await said(api, "/remind in 10 minutes tea", chat_id="g3") == NOT_AVAILABLE


async def test_rate_limits_count_per_user_and_per_chat(servers: Servers) -> None:
    policy = {
        "reminder_list": {"per_user_per_hour": 2},
        "reminder_set": {"per_chat_per_hour": 1},
    }
    api = await servers.start(tools={"policy": policy})
    for _ in range(2):
        assert "no active reminders" in await said(api, "/reminders")
    limited = await said(api, "/reminders")
    assert limited.startswith("That has been used too often for now") and "60 min" in limited
    assert "no active reminders" in await said(api, "/reminders", sender_id="u-bob")
    body = {"created_by": "u-alice", "type": "daily", "time": "09:00", "content": "a"}
    assert (await api.client.post("/v1/chats/g1/reminders", json=body)).status_code == 201
    again = await api.client.post("/v1/chats/g1/reminders", json=body)
    assert again.status_code == 429 and int(again.headers["Retry-After"]) > 3500
    assert (await api.client.post("/v1/chats/g2/reminders", json=body)).status_code == 201


async def test_a_chat_admin_switches_a_tool_off_and_on(servers: Servers, stub: StubLLM) -> None:
    api = await servers.start(llm=llm_section(stub))
    listing = await said(api, "/tools")
    assert "• reminder_list · on · read" in listing and "/tools off <name>" in listing
    refused = await said(api, "/tools off reminder_list")
    assert refused == "Only a chat admin can switch tools on or off."
    unknown = await said(api, "/tools off teleport", sender_id="u-admin")
    assert "There is no tool called teleport here" in unknown
    assert "can't switch itself off" in await said(
        api, "/tools off chat_tools", sender_id="u-admin"
    )
    assert "• reminder_list · off" in await said(
        api, "/tools off reminder_list", sender_id="u-admin"
    )
    switched_off = await said(api, "/reminders")
    assert switched_off.startswith("That is switched off in this chat")
    assert "no active reminders" in await said(api, "/reminders", chat_id="g2")  # this chat only
    stub.script(text("Nothing to list."))
    await said(api, "@groupmate what reminders are set?")
    assert "reminder_list" not in offered(stub) and "reminder_history" in offered(stub)
    state = {t["name"]: t for t in (await api.client.get("/v1/chats/g1/tools")).json()}
    assert (state["reminder_list"]["offered"], state["reminder_list"]["hidden"]) == (
        False,
        "switched_off",
    )
    on = await api.client.put("/v1/chats/g1/tools", json={"on": ["reminder_list"]})
    assert on.status_code == 200 and on.json() == {"off": []}
    assert "no active reminders" in await said(api, "/reminders")
    bad = await api.client.put("/v1/chats/g1/tools", json={"off": ["teleport"]})
    assert bad.status_code == 422


def test_policy_keys_and_values_are_checked_at_load() -> None:
    with pytest.raises(ConfigError, match="effect"):
        parse_config({"tools": {"policy": {"effect:bogus": {}}}}, environ={})
    with pytest.raises(ConfigError):
        parse_config({"tools": {"policy": {"web_search": {"who": "everybody"}}}}, environ={})
    with pytest.raises(ConfigError):
        parse_config({"tools": {"policy": {"web_search": {"per_user_per_hour": 0}}}}, environ={})


class _Ref(BaseModel):
    reminder_id: str


async def test_creator_or_admin_limits_a_call_to_what_the_sender_created() -> None:
    registry = ToolRegistry()
    seen: list[bool] = []

    @registry.tool(name="poke", description="Poke a reminder.")
    async def poke(ctx: MessageContext, args: _Ref) -> str:
        seen.append(ctx.owner_only)
        return "poked"

    policy = ToolPolicy({"poke": ToolRule(who="creator_or_admin")}, monotonic=lambda: 0.0)
    invoker = ToolInvoker(registry, policy=policy)
    await invoker.run(make_ctx(), "poke", {"reminder_id": "1"})
    await invoker.run(make_ctx(is_admin=True), "poke", {"reminder_id": "1"})
    assert seen == [True, False]
    # The reminders honour it: a member a reminder is for may snooze it, unless owner_only.
    assert Requester("u-bob").owner_only is False


def test_rate_windows_slide_and_a_refused_call_is_not_counted() -> None:
    now = [0.0]
    policy = ToolPolicy({"t*": ToolRule(per_user_per_hour=2)}, monotonic=lambda: now[0])
    ctx = make_ctx()
    policy.take("tea", "write", ctx)
    now[0] = 1000.0
    policy.take("tea", "write", ctx)
    with pytest.raises(ToolRateLimitedError) as limited:
        policy.take("tea", "write", ctx)
    assert limited.value.retry_after == 2600
    with pytest.raises(ToolRateLimitedError):
        policy.take("toast", "write", ctx)  # the tools one rule covers share its limit
    policy.take("tea", "write", make_ctx(sender_id="u-bob"))  # per user
    now[0] = 3600.0
    policy.take("toast", "write", ctx)  # the first call has left the hour
    with pytest.raises(ToolRateLimitedError):
        policy.take("tea", "write", ctx)


def test_a_hidden_call_says_why() -> None:
    registry = ToolRegistry()

    @registry.tool(name="wipe", description="Wipe.", effect="write")
    async def wipe(ctx: MessageContext) -> str:
        return "wiped"

    policy = ToolPolicy({"effect:write": ToolRule(who="admins")}, monotonic=lambda: 0.0)
    invoker = ToolInvoker(registry, policy=policy)
    with pytest.raises(ToolHiddenError) as hidden:
        invoker.validate_tool_call(make_ctx(), ToolCall("wipe", {}))
    assert hidden.value.reason == "policy" and hidden.value.outcome == "hidden"
    assert invoker.offered(make_ctx()) == [] and invoker.offered(make_ctx(is_admin=True))


def test_the_readme_policy_example_is_a_valid_config() -> None:
    readme = page("operators/policy-and-audit.md")
    (block,) = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "policy:" in b]
    config = parse_config(yaml.safe_load(block), environ={})
    rules = config.tools.policy
    assert rules["reminder_delete"].who == "creator_or_admin"
    assert rules["web_search"].chats.deny == ["tg:-100123"]
    policy = ToolPolicy(rules, monotonic=lambda: 0.0)
    assert policy.who("time__now", "read") == "admins"
    assert [key for key, _ in policy.rules_for("read_url", "external")] == ["effect:external"]


async def test_admins_in_a_private_chat_are_the_bots_own(servers: Servers) -> None:
    api = await servers.start(tools={"policy": {"reminder_list": {"who": "admins"}}})
    dm = {"chat_id": "dm-alice", "chat_type": "private"}
    # Alice owns her private chat, but that does not make her one of the bot's admins.
    assert await said(api, "/reminders", **dm) == NOT_AVAILABLE
    assert "no active reminders" in await said(
        api, "/reminders", chat_id="dm-admin", chat_type="private", sender_id="u-admin"
    )
    assert await said(api, "/reminders") == NOT_AVAILABLE  # a member of a group
    admin = await said(api, "/reminders", sender_id="u-admin")
    assert "no active reminders" in admin


def test_a_policy_key_that_names_no_tool_is_found() -> None:
    policy = ToolPolicy(
        {
            "web_serch": ToolRule(who="admins"),
            "time__*": ToolRule(),
            "effect:external": ToolRule(),
            "reminder_*": ToolRule(),
        },
        monotonic=lambda: 0.0,
    )
    assert policy.unmatched(["web_search", "reminder_set"]) == ["web_serch", "time__*"]
