"""The DingTalk adapter (dingtalk-stream) against a local DingTalk on real sockets: the
Stream WebSocket with its CALLBACK frames and acks, signed HTTP callbacks, session
webhooks and the robot's proactive sends, with a real Bot, SQLite file and the stub
model: mentions by DingTalk's atUsers, reminders that @ their people, snooze by quoting
a reminder, each msgId acted on once (a re-push, or after a restart), bad signatures
refused before anything runs, 429s waited out, and the connection's state."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from bot.adapters.dingtalk import render_mentions
from bot.adapters.dingtalk_api import fingerprint
from groupmate.testing.stub_llm import StubLLM, calls
from storage import Member
from storage.models import Reminder
from tests.conftest import eventually
from tests.fake_dingtalk import (
    ACCESS_TOKEN,
    CLIENT_ID,
    CLIENT_SECRET,
    GROUP,
    FakeDingTalk,
    post_callback,
)
from tests.http_harness import Api, Servers, llm_section


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


async def rewind(api: Api) -> None:
    """Make the chat's reminders due now."""

    def write(session: Any) -> None:
        query = update(Reminder).where(Reminder.chat_id == f"dt:{GROUP}")
        session.execute(query.values(next_fire_at=datetime.now(UTC) - timedelta(seconds=1)))

    assert api.bot.reminders is not None
    await api.bot.reminders.database.write(write)


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
    await rewind(api)  # both go off: a snooze must say which
    [fired] = [m for m in (await sent(fake, 4))[2:] if "stretch" in m["text"]]
    # Through the chat's session webhook: "@bob01" in the text and in atUserIds notifies.
    assert fired["via"] == "session" and fired["at"] == ["bob01"]
    assert "@bob01" in fired["text"]
    # DingTalk shows the reminder as "@Bob …"; quoting it (and @-ing the robot, as
    # DingTalk delivers group messages only then) snoozes that one.
    shown = fired["text"].replace("@bob01", "@Bob")
    for attempt in range(100):  # the delivery's outcome (with its id) is written after
        fake.push(fake.message("snooze 10m", sender="bob01", quote=shown))
        answer = (await sent(fake, 5 + attempt))[-1]
        if answer["text"].startswith("💤"):
            break
        await asyncio.sleep(0.05)
    assert answer["text"].startswith("💤 Snoozed #1")


async def test_a_message_not_addressed_to_the_bot_is_only_logged(
    servers: Servers, fake: FakeDingTalk
) -> None:
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
    for broken in ({"msgtype": "text", "text": {"content": "hi"}}, {"msgId": 7}):
        answer = await post_callback(api.base_url, broken)  # signed, but no message
        assert answer.status_code == 200  # taken (a re-push would be no better), dropped
    answer = await post_callback(api.base_url, message)  # signed: it runs
    assert answer.status_code == 200
    (reply,) = await sent(fake, 1)
    assert reply["text"].startswith("⏰ Reminder #1")
    assert (await post_callback(api.base_url, message)).status_code == 200  # re-pushed
    await asyncio.sleep(0.3)
    assert len(fake.sent()) == 1  # acted on once


async def test_without_a_valid_webhook_messages_go_by_the_group_api_and_a_429_waits(
    servers: Servers, fake: FakeDingTalk
) -> None:
    api = await start(servers, fake)
    # A message whose session webhook is about to expire: not used.
    fake.push(fake.message("/remind in 2 hours stretch", webhook_for=30))
    fake.rate_limited = 1  # the first robot send is answered 429, Retry-After: 1
    began = time.monotonic()
    (reply,) = await sent(fake, 1, within=15)
    assert time.monotonic() - began >= 1.0  # waited out, then sent once
    assert reply["via"] == "groupMessages/send"
    assert reply["body"]["openConversationId"] == GROUP and reply["body"]["robotCode"] == CLIENT_ID
    fake.too_fast = 1  # a session webhook's "send too fast" (errcode 130101) waits too
    fake.push(fake.message("/reminders"))
    listing = (await sent(fake, 2, within=15))[1]
    assert listing["via"] == "session" and "stretch" in listing["text"]
    fake.end_sessions()  # the webhook is refused before its time: the group API instead
    await rewind(api)
    fired = (await sent(fake, 3))[2]
    assert fired["via"] == "groupMessages/send" and "stretch" in fired["text"]
    assert api.bot.adapters[0].status()["last_error"] is None


