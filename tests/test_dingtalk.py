"""The DingTalk adapter (dingtalk-stream) against a local DingTalk on real sockets: the
Stream WebSocket with its CALLBACK frames and acks, signed HTTP callbacks, session
webhooks and the robot's proactive sends, with a real Bot, SQLite file and the stub
model. This file: what comes in (mentions by DingTalk's atUsers, each msgId acted on
once, signatures, the member directory) and the connection (state, backoff, refused
and throttled credentials); test_dingtalk_sends.py: what goes out."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from groupmate.testing.stub_llm import StubLLM, calls, text
from tests.conftest import eventually
from tests.fake_dingtalk import (
    ACCESS_TOKEN,
    CLIENT_ID,
    CLIENT_SECRET,
    GROUP,
    FakeDingTalk,
    post_callback,
    signed,
)
from tests.http_harness import Api, Servers, delivered_ids, llm_section, make_due


@pytest.fixture
def fake() -> Iterator[FakeDingTalk]:
    api = FakeDingTalk()
    api.server.start()
    yield api
    api.server.stop()


def section(fake: FakeDingTalk, **overrides: Any) -> dict[str, Any]:
    return {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "api_url": fake.api_url,
            "timeout": 5} | overrides  # fmt: skip


async def start(servers: Servers, fake: FakeDingTalk, mode: str = "stream", **more: Any) -> Api:
    api = await servers.start(adapters={"dingtalk": section(fake, mode=mode)}, **more)
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


async def sent(fake: FakeDingTalk, count: int, within: float = 10.0) -> list[dict[str, Any]]:
    await eventually(lambda: len(fake.sent()) >= count, within=within)
    return fake.sent()


async def test_a_mention_sets_a_reminder_that_ats_its_person_and_a_quote_snoozes_it(
    servers: Servers, fake: FakeDingTalk, stub: StubLLM
) -> None:
    stub.script(
        calls(("reminder_set", {"when": "in 10 minutes", "content": "stretch", "who": ["@Bob"]}))
    )
    api = await start(servers, fake, llm=llm_section(stub), reminders={"fast_path": False})
    frame = fake.push(fake.message("remind @Bob in 10 minutes to stretch", at=("bob01",)))
    (reply,) = await sent(fake, 1)
    assert fake.acked(frame)  # the library's ack frame: code 200, the frame's messageId
    assert reply["via"] == "session" and "Reminder #1 for @Bob" in reply["text"]
    [request] = stub.requests
    assert "remind @Bob in 10 minutes to stretch" in str(request["messages"][-1]["content"])
    fake.push(fake.message("/remind in 2 hours water the plants", sender="bob01"))
    assert "Reminder #2" in (await sent(fake, 2))[1]["text"]
    await make_due(api.bot)  # both go off: a snooze must say which
    [fired] = [m for m in (await sent(fake, 4))[2:] if "stretch" in m["text"]]
    # Through the chat's session webhook: "@bob01" in the text and in atUserIds notifies
    # (Bob, and Alice who set it); nothing else is sent (no single-chat notice: the @s
    # did it).
    assert fired["via"] == "session" and fired["at"] == ["bob01", "alice01"]
    assert "@bob01" in fired["text"] and "@alice01" in fired["text"] and len(fake.sent()) == 4
    await delivered_ids(api.bot, at_least=2)
    # DingTalk shows the reminder as "@Bob …"; quoting it (and @-ing the robot, as
    # DingTalk delivers group messages only then) snoozes that one.
    shown = fired["text"].replace("@bob01", "@Bob")
    fake.push(fake.message("snooze 10m", sender="bob01", quote=shown))
    assert (await sent(fake, 5))[4]["text"].startswith("💤 Snoozed #1")


async def test_a_message_not_addressed_to_the_bot_is_only_logged(
    servers: Servers, fake: FakeDingTalk
) -> None:
    """DingTalk delivers a group's messages to a robot only when they @ it; one that
    arrives without (isInAtList false: a group set to give the robot everything) must
    still only be kept for the history."""
    api = await start(servers, fake)
    broken = fake.push({"msgtype": "text", "text": {"content": "no ids"}})
    fake.push(fake.message("lunch at noon?", robot=False))
    fake.push(fake.message("/reminders"))
    (reply,) = await sent(fake, 1)  # the addressed one only
    assert reply["text"].startswith("There are no active reminders")
    history = await api.client.get(f"/v1/chats/dt:{GROUP}/messages")
    texts = [m["text"] for m in history.json()["messages"]]
    assert "lunch at noon?" in texts  # in the history the model reads
    assert "@groupmate /reminders" in texts  # the robot's @ put back, as the bot's name
    assert fake.acked(broken) and "no ids" not in texts  # a payload without ids: dropped


async def test_a_re_pushed_message_is_acted_on_once_also_after_a_restart(
    servers: Servers, fake: FakeDingTalk
) -> None:
    api = await start(servers, fake)
    message = fake.message("/remind in 2 hours stretch", msg_id="msgSAME01")
    first = fake.push(message)
    await sent(fake, 1)
    again = fake.push(message)  # DingTalk's re-push: a new frame, the same msgId
    await eventually(lambda: fake.acked(first) and fake.acked(again))
    await servers.aclose()
    api = await start(servers, fake)  # the same database
    fake.push(message)
    fake.push(fake.message("/reminders"))
    listing = (await sent(fake, 2))[1]
    assert "stretch" in listing["text"]
    await asyncio.sleep(0.3)
    assert len(fake.sent()) == 2  # one answer to the reminder request, one listing
    assert listing["text"].count("stretch") == 1  # and one reminder
    assert api.bot.adapters[0].status()["state"] == "connected"


async def test_a_message_re_pushed_while_the_first_is_still_answered_runs_once(
    servers: Servers, fake: FakeDingTalk, stub: StubLLM
) -> None:
    stub.script(text("hello there", delay=1.5))
    await start(servers, fake, llm=llm_section(stub))
    message = fake.message("how are you?", msg_id="msgSLOW01")
    fake.push(message)
    await eventually(lambda: len(stub.requests) == 1)  # the model is still answering
    again = fake.push(message)  # DingTalk re-pushes it: the ack seemed slow
    await eventually(lambda: fake.acked(again))
    (reply,) = await sent(fake, 1)
    assert reply["text"] == "hello there"
    await asyncio.sleep(0.5)
    assert len(fake.sent()) == 1 and len(stub.requests) == 1


@pytest.mark.parametrize(
    "signing",
    [
        {"secret": "not-the-secret"},
        {"at_ms": int((time.time() - 61 * 60) * 1000)},  # DingTalk's window is an hour
    ],
)
async def test_an_http_callback_dingtalk_did_not_sign_runs_nothing(
    servers: Servers, fake: FakeDingTalk, signing: dict[str, Any]
) -> None:
    api = await start(servers, fake, mode="http")
    message = fake.message("/remind in 2 hours stretch")
    answer = await post_callback(api.base_url, message, **signing)
    assert answer.status_code == 401
    await asyncio.sleep(0.3)
    assert fake.sent() == []
    history = await api.client.get(f"/v1/chats/dt:{GROUP}/messages")
    assert history.json()["messages"] == []
    now = int(time.time() * 1000)
    payloads: list[dict[str, Any]] = [{"msgtype": "text", "text": {"content": "hi"}}, {"msgId": 7}]
    for step, broken in enumerate(payloads):
        answer = await post_callback(api.base_url, broken, at_ms=now - 10 - step)  # no message
        assert answer.status_code == 200  # taken (a re-push would be no better), dropped
    answer = await post_callback(api.base_url, message, at_ms=now)  # signed: it runs
    assert answer.status_code == 200
    (reply,) = await sent(fake, 1)
    assert reply["text"].startswith("⏰ Reminder #1")
    assert (await post_callback(api.base_url, message, at_ms=now + 1)).status_code == 200
    await asyncio.sleep(0.3)
    assert len(fake.sent()) == 1  # a re-push (signed anew): acted on once


async def test_signature_headers_are_taken_once_and_a_large_body_is_refused_unread(
    servers: Servers, fake: FakeDingTalk
) -> None:
    """DingTalk's sign covers the timestamp, not the body: headers seen once can't carry
    another body."""
    api = await start(servers, fake, mode="http")
    now = int(time.time() * 1000)
    first = await post_callback(api.base_url, fake.message("/reminders"), at_ms=now)
    assert first.status_code == 200
    forged = fake.message("/remind in 2 hours give Mallory the keys")
    assert (await post_callback(api.base_url, forged, at_ms=now)).status_code == 401
    big = b"{" + b" " * (300 * 1024) + b"}"
    async with httpx.AsyncClient(base_url=api.base_url) as client:
        answer = await client.post("/dingtalk/events", content=big, headers=signed(big))
    assert answer.status_code == 413
    await sent(fake, 1)
    await asyncio.sleep(0.3)
    assert len(fake.sent()) == 1  # the listing only


async def test_dingtalks_admin_flag_makes_an_admin(servers: Servers, fake: FakeDingTalk) -> None:
    api = await start(servers, fake)
    change = "/settings remind_others admins"
    fake.push(fake.message(change, sender="alice01"))
    refused = (await sent(fake, 1))[0]["text"]
    fake.push(fake.message(change, sender="ada01", admin=True))
    changed = (await sent(fake, 2))[1]["text"]
    assert "admin" in refused.casefold() and "remind_others" not in refused
    assert changed != refused and "admins" in changed
    assert api.bot.reminders is not None
    settings = await api.bot.reminders.settings_of(f"dt:{GROUP}")
    assert settings.get("remind_others") == "admins"


async def test_a_name_resolves_to_the_one_member_seen_by_it_also_after_a_restart(
    servers: Servers, fake: FakeDingTalk
) -> None:
    await start(servers, fake)
    # What DingTalk delivers: messages that @ the robot (their senders, by their nick),
    # and the people they @ (atUsers: ids only; one unknown id, one unknown "@Name").
    for person in ("carol01", "sam01", "sam02"):
        fake.push(fake.message("/reminders", sender=person))
    fake.push(fake.message("/reminders cc @Ada!", at=("ada01",)))
    await sent(fake, 4)
    await servers.aclose()
    await start(servers, fake)  # the directory comes from the database
    for name, count in (("Carol", 5), ("Ada", 6)):
        fake.push(fake.message(f"/remind @{name} in 2 hours tea"))
        assert f"Reminder #{count - 4} for @{name}" in (await sent(fake, count))[-1]["text"]
    fake.push(fake.message("/remind @Sam in 2 hours tea"))
    ambiguous = (await sent(fake, 7))[-1]["text"]
    assert "Reminder #" not in ambiguous  # two Sams: asked about, never guessed
    fake.push(fake.message("/remind @Dora in 2 hours tea"))
    unknown = (await sent(fake, 8))[-1]["text"]
    assert "Reminder #" not in unknown  # never seen: no one


async def test_status_reconnects_and_no_secret_in_logs_or_healthz(
    servers: Servers, fake: FakeDingTalk, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api = await start(servers, fake)
    ping = fake.system("ping")
    await eventually(lambda: fake.acked(ping))
    health = (await api.client.get("/healthz")).json()
    dingtalk = health["adapters"]["dingtalk"]
    assert (dingtalk["state"], dingtalk["mode"], dingtalk["robot_code"]) == (
        "connected", "stream", CLIENT_ID)  # fmt: skip
    assert fake.token_requests == 0  # Stream mode needs no token to connect
    adapter = api.bot.adapters[0]
    fake.drop_sockets = True  # the connection drops
    await eventually(lambda: adapter.status()["state"] == "reconnecting")
    assert adapter.status()["last_error"].startswith("stream:")
    fake.drop_sockets = False
    await eventually(lambda: adapter.status()["state"] == "connected", within=10)
    assert fake.opened == 2  # a new ticket for the new connection
    fake.system("disconnect")  # DingTalk moves the client: it connects anew
    await eventually(lambda: fake.opened == 3, within=10)
    fake.push(fake.message("/reminders"))
    await sent(fake, 1)
    health = str((await api.client.get("/healthz")).json())
    logged = " ".join(r.getMessage() for r in caplog.records)
    for secret in (CLIENT_SECRET, ACCESS_TOKEN, "ticket-", "sess-"):
        assert secret not in logged and secret not in health


async def test_a_proxy_page_a_throttle_or_a_bad_endpoint_is_retried_never_fatal(
    servers: Servers, fake: FakeDingTalk
) -> None:
    fake.gateway_pages.append("<html>502 Bad Gateway</html>")  # a 200 that is no JSON
    fake.qps_limited = 1  # then DingTalk's 403 QpsLimit: throttled, not refused
    fake.bad_endpoints = 1  # then an endpoint the WebSocket client can't even parse
    api = await servers.start(adapters={"dingtalk": section(fake)})
    adapter = api.bot.adapters[0]
    await eventually(lambda: adapter.status()["state"] == "reconnecting")
    await eventually(lambda: adapter.status()["state"] == "connected", within=15)
    assert (len(fake.open_times), fake.opened) == (4, 2)


async def test_a_connection_that_drops_at_once_backs_off_longer_each_time(
    servers: Servers, fake: FakeDingTalk
) -> None:
    fake.drop_sockets = True  # every connection opens, then closes at once
    await servers.start(adapters={"dingtalk": section(fake)})
    await eventually(lambda: len(fake.open_times) >= 3, within=10)
    first, second, third = fake.open_times[:3]
    assert second - first >= 0.9 and third - second >= 1.8  # 1 s, then 2 s: not 1 s again


@pytest.mark.parametrize("mode", ["stream", "http"])
async def test_a_refused_secret_says_auth_failed_and_is_not_retried(
    servers: Servers, fake: FakeDingTalk, caplog: pytest.LogCaptureFixture, mode: str
) -> None:
    dingtalk = section(fake, client_secret="wrong-secret-value", mode=mode)
    api = await servers.start(adapters={"dingtalk": dingtalk})
    adapter = api.bot.adapters[0]
    await eventually(lambda: adapter.status()["state"] == "auth failed")
    refused = {
        "stream": "gateway/connections/open: authFailed",
        "http": "oauth2/accessToken: invalidClientSecret",
    }
    assert adapter.status()["last_error"] == refused[mode]
    await asyncio.sleep(1.2)
    asked = {"stream": (0, 1), "http": (1, 0)}
    assert (fake.token_requests, len(fake.open_times)) == asked[mode]  # once: waiting won't help
    assert "wrong-secret-value" not in " ".join(r.getMessage() for r in caplog.records)


async def test_a_throttled_token_request_is_waited_out_not_auth_failed(
    servers: Servers, fake: FakeDingTalk
) -> None:
    fake.qps_limited = 1  # oauth2/accessToken answers 403 QpsLimit, no Retry-After
    began = time.monotonic()
    api = await start(servers, fake, mode="http")
    assert time.monotonic() - began >= 0.9 and fake.token_requests == 2
    assert api.bot.adapters[0].status()["state"] == "connected"
