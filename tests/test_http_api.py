"""End to end through the HTTP API: real uvicorn, stub LLM, stub outbound receiver."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
from sqlalchemy import update

from groupmate.storage.models import Reminder
from groupmate.testing.stub_llm import StubLLM, calls, earlier_chat, raw, text
from tests.conftest import FakeClock
from tests.http_harness import Servers, llm_section
from tests.receiver import Receiver


async def test_member_sets_lists_sees_it_fire_and_deletes_another(
    servers: Servers, stub: StubLLM, receiver: Receiver
) -> None:
    # The bot runs on a clock the test moves: the reminder is due when the test says so.
    clock = FakeClock(datetime(2026, 11, 21, 13, 5, 30, tzinfo=UTC))
    api = await servers.start(
        clock=clock,
        llm=llm_section(stub),
        adapters={"webhook": {"outbound_url": receiver.url}},
        reminders={"fast_path": False},  # the model's calls, end to end
    )
    fire = datetime(2026, 11, 21, 13, 10, tzinfo=UTC)
    local = fire.astimezone(ZoneInfo("Europe/Berlin"))
    stub.script(
        calls(
            (
                "reminder_set",
                {"type": "once", "time": f"{local:%Y-%m-%d %H:%M}", "content": "stretch"},
            )
        ),
        calls(("reminder_set", {"type": "daily", "time": "9:00", "content": "stand-up"})),
        calls(("reminder_list", {})),
        calls(("reminder_delete", {"reminder_id": "2"})),
    )
    (set_reply,) = await api.say(f"@groupmate remind us at {local:%H:%M} to stretch")
    assert set_reply["text"].startswith(f"⏰ Reminder #1 set for {local:%a %d %b %H:%M}")
    assert set_reply["mentions"] == ["u-alice"]
    (second,) = await api.say("!remind us daily at 9 for stand-up")
    assert "Reminder #2" in second["text"]
    (listed,) = await api.say("@groupmate what reminders do we have?")
    assert "#1 · next" in listed["text"] and "#2 · next" in listed["text"]
    (deleted,) = await api.say("@groupmate cancel the stand-up one")
    assert deleted["text"].startswith("🗑️ Deleted reminder #2")

    assert receiver.calls == []  # not due yet
    clock.set(fire)
    assert api.bot.reminders is not None and api.bot.reminders.scheduler is not None
    api.bot.reminders.scheduler.wake()  # what its timer does at the moment it is due
    (call,) = await asyncio.to_thread(receiver.wait_for, 1, 15)
    assert call.body["chat_id"] == "g1"
    assert call.body["text"] == "⏰ Reminder for @Alice: stretch"
    assert call.body["mentions"] == ["u-alice"]
    assert call.body["kind"] == "reminder"
    assert call.body["occurrence"] == fire.isoformat()
    assert call.headers["idempotency-key"] == f"{call.body['reminder_id']}:{fire.isoformat()}"
    listed_now = (await api.client.get("/v1/chats/g1/reminders")).json()
    assert listed_now == []  # #1 fired and is done, #2 was deleted


async def test_summary_over_500_messages_works_in_chunks(servers: Servers, stub: StubLLM) -> None:
    api = await servers.start(llm=llm_section(stub))
    for n in range(500):
        sender = ("u-bob", "Bob") if n % 2 else ("u-carol", "Carol")
        replies = await api.say(
            f"message {n}: let's talk about topic {n % 7} and decide on item {n}",
            sender_id=sender[0],
            sender_name=sender[1],
        )
        assert replies == []  # not addressed to the bot, but logged
    stub.script(calls(("summary", {"last_n": 500})))
    stub.fallback = text("- topics 0-6 were discussed; item decisions pending")
    (reply,) = await api.say("@groupmate summarize the last 500 messages")
    assert reply["text"].startswith("📝 Summary of the last 500 messages:\n- topics 0-6")
    prompts = [r["messages"][-1]["content"] for r in stub.requests[1:]]
    map_calls = [p for p in prompts if p.startswith("[")]
    assert len(map_calls) >= 3, "the transcript was split into chunks"
    assert sum(p.count("message ") for p in map_calls) == 500
    assert prompts[-1].startswith("Part 1:")  # the reduce step


async def test_web_search_answers_with_numbered_sources(
    servers: Servers, stub: StubLLM, receiver: Receiver
) -> None:
    api = await servers.start(
        llm=llm_section(stub),
        search={"provider": "perplexity", "base_url": stub.base_url, "api_key": "pplx-test"},
        adapters={"webhook": {"outbound_url": receiver.url}},
    )
    search_body = (
        '{"id":"s1","object":"chat.completion","created":1,"model":"sonar",'
        '"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant",'
        '"content":"Python 3.14 is the latest release [1][2]."}}],'
        '"search_results":[{"title":"Python.org","url":"https://www.python.org/downloads/"},'
        '{"title":"What\'s new","url":"https://docs.python.org/3/whatsnew/"}]}'
    )
    stub.script(calls(("web_search", {"query": "latest python release"})), raw(search_body))
    (reply,) = await api.say("@groupmate what's the latest python release?")
    assert reply["text"] == (
        "Python 3.14 is the latest release [1][2].\n\n"
        "[1] Python.org - https://www.python.org/downloads/\n"
        "[2] What's new - https://docs.python.org/3/whatsnew/"
    )
    assert stub.requests[1]["model"] == "sonar"
    (progress,) = await asyncio.to_thread(receiver.wait_for, 1, 5)
    assert progress.body["kind"] == "notice"
    assert progress.body["text"] == "🔎 Searching for “latest python release”…"


async def test_without_search_the_tool_is_not_offered(servers: Servers, stub: StubLLM) -> None:
    api = await servers.start(llm=llm_section(stub))
    stub.script(text("I can't search the web here."))
    await api.say("@groupmate search the web for the latest python release")
    offered = {tool["function"]["name"] for tool in stub.requests[0].get("tools", [])}
    assert "web_search" not in offered
    # What the message matched that this bot has (its own messages: /find's tool).
    assert "chat_search" in offered


async def test_offline_commands_without_an_llm(servers: Servers) -> None:
    api = await servers.start()
    (natural,) = await api.say("@groupmate remind me tomorrow")
    assert natural["text"].startswith("I couldn't set that reminder: What should I remind")
    (chat,) = await api.say("@groupmate how are you?")
    assert chat["text"].startswith(
        "I can't understand plain language here: no language model is configured.\n"
        "Some commands to try:\n• /remind <when> <what>: set a reminder\n"
    )
    (set_reply,) = await api.say("/remind in 10 minutes tea")
    assert set_reply["text"].startswith("⏰ Reminder #1 set for ")
    (weekly,) = await api.say("/remind every monday 9:00 send the report")
    assert weekly["text"].endswith("every Monday at 09:00: send the report")
    (dated,) = await api.say("/remind 2030-12-01 18:30 dinner")
    assert "Sun 01 Dec 2030 18:30" in dated["text"]
    (monthly,) = await api.say("/remind every month on the 1st 10:00 rent")
    assert "every month on the 1st at 10:00" in monthly["text"]
    (listed,) = await api.say("/reminders")
    assert listed["text"].startswith("Reminders in this chat (4")
    (cancelled,) = await api.say("/cancel 1")
    assert cancelled["text"].startswith("🗑️ Deleted reminder #1")
    (bad,) = await api.say("/remind sometime soon-ish maybe")
    assert bad["text"].startswith("I couldn't set that reminder: I couldn't find when.")
    (past,) = await api.say("/remind 2020-01-01 10:00 too late")
    assert "in the past" in past["text"]
    (digest,) = await api.say("/summary 5")
    assert digest["text"].startswith("(No language model here: the offline digest.)\n📋")
    (search,) = await api.say("/search anything")
    assert search["text"] == "Web search is not configured on this bot."
    (tz,) = await api.say("/tz Asia/Tokyo")
    assert tz["text"] == "Only a group admin can change this chat's time zone."
    (tz_admin,) = await api.say("/tz Asia/Tokyo", sender_id="u-admin", sender_name="Ad")
    assert tz_admin["text"].startswith("🌍 This chat's time zone is now Asia/Tokyo.")
    (helped,) = await api.say("/help")
    assert "/remind <when> <what>" in helped["text"]


async def test_triggers_allowlist_and_history(servers: Servers, stub: StubLLM) -> None:
    api = await servers.start(llm=llm_section(stub), bot={"groups": {"allow": ["g1"]}})
    assert await api.say("just chatting") == []
    assert await api.say("@groupmate hi", chat_id="g-other") == []  # not enabled
    stub.fallback = text("ok")
    assert len(await api.say("@groupmate hi")) == 1
    assert len(await api.say("!status")) == 1
    assert len(await api.say("thanks", reply_to_bot=True)) == 1
    assert len(await api.say("hey you", mentions_bot=True)) == 1
    assert len(await api.say("hello", chat_id="dm-1", chat_type="private")) == 1
    last = stub.requests[3]["messages"]
    contents = [m["content"] for m in last[1:]]
    # The triggering message once, not twice (history + question).
    assert sum("hey you" in c for c in contents) == 1
    assert any("just chatting" in c for c in contents)
    assert "groupmate: ok" in earlier_chat(stub.requests[3])


async def test_idempotency_rate_limits_and_auth(servers: Servers, stub: StubLLM) -> None:
    api = await servers.start(
        llm=llm_section(stub),
        bot={"rate_limits": {"user_per_minute": 1, "chat_per_minute": 60, "burst": 2}},
    )
    stub.fallback = text("ok")
    first = await api.say("@groupmate one", message_id="dup-1")
    again = await api.say("@groupmate one", message_id="dup-1")
    assert len(first) == 1 and again == []
    assert len(stub.requests) == 1
    assert len(await api.say("@groupmate two")) == 1
    (limited,) = await api.say("@groupmate three")
    assert limited["text"].startswith("⏳ Easy there: too many requests. Try again in ")
    (again_limited,) = await api.say("@groupmate four")  # each one answered, once
    assert again_limited["text"].startswith("⏳ Easy there: too many requests. Try again in ")
    other = await api.say("@groupmate hi", sender_id="u-bob", sender_name="Bob")
    assert other[0]["text"] == "ok"

    anonymous = httpx.AsyncClient(base_url=str(api.client.base_url))
    try:
        assert (await anonymous.get("/healthz")).status_code == 200
        denied = await anonymous.post("/v1/messages", json={})
        assert denied.status_code == 401
        assert denied.json() == {"error": "missing or wrong bearer token"}
        wrong = await anonymous.get(
            "/v1/chats/g1/reminders", headers={"Authorization": "Bearer nope"}
        )
        assert wrong.status_code == 401
    finally:
        await anonymous.aclose()


async def test_malformed_bodies_get_json_errors(servers: Servers) -> None:
    api = await servers.start()
    client = api.client
    broken = await client.post(
        "/v1/messages", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert broken.status_code == 422
    assert broken.json()["error"] == "invalid request"
    missing = await client.post("/v1/messages", json={"chat_id": "g1"})
    assert missing.status_code == 422
    assert {issue["path"] for issue in missing.json()["issues"]} >= {"chat_type", "text"}
    huge = await client.post("/v1/messages", json={"text": "x" * 10_000})
    assert huge.status_code == 413
    assert "larger than" in huge.json()["error"]
    openapi = await client.get("/openapi.json")
    assert "/v1/messages" in openapi.json()["paths"]


async def test_reminder_and_settings_routes(servers: Servers) -> None:
    api = await servers.start()
    client = api.client
    bad = await client.post(
        "/v1/chats/g1/reminders",
        json={"type": "weekly", "time": "25:00", "content": "x", "created_by": "u1"},
    )
    assert bad.status_code == 422
    paths = {issue["path"] for issue in bad.json()["issues"]}
    assert paths == {"time", "weekday"}
    created = await client.post(
        "/v1/chats/g1/reminders",
        json={
            "type": "weekly",
            "time": "9:30",
            "weekday": 2,
            "content": "sync",
            "created_by": "u1",
        },
    )
    assert created.status_code == 201, created.text
    reminder = created.json()
    assert (reminder["short_id"], reminder["rule"]) == (1, "every Wednesday at 09:30")
    listed = (await client.get("/v1/chats/g1/reminders")).json()
    assert [r["id"] for r in listed] == [reminder["id"]]
    assert (await client.get("/v1/chats/g2/reminders")).json() == []
    assert (await client.delete(f"/v1/chats/g2/reminders/{reminder['id']}")).status_code == 404
    bad_zone = await client.put("/v1/chats/g1/settings", json={"timezone": "Mars/Base"})
    assert bad_zone.status_code == 422
    moved = await client.put("/v1/chats/g1/settings", json={"timezone": "America/New_York"})
    assert moved.json() == {
        "chat_id": "g1",
        "timezone": "America/New_York",
        "remind_others": "members",
        "remind_everyone": "admins",
        "followup": "off",
        "followup_seconds": 120,
        "digest_when_quiet": "post",
        "reminders_moved": 1,
    }
    assert (await client.delete(f"/v1/chats/g1/reminders/{reminder['id']}")).status_code == 204
    assert (await client.get("/v1/chats/g1/reminders")).json() == []


async def test_outbound_webhook_failures_are_retried(servers: Servers, receiver: Receiver) -> None:
    api = await servers.start(adapters={"webhook": {"outbound_url": receiver.url}})
    receiver.fail_next = 2
    due = datetime.now(UTC) + timedelta(seconds=60)
    created = await api.client.post(
        "/v1/chats/g1/reminders",
        json={"type": "once", "in_minutes": 1, "content": "retry me", "created_by": "u1"},
    )
    assert created.status_code == 201
    assert api.bot.reminders is not None

    # Move it to now in the table (the source of truth); the watchdog picks it up.
    def rewind(session: Any) -> None:
        moved_back = due - timedelta(seconds=61)
        query = update(Reminder).where(Reminder.id == created.json()["id"])
        session.execute(query.values(next_fire_at=moved_back))

    await api.bot.reminders.database.write(rewind)
    (call,) = await asyncio.to_thread(receiver.wait_for, 1, 10)
    assert call.body["text"] == "⏰ Reminder for @u1: retry me"


async def test_gate_checks_the_token_first_and_limits_chunked_bodies(servers: Servers) -> None:
    api = await servers.start()

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"x" * 1024

    unauthorized = httpx.AsyncClient(base_url=str(api.client.base_url))
    try:
        garbage = await unauthorized.post("/v1/messages", content=b"{bad")
        assert garbage.status_code == 401
    finally:
        await unauthorized.aclose()
    chunked = await api.client.post("/v1/messages", content=chunks())
    assert chunked.status_code == 413
    assert chunked.json() == {"error": "body larger than 4096 bytes"}
    chunked_rest = await api.client.post("/v1/chats/g1/reminders", content=chunks())
    assert chunked_rest.status_code == 413
    missing = await api.client.get("/v1/nothing-here")
    assert missing.json() == {"error": "Not Found"}
    surrogate = await api.client.post(
        "/v1/chats/g1/reminders",
        content=b'{"type": "daily", "content": "\\ud800", "created_by": "u1"}',
    )
    assert surrogate.status_code == 422


async def test_an_oversized_body_gets_its_413_while_the_client_still_sends(
    servers: Servers,
) -> None:
    """A 3 MB POST, declared or chunked, from a client that sends its whole body before it
    reads (as simple clients do): the gate reads and drops the rest of the body before
    it answers. Closing on unread bytes makes the kernel send a reset, which throws away
    the 413 before the client can read it."""
    api = await servers.start()
    url = httpx.URL(str(api.client.base_url))
    token = api.client.headers["authorization"]
    body = b'{"text": "' + b"x" * 3_000_000 + b'"}'
    declared = f"Content-Length: {len(body)}\r\n".encode() + b"\r\n" + body
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(body[n : n + 65_536]), body[n : n + 65_536])
        for n in range(0, len(body), 65_536)
    )
    chunked = b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"

    def post(framed: bytes) -> bytes:
        head = (
            f"POST /v1/messages HTTP/1.1\r\nHost: {url.host}\r\nAuthorization: {token}\r\n"
            "Content-Type: application/json\r\nConnection: close\r\n"
        ).encode()
        with socket.create_connection((url.host, url.port), timeout=10) as sock:
            sock.sendall(head + framed)
            answer = b""
            while chunk := sock.recv(65_536):
                answer += chunk
        return answer

    for attempt in range(5):
        for framed in (declared, chunked):
            answer = await asyncio.to_thread(post, framed)
            assert answer.startswith(b"HTTP/1.1 413"), (attempt, answer[:80])
            assert answer.endswith(b'{"error":"body larger than 4096 bytes"}')

    def ask_first() -> bytes:
        """Expect: 100-continue (curl's way for big bodies): the 413 comes at once, and
        no "100 Continue" invites the body."""
        head = (
            f"POST /v1/messages HTTP/1.1\r\nHost: {url.host}\r\nAuthorization: {token}\r\n"
            f"Content-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n"
        ).encode()
        with socket.create_connection((url.host, url.port), timeout=10) as sock:
            sock.sendall(head)
            return sock.recv(65_536)

    first = await asyncio.to_thread(ask_first)
    assert first.startswith(b"HTTP/1.1 413"), first[:80]
