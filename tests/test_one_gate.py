"""One gate: every state-changing action, whatever its source, is one call through the
bot's `ToolInvoker`, and the audit log holds a row for each: the seven REST reminder
actions, each slash command that changes state, the accepted offer, the model's call,
an MCP client's call and the dashboard's "run". A route or command that called a
handler or a domain function around the invoker would leave its row out. Which routes
and commands change state is read from the app's router (every route, the ones left out
of the OpenAPI document too) and the command table, so a new one is called (and must
leave its row) or the test fails."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from fastapi.routing import iter_route_contexts
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from starlette.applications import Starlette
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from groupmate.bot.commands import Commands
from groupmate.bot.presses import ButtonData
from groupmate.storage import OutgoingMessage, SendError
from groupmate.testing.stub_llm import StubLLM, calls, text
from tests.conftest import FakeClock, eventually
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


# How to make each state-changing call of the test below; the test takes WHICH calls
# change state from the app's route table and the command table, so a route or command
# that is not here fails it. "{id}" is a live reminder's id, "{delivery}" a failed
# delivery's.
ROUTE_CALLS: dict[str, tuple[str, dict[str, Any] | None]] = {
    "POST /v1/messages": (
        "/v1/messages",
        {
            "chat_id": "g1",
            "chat_type": "group",
            "sender_id": "u-alice",
            "text": "/remind in 5 minutes tea",
            "message_id": "m1",
        },
    ),
    "POST /v1/chats/{chat_id}/reminders": (
        "/v1/chats/g1/reminders",
        {"created_by": "u-alice", "type": "daily", "time": "07:00", "content": "pills"},
    ),
    "PATCH /v1/chats/{chat_id}/reminders/{reminder_id}": (
        "/v1/chats/g1/reminders/{id}",
        {"content": "vitamins"},
    ),
    "POST /v1/chats/{chat_id}/reminders/{reminder_id}/pause": (
        "/v1/chats/g1/reminders/{id}/pause",
        None,
    ),
    "POST /v1/chats/{chat_id}/reminders/{reminder_id}/resume": (
        "/v1/chats/g1/reminders/{id}/resume",
        None,
    ),
    "POST /v1/chats/{chat_id}/reminders/{reminder_id}/snooze": (
        "/v1/chats/g1/reminders/{id}/snooze",
        None,
    ),
    "DELETE /v1/chats/{chat_id}/reminders/{reminder_id}": ("/v1/chats/g1/reminders/{id}", None),
    "PUT /v1/chats/{chat_id}/settings": ("/v1/chats/g1/settings", {"timezone": "Europe/London"}),
    "PUT /v1/chats/{chat_id}/tools": ("/v1/chats/g1/tools", {"off": ["summary"]}),
    "POST /v1/tools/{name}/run": (
        "/v1/tools/reminder_set/run",
        {"chat_id": "g1", "arguments": {"when": "in 3 hours", "content": "stretch"}},
    ),
    "POST /v1/deliveries/{delivery_id}/retry": ("/v1/deliveries/{delivery}/retry", None),
    "DELETE /v1/chats/{chat_id}": ("/v1/chats/g2", None),
    # Bob's "Remind me too" on Alice's reminder in a playground chat (its data: {press}).
    "POST /v1/chats/{chat_id}/presses": (
        "/v1/chats/web:gate/presses?as_user=u-bob&as_name=Bob",
        {"data": "{press}", "press_id": "gate-press-0000001"},
    ),
}
# Routes that take state-changing calls in a protocol of their own, each called (and its
# row checked) by the first test: "*" is any method.
CALLED_ABOVE = {"* /mcp"}  # an MCP client's reminder_set
COMMAND_CALLS: dict[str, tuple[str, ...]] = {  # what is said, in turn
    "remind": ("/remind every monday at 9 standup",),
    "提醒": ("/提醒 明天上午9点 开会",),
    "edit": ("/edit #{n} at 10",),
    "pause": ("/pause #{n}",),
    "resume": ("/resume #{n}",),
    "snooze": ("/snooze #{n} 10m",),
    "done": ("/done #{n}",),
    "完成": ("/完成 #{n}",),
    "metoo": ("/metoo #{n} forbid",),
    "cancel": ("/cancel #{n}",),
    "tz": ("/tz Europe/Berlin",),
    "settings": ("/settings remind_others admins",),
    "budget": ("/budget 50000",),
    "tools": ("/tools on summary",),
    "forget": ("/forget me", "yes"),
    "calendar": ("/calendar chat",),
    "日历": ("/日历",),
}


def changing_routes(api: Api) -> set[str]:
    """The app's routes that take a method other than GET and HEAD, from its router, not
    its OpenAPI document, which leaves out a route declared include_in_schema=False.
    "*" is a route or mount that takes any method (an ASGI app of its own)."""
    app = api.app
    while not isinstance(app, Starlette):  # create_app's gate holds the app as `app`
        app = app.app  # type: ignore[attr-defined]
    found: set[str] = set()
    # Each route as the app routes it (FastAPI includes a router's routes lazily).
    for context in iter_route_contexts(app.routes):
        route, path = context.original_route, context.path
        if isinstance(route, Mount):
            if not isinstance(route.app, StaticFiles):  # files: GET and HEAD only
                found.add(f"* {path}")
        elif isinstance(route, WebSocketRoute):
            found.add(f"WEBSOCKET {path}")
        elif isinstance(route, Route):  # FastAPI's APIRoute is one
            methods = context.methods or {"*"}  # None: the endpoint is an ASGI app
            found |= {f"{method} {path}" for method in methods - {"GET", "HEAD"}}
        else:
            found.add(f"? {route!r}")  # a kind of route this test does not know
    return found


def changing_commands(api: Api) -> set[str]:
    """The slash commands whose tool changes state, from the bot's command table."""
    commands = Commands(api.bot.invoker)
    unknown = [name for name in commands.names() if commands.tool_of(name) is None]
    assert not unknown, f"commands that name no tool: {unknown}"
    tools = {tool.name: tool for tool in api.bot.registry}
    return {
        name
        for name in commands.names()
        if (tool := tools.get(commands.tool_of(name) or "")) is not None and tool.effect == "write"
    }


