"""The admin API behind the dashboard, on real uvicorn with a real SQLite file."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from groupmate.storage import OutgoingMessage, SendError
from groupmate.testing.stub_llm import StubLLM, tool_then_answer
from tests.conftest import FakeClock, eventually
from tests.http_harness import Servers, llm_section


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[Servers]:
    running = Servers(tmp_path)
    yield running
    await running.aclose()


async def test_chats_reminders_and_tools(servers: Servers) -> None:
    api = await servers.start()
    await api.say("/remind tomorrow at 9 call the dentist")
    await api.say("/remind every monday at 9am report", chat_id="g2")
    await api.say("just chatting", chat_id="g2")
    chats = {c["chat_id"]: c for c in (await api.client.get("/v1/chats")).json()}
    assert chats["g1"]["reminders"] == 1 and chats["g2"]["reminders"] == 1
    assert chats["g2"]["messages"] >= 2 and chats["g2"]["last_activity"]
    assert chats["g1"]["platform"] == "api" and chats["g1"]["timezone"] == "Europe/Berlin"
    across = (await api.client.get("/v1/reminders")).json()
    assert {(r["chat_id"], r["content"]) for r in across} == {
        ("g1", "call the dentist"),
        ("g2", "report"),
    }
    one = (await api.client.get("/v1/reminders", params={"chat_id": "g2"})).json()
    assert [r["content"] for r in one] == ["report"]
    paused = (await api.client.get("/v1/reminders", params={"status": "paused"})).json()
    assert paused == []

    tools = {t["name"]: t for t in (await api.client.get("/v1/tools")).json()}
    assert tools["reminder_set"]["parameters"]["type"] == "object"
    assert tools["reminder_set"]["source"] == "groupmate"
    ran = await api.client.post(
        "/v1/tools/reminder_set/run",
        json={"chat_id": "g3", "arguments": {"when": "in 2 hours", "content": "stretch"}},
    )
    assert ran.json()["outcome"] == "ok" and "stretch" in ran.json()["reply"]
    bad = await api.client.post(
        "/v1/tools/reminder_set/run", json={"chat_id": "g3", "arguments": {"when": 5}}
    )
    assert bad.json()["outcome"] == "invalid" and bad.json()["issues"]
    unknown = await api.client.post("/v1/tools/nope/run", json={"chat_id": "g3"})
    assert unknown.json()["outcome"] == "unknown"
    spec = (await api.client.get("/openapi.json")).json()["paths"]
    for path in ("/v1/chats", "/v1/reminders", "/v1/deliveries", "/v1/tools", "/v1/status"):
        assert path in spec


async def test_a_failed_delivery_is_listed_and_retried(servers: Servers) -> None:
    clock = FakeClock()
    api = await servers.start(clock)
    sent: list[OutgoingMessage] = []
    down = True

    async def telegram(message: OutgoingMessage) -> str:
        if down:
            raise SendError("Telegram answered HTTP 502")
        sent.append(message)
        return "m-1"

    api.bot.on_outgoing(telegram, chat_prefix="tg:")
    await api.say("/remind in 1 minute water the plants", chat_id="tg:9")
    clock.advance(timedelta(minutes=1, seconds=1))  # Telegram is down: every attempt fails

    async def failed() -> list[dict[str, Any]]:
        answer = await api.client.get("/v1/deliveries", params={"outcome": "failed"})
        return list(answer.json())

    async def any_failed() -> bool:
        return bool(await failed())

    await eventually(any_failed, within=10)
    (row,) = await failed()
    assert row["chat_id"] == "tg:9" and row["attempts"] >= 1
    assert row["last_error"] == "Telegram answered HTTP 502"
    # A second process on the database, without Telegram, cannot send it: it says so.
    elsewhere = await servers.start(clock)
    refused = await elsewhere.client.post(f"/v1/deliveries/{row['id']}/retry")
    assert refused.status_code == 409
    assert "does not deliver to this chat's platform" in refused.json()["error"]
    assert [r["outcome"] for r in await failed()] == ["failed"]  # untouched
    down = False
    retried = await api.client.post(f"/v1/deliveries/{row['id']}/retry")
    assert retried.json() == {"outcome": "sent"}  # a second after it was due: not late
    assert [m.text for m in sent] == ["⏰ Reminder for @Alice: water the plants"]
    again = await api.client.post(f"/v1/deliveries/{row['id']}/retry")
    assert again.status_code == 409  # only a failed one
    status = (await api.client.get("/v1/status")).json()
    assert status["scheduler"]["running"] and status["scheduler"]["failed_deliveries"] == 0
    assert any(line.startswith("storage: sqlite") for line in status["lines"])


async def test_model_activity_and_usage(servers: Servers, stub: StubLLM) -> None:
    api = await servers.start(llm=llm_section(stub))
    stub.fallback = tool_then_answer("reminder_list", {}, "You have no reminders.")
    replies = await api.say("@groupmate what reminders do we have?")
    assert replies
    activity = (await api.client.get("/v1/activity")).json()
    (turn,) = activity["turns"]
    assert turn["chat_id"] == "g1" and turn["llm_calls"] >= 1
    assert [c["name"] for c in turn["calls"]] == ["reminder_list"]
    assert turn["calls"][0]["outcome"] == "ok"
    # Which tools the message was offered, best first, and why each.
    assert turn["offered"][0]["tool"] == "reminder_list"
    assert "reminder" in turn["offered"][0]["why"] and turn["offered"][0]["score"] > 0
    assert len(turn["offered"]) < 10  # not every tool the bot has
    assert turn["prompt_tokens"] > 0 and turn["latency_ms"] >= 0
    assert activity["days"][0]["turns"] == 1
    usage = (await api.client.get("/v1/usage")).json()
    assert usage["top_chats"][0]["chat_id"] == "g1" and usage["top_chats"][0]["tokens"] > 0


async def test_a_tool_run_names_whom_it_acts_as(servers: Servers) -> None:
    api = await servers.start()
    arguments = {"when": "in 2 hours", "content": "stretch"}
    ran = await api.client.post(
        "/v1/tools/reminder_set/run", json={"chat_id": "g5", "arguments": arguments}
    )
    assert ran.json()["outcome"] == "ok"
    as_bob = await api.client.post(
        "/v1/tools/reminder_set/run",
        json={"chat_id": "g5", "arguments": arguments, "as_user": "u-bob", "as_name": "Bob"},
    )
    assert as_bob.json()["outcome"] == "ok"
    rows = (await api.client.get("/v1/audit", params={"chat_id": "g5"})).json()["entries"]
    assert [(r["source"], r["sender_id"], r["sender_name"]) for r in rows] == [
        ("dashboard", "u-bob", "Bob"),
        ("dashboard", "dashboard", "Dashboard"),
    ]
    mine = (await api.client.get("/v1/reminders", params={"chat_id": "g5"})).json()
    assert sorted(r["created_by"] for r in mine) == ["dashboard", "u-bob"]
    # A member acts with a member's rights: another's reminder is not theirs to delete.
    [first] = [r for r in mine if r["created_by"] == "dashboard"]
    refused = await api.client.post(
        "/v1/tools/reminder_delete/run",
        json={
            "chat_id": "g5",
            "arguments": {"reminder_id": first["id"]},
            "as_user": "u-bob",
            "as_name": "Bob",
        },
    )
    assert refused.json()["outcome"] == "refused"
    spec = (await api.client.get("/openapi.json")).json()
    run_in = spec["components"]["schemas"]["RunIn"]["properties"]
    assert "dashboard" in run_in["as_user"]["description"]
    described = spec["paths"]["/v1/tools/{name}/run"]["post"]["description"]
    assert "acts as the sender `dashboard`" in described