async def test_a_single_chat_is_private_and_its_reminders_reach_the_person(
    servers: Servers, fake: FakeDingTalk
) -> None:
    api = await start(servers, fake)
    # No @ in a single chat; the webhook lapses before the reminder is due.
    fake.push(fake.message("/remind in 2 hours drink water", private=True, webhook_for=30))
    (reply,) = await sent(fake, 1)
    assert reply["text"].startswith("⏰ Reminder #1")
    await servers.aclose()
    api = await start(servers, fake)  # the single chat's person comes from the database

    def write(session: Any) -> None:
        past = datetime.now(UTC) - timedelta(seconds=1)
        session.execute(update(Reminder).values(next_fire_at=past))

    assert api.bot.reminders is not None
    assert fake.token_requests == 2  # one per start
    fake.revoke()  # DingTalk drops the token early: 401 InvalidAuthentication, renewed
    await api.bot.reminders.database.write(write)
    fired = (await sent(fake, 2))[1]
    assert fired["via"] == "oToMessages/batchSend" and "drink water" in fired["text"]
    assert fired["body"]["userIds"] == ["alice01"]
    assert fake.token_requests == 3


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


async def test_a_name_resolves_to_the_one_member_seen_by_it(
    servers: Servers, fake: FakeDingTalk
) -> None:
    await start(servers, fake)
    for person in ("carol01", "sam01", "sam02"):
        fake.push(fake.message(f"hello from {person}", sender=person, robot=False))
    await asyncio.sleep(0.3)
    fake.push(fake.message("/remind @Carol in 2 hours tea"))
    created = (await sent(fake, 1))[0]["text"]
    assert "Reminder #1 for @Carol" in created  # seen in the chat: DingTalk vouched
    fake.push(fake.message("/remind @Sam in 2 hours tea"))
    ambiguous = (await sent(fake, 2))[1]["text"]
    assert "Reminder #" not in ambiguous  # two Sams: asked about, never guessed
    fake.push(fake.message("/remind @Dora in 2 hours tea"))
    unknown = (await sent(fake, 3))[2]["text"]
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


async def test_a_refused_secret_says_auth_failed_and_is_not_retried(
    servers: Servers, fake: FakeDingTalk, caplog: pytest.LogCaptureFixture
) -> None:
    dingtalk = section(fake, client_secret="wrong-secret-value")
    api = await servers.start(adapters={"dingtalk": dingtalk})
    adapter = api.bot.adapters[0]
    await eventually(lambda: adapter.status()["state"] == "auth failed")
    assert adapter.status()["last_error"] == "oauth2/accessToken: invalidClientSecret"
    await asyncio.sleep(1.2)
    assert (fake.token_requests, fake.opened) == (1, 0)  # asked once: waiting won't fix it
    assert "wrong-secret-value" not in " ".join(r.getMessage() for r in caplog.records)


def test_mentions_render_as_dingtalk_ats_and_quotes_match_the_sent_id() -> None:
    people = [Member("dt:bob01", "Bob"), Member("dt:al01", "Al")]
    text, ids = render_mentions("@Bob & @Al: tea, @Alice", people)
    assert (text, ids) == ("@bob01 & @al01: tea, @Alice", ["bob01", "al01"])
    sent_id = fingerprint(GROUP, text)
    assert fingerprint(GROUP, "@Bob & @Al:  tea, @Alice") == sent_id  # as DingTalk shows it
    assert fingerprint("cidOTHER==", text) != sent_id


def test_a_section_without_the_app_secret_is_refused() -> None:
    from bot.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as refused:
        parse_config({"adapters": {"dingtalk": {"client_id": "x"}}}, environ={})
    assert "client_secret required" in str(refused.value)


def test_the_readmes_dingtalk_section_is_a_valid_config() -> None:
    import re
    from pathlib import Path

    import yaml

    from bot.adapters import configured
    from bot.adapters.base import Adapter
    from bot.adapters.dingtalk import DingTalkAdapter
    from bot.config import parse_config

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    part = text.split("## DingTalk\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", part, re.S)
    assert block is not None
    environ = {"DINGTALK_CLIENT_ID": "ding1", "DINGTALK_CLIENT_SECRET": "s"}
    config = parse_config(yaml.safe_load(block.group(1)), environ=environ)
    [adapter] = configured(config)
    assert isinstance(adapter, DingTalkAdapter) and isinstance(adapter, Adapter)
    assert (adapter.name, adapter.chat_prefix) == ("dingtalk", "dt:")
