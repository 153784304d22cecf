"""One gate: every state-changing action, whatever its source, is one call through the
bot's `ToolInvoker`, and the audit log holds a row for each: the seven REST reminder
actions, each slash command that changes state, the accepted offer, the model's call,
an MCP client's call and the dashboard's "run". A route or command that called a
handler or a domain function around the invoker would leave its row out."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from groupmate.testing.stub_llm import StubLLM, calls, text
from tests.http_harness import TOKEN, Api, Servers, llm_section

SERVE = {"chat_id": "g1", "user_id": "u-claude", "user_name": "Claude"}


async def audit(api: Api, **query: Any) -> list[dict[str, Any]]:
    answer = await api.client.get("/v1/audit", params={"limit": 200, **query})
    assert answer.status_code == 200, answer.text
    entries: list[dict[str, Any]] = answer.json()["entries"]
    return entries


async def created(api: Api, **body: Any) -> dict[str, Any]:
    answer = await api.client.post(
        "/v1/chats/g1/reminders", json={"created_by": "u-alice", "created_by_name": "Alice", **body}
    )
    assert answer.status_code == 201, answer.text
    made: dict[str, Any] = answer.json()
    return made


async def test_every_entry_point_goes_through_the_invoker_and_is_audited(
    servers: Servers, stub: StubLLM
) -> None:
    api = await servers.start(
        llm=llm_section(stub), mcp={"serve": SERVE}, reminders={"fast_path": False}
    )
    url = "/v1/chats/g1/reminders"

    # The seven REST actions.
    daily = await created(api, type="daily", time="07:00", content="pills")
    assert (await api.client.patch(f"{url}/{daily['id']}", json={"content": "vitamins"})).is_success
    assert (await api.client.post(f"{url}/{daily['id']}/pause")).is_success
    assert (await api.client.post(f"{url}/{daily['id']}/resume")).is_success
    # Not delivered yet: refused (409), and audited as refused all the same.
    assert (await api.client.post(f"{url}/{daily['id']}/snooze")).status_code == 409
    assert (await api.client.delete(f"{url}/{daily['id']}")).status_code == 204
    settings = {"timezone": "Europe/London", "remind_others": "admins"}
    assert (await api.client.put("/v1/chats/g1/settings", json=settings)).is_success

    # Slash commands, as a member and as an admin.
    await api.say("/remind tomorrow at 9 call mom")
    await api.say("/remind every monday at 9 standup")
    await api.say("/edit #3 at 10")
    await api.say("/pause #3")
    await api.say("/resume #3")
    await api.say("/snooze #3 10m")
    await api.say("/cancel #2")
    await api.say("/tz Europe/Berlin", sender_id="u-admin", sender_name="Admin")
    await api.say("/settings remind_others members", sender_id="u-admin", sender_name="Admin")
    await api.say("/tools off summary", sender_id="u-admin", sender_name="Admin")
    await api.say("/budget 50000", sender_id="u-admin", sender_name="Admin")

    # The model's own call, and an offer accepted with "yes".
    stub.script(
        calls(("reminder_set", {"when": "in 45 minutes", "content": "take the cake out"})),
        text("Okay, tomorrow at 09:00."),
    )
    await api.say("@groupmate in 45 minutes remind me to take the cake out")
    (offer,) = await api.say("@groupmate remind me tomorrow at 9 to water the plants")
    assert "Reply yes" in offer["text"]
    (done,) = await api.say("yes")
    assert "water the plants" in done["text"]

    # An MCP client, and the dashboard's run form.
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    async with Client(streamable_http_client(f"{api.base_url}/mcp", http_client=http)) as client:
        made = await client.call_tool("reminder_set", {"when": "in 2 hours", "content": "tea"})
        assert not made.is_error
    run = await api.client.post(
        "/v1/tools/reminder_set/run",
        json={"chat_id": "g1", "arguments": {"when": "in 3 hours", "content": "stretch"}},
    )
    assert run.json()["outcome"] == "ok", run.text

    rows = await audit(api)
    seen = {(row["source"], row["tool"]) for row in rows}
    assert seen == {
        ("rest", "reminder_set"),
        ("rest", "reminder_update"),
        ("rest", "reminder_pause"),
        ("rest", "reminder_resume"),
        ("rest", "reminder_snooze"),
        ("rest", "reminder_delete"),
        ("rest", "reminder_rules"),
        ("rest", "set_timezone"),
        ("command", "reminder_set"),
        ("command", "reminder_update"),
        ("command", "reminder_pause"),
        ("command", "reminder_resume"),
        ("command", "reminder_snooze"),
        ("command", "reminder_delete"),
        ("command", "set_timezone"),
        ("command", "reminder_rules"),
        ("command", "chat_tools"),
        ("command", "token_budget"),
        ("model", "reminder_set"),
        ("offer", "reminder_set"),
        ("mcp", "reminder_set"),
        ("dashboard", "reminder_set"),
    }
    # Reads are not audited: the list, the history, help.
    assert not {row["tool"] for row in rows} & {"reminder_list", "reminder_history", "help"}
    how = {row["source"]: row["auth"] for row in rows}
    assert how == {
        "rest": "token",
        "mcp": "token",
        "dashboard": "token",
        "command": "platform",
        "model": "platform",
        "offer": "platform",
    }
    by_source = {(row["source"], row["tool"]): row for row in rows}
    offer_row = by_source[("offer", "reminder_set")]
    assert (offer_row["sender_id"], offer_row["sender_name"]) == ("u-alice", "Alice")
    assert offer_row["outcome"] == "ok" and offer_row["target_label"] is not None
    assert by_source[("rest", "reminder_snooze")]["outcome"] == "refused"
    assert by_source[("mcp", "reminder_set")]["sender_id"] == "u-claude"
    # Newest first.
    ids = [row["id"] for row in rows]
    assert ids == sorted(ids, reverse=True)


async def test_the_audit_log_pages_and_filters(servers: Servers) -> None:
    api = await servers.start()
    for n in range(5):
        await created(api, type="daily", time=f"0{n}:00", content=f"task {n}")
    await api.client.post(
        "/v1/chats/g2/reminders",
        json={"created_by": "u-bob", "type": "daily", "time": "09:00", "content": "x" * 400},
    )
    first = (await api.client.get("/v1/audit", params={"chat_id": "g1", "limit": 3})).json()
    assert [e["arguments"]["content"] for e in first["entries"]] == ["task 4", "task 3", "task 2"]
    assert first["next_before"] is not None
    rest = (
        await api.client.get(
            "/v1/audit", params={"chat_id": "g1", "limit": 3, "before": first["next_before"]}
        )
    ).json()
    assert [e["arguments"]["content"] for e in rest["entries"]] == ["task 1", "task 0"]
    assert rest["next_before"] is None
    (other,) = (await api.client.get("/v1/audit", params={"chat_id": "g2"})).json()["entries"]
    # Long text is cut in the audit log: it is a summary, not a copy of the chat.
    assert len(other["arguments"]["content"]) == 120 and other["arguments"]["content"][-1] == "…"
    assert (await api.client.get("/v1/audit", params={"tool": "reminder_delete"})).json()[
        "entries"
    ] == []
    naive = await api.client.get("/v1/audit", params={"since": "2026-01-01T00:00:00"})
    assert naive.status_code == 422
    anonymous = await api.client.get("/v1/audit", headers={"Authorization": ""})
    assert anonymous.status_code == 401


async def test_the_grammars_fast_path_goes_through_the_invoker(servers: Servers) -> None:
    api = await servers.start()  # no model: the grammar reads the request whole
    (reply,) = await api.say("@groupmate remind me in 10 minutes to stretch")
    assert reply["text"].startswith("⏰")
    (row,) = await audit(api)
    assert (row["source"], row["auth"], row["tool"], row["outcome"]) == (
        "command",
        "platform",
        "reminder_set",
        "ok",
    )
    assert row["arguments"]["content"] == "stretch" and row["target_label"] == "#1"