async def test_every_route_and_command_that_changes_state_leaves_its_audit_row(
    servers: Servers,
) -> None:
    clock = FakeClock()
    api = await servers.start(clock)

    async def down(message: OutgoingMessage) -> str:
        raise SendError("the platform answered HTTP 502")

    api.bot.on_outgoing(down, chat_prefix="tg:")
    await api.say("/remind in 1 minute call home", chat_id="tg:42")
    clock.advance(timedelta(minutes=1, seconds=1))

    async def failed() -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = (
            await api.client.get("/v1/deliveries", params={"outcome": "failed"})
        ).json()
        return found

    async def any_failed() -> bool:
        return bool(await failed())

    await eventually(any_failed, within=15)
    delivery = (await failed())[0]["id"]
    await api.say("/remind tomorrow at 9 call mom", chat_id="g2")
    await api.say("/remind tomorrow at 9 stand-up", chat_id="web:gate")
    (standup,) = (await api.client.get("/v1/chats/web:gate/reminders")).json()
    press = ButtonData("me_too", standup["id"]).encode()

    called = set(ROUTE_CALLS) | CALLED_ABOVE
    assert changing_routes(api) == called, "a route the gate test does not call"
    assert changing_commands(api) == set(COMMAND_CALLS), "a command the gate test does not say"
    reminder = ""
    for route, (url, body) in ROUTE_CALLS.items():
        before = {row["id"] for row in await audit(api)}
        method = route.split(" ", 1)[0]
        if body is not None and body.get("data") == "{press}":
            body = {**body, "data": press}
        answer = await api.client.request(
            method, url.format(id=reminder, delivery=delivery), json=body
        )
        assert answer.status_code < 500 and answer.status_code != 422, (route, answer.text)
        if route == "POST /v1/chats/{chat_id}/reminders":
            reminder = answer.json()["id"]
        new = [row for row in await audit(api) if row["id"] not in before]
        assert len(new) == 1, (route, new)
    label = ""
    for name, words in COMMAND_CALLS.items():
        before = {row["id"] for row in await audit(api)}
        for said in words:
            await api.say(said.format(n=label), sender_id="u-admin", sender_name="Admin")
        new = [row for row in await audit(api) if row["id"] not in before]
        assert [row["source"] for row in new] == ["command"], (name, new)
        label = label or new[0]["target_label"].lstrip("#")
