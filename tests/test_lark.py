"""The Lark/Feishu adapter (lark-oapi) against a local Lark open API, encrypted and signed
event posts and a protobuf long connection on real sockets, with a real Bot, SQLite file
and the stub model; each "must" of issue 28 for Lark has a test here."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from bot.adapters.lark_events import render_text, text_of
from groupmate.testing.stub_llm import StubLLM, calls
from groupmate.testing.stub_llm import text as text_reply
from storage import Member, OutgoingMessage
from storage.models import Reminder
from tests.conftest import eventually
from tests.fake_lark import (
    APP_ID,
    APP_SECRET,
    BOT_OPEN_ID,
    CHAT,
    ENCRYPT_KEY,
    VERIFICATION_TOKEN,
    FakeLark,
    encrypted,
    message_event,
    post_event,
    said,
)
from tests.http_harness import Api, Servers, llm_section

BOT = (BOT_OPEN_ID, "groupmate")


@pytest.fixture
def fake() -> Iterator[FakeLark]:
    api = FakeLark()
    api.server.start()
    yield api
    api.server.stop()


async def start(servers: Servers, fake: FakeLark, **sections: Any) -> Api:
    api = await servers.start(adapters={"lark": fake.section()}, **sections)
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


async def test_a_mention_sets_a_reminder_through_the_model_that_mentions_its_person(
    servers: Servers, fake: FakeLark, stub: StubLLM
) -> None:
    stub.script(
        calls(("reminder_set", {"when": "in 10 minutes", "content": "stretch", "who": ["@Bob"]}))
    )
    api = await start(servers, fake, llm=llm_section(stub), reminders={"fast_path": False})
    event = message_event(
        "@_user_1 remind @_user_2 in 10 minutes to stretch",
        mentions=(BOT, ("ou_bob", "Bob")),
        message_id="om_ask",
    )
    began = time.monotonic()
    answer = await post_event(fake, api.base_url, event)
    assert answer.status_code == 200 and time.monotonic() - began < 1.0  # before the model
    (reply,) = await fake.wait_sent(1)
    assert reply["parent_id"] == "om_ask" and reply["reply_in_thread"] is False  # reply API
    assert "Reminder #1 for @Bob" in said(reply)
    [request] = stub.requests
    assert "remind @Bob in 10 minutes to stretch" in str(request["messages"][-1]["content"])
    assert api.bot.reminders is not None

    def rewind(session: Any) -> None:
        query = update(Reminder).where(Reminder.chat_id == f"lk:{CHAT}")
        session.execute(query.values(next_fire_at=datetime.now(UTC) - timedelta(seconds=1)))

    await api.bot.reminders.database.write(rewind)
    fired = (await fake.wait_sent(2))[1]
    assert fired["chat_id"] == CHAT and "parent_id" not in fired  # a new message
    assert '<at user_id="ou_bob">Bob</at>' in said(fired) and "stretch" in said(fired)
    assert fired["uuid"].startswith("gm-")  # Lark's idempotency key
    # A reply to the reminder snoozes it (its message_id came back from the create call).
    for attempt in range(100):  # the delivery's outcome (with the id) is written after
        snooze = message_event("snooze 10m", sender="ou_bob", parent_id=fired["message_id"])
        await post_event(fake, api.base_url, snooze)
        answered = (await fake.wait_sent(3 + attempt))[-1]
        if said(answered).startswith("💤"):
            break
        await asyncio.sleep(0.05)
    assert said(answered).startswith("💤 Snoozed #1")
    assert answered["parent_id"] == snooze["event"]["message"]["message_id"]


async def test_a_message_not_addressed_to_the_bot_is_only_logged(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)
    await post_event(fake, api.base_url, message_event("lunch at noon?"))
    await post_event(fake, api.base_url, message_event("@_user_1 /reminders", mentions=(BOT,)))
    (reply,) = await fake.wait_sent(1)  # the addressed one only
    assert said(reply).startswith("There are no active reminders")
    history = await api.client.get(f"/v1/chats/lk:{CHAT}/messages")
    texts = [m["text"] for m in history.json()["messages"]]
    assert "lunch at noon?" in texts  # in the history the model reads
    assert "@groupmate /reminders" in texts  # the bot's mention key as its name


async def test_each_event_is_acted_on_once_even_re_pushed_or_after_a_restart(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)
    event = message_event("@_user_1 /remind in 2 hours stretch", mentions=(BOT,))
    await post_event(fake, api.base_url, event)
    await fake.wait_sent(1)
    assert (await post_event(fake, api.base_url, event)).status_code == 200  # Lark's re-push
    await servers.aclose()
    api = await start(servers, fake)  # the same database
    await post_event(fake, api.base_url, event)
    await post_event(fake, api.base_url, message_event("@_user_1 /reminders", mentions=(BOT,)))
    listing = (await fake.wait_sent(2))[1]
    assert "stretch" in said(listing)
    await asyncio.sleep(0.3)
    assert len(fake.sent()) == 2  # one answer to the reminder request, one listing
    assert said(listing).count("stretch") == 1  # and one reminder


@pytest.mark.parametrize(
    "how",
    [
        {"sign_key": "not-the-key"},  # a bad signature
        {"key": "not-the-key"},  # sealed with another key (signed with it too)
        {"token": "not-the-token"},  # the wrong verification token inside
    ],
)
async def test_a_post_lark_did_not_make_runs_nothing(
    servers: Servers, fake: FakeLark, how: dict[str, str]
) -> None:
    api = await start(servers, fake)
    event = message_event(
        "@_user_1 /remind in 2 hours stretch",
        mentions=(BOT,),
        token=how.pop("token", VERIFICATION_TOKEN),
    )
    answer = await post_event(fake, api.base_url, event, **how)
    assert answer.status_code == 401
    await asyncio.sleep(0.3)
    assert fake.sent() == []
    history = await api.client.get(f"/v1/chats/lk:{CHAT}/messages")
    assert history.json()["messages"] == []


async def test_the_url_check_a_429_a_private_chat_and_a_thread(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)
    check = {"challenge": "c-4242", "token": VERIFICATION_TOKEN, "type": "url_verification"}
    answer = await post_event(fake, api.base_url, check)
    assert answer.status_code == 200 and answer.json() == {"challenge": "c-4242"}
    fake.rate_limited = 1  # the first reply is answered 429, x-ogw-ratelimit-reset: 1
    began = time.monotonic()
    dm = message_event("/reminders", chat="oc_p2p", chat_type="p2p", sender="ou_ada")
    await post_event(fake, api.base_url, dm)
    (reply,) = await fake.wait_sent(1, within=15)
    assert time.monotonic() - began >= 1.0  # waited out, then sent once
    assert reply["chat_id"] == "oc_p2p"  # a DM needs no mention: a private chat
    threaded = message_event("@_user_1 /reminders", mentions=(BOT,), thread_id="omt_1")
    await post_event(fake, api.base_url, threaded)
    assert (await fake.wait_sent(2))[1]["reply_in_thread"] is True  # answered in the thread


async def test_the_chats_owner_and_managers_are_admins(servers: Servers, fake: FakeLark) -> None:
    api = await start(servers, fake)
    change = "@_user_1 /settings remind_others admins"
    await post_event(fake, api.base_url, message_event(change, mentions=(BOT,), sender="ou_alice"))
    refused = said((await fake.wait_sent(1))[0])
    await post_event(fake, api.base_url, message_event(change, mentions=(BOT,), sender="ou_max"))
    changed = said((await fake.wait_sent(2))[1])
    assert "admin" in refused.casefold() and "remind_others" not in refused
    assert changed != refused and "admins" in changed
    assert api.bot.reminders is not None
    settings = await api.bot.reminders.settings_of(f"lk:{CHAT}")
    assert settings.get("remind_others") == "admins"


async def test_a_name_resolves_to_the_one_chat_member_it_names(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)
    ask = "@_user_1 /remind @Carol in 2 hours tea"
    await post_event(fake, api.base_url, message_event(ask, mentions=(BOT,)))
    assert "Reminder #1 for @Carol" in said((await fake.wait_sent(1))[0])  # from page 3
    ask = "@_user_1 /remind @Sam in 2 hours tea"
    await post_event(fake, api.base_url, message_event(ask, mentions=(BOT,)))
    assert "Reminder #" not in said((await fake.wait_sent(2))[1])  # two Sams: never guessed
    pages = [path for _, path in fake.calls if path.endswith("/members")]
    assert len(pages) >= 4  # all pages walked


async def test_status_from_connecting_to_connected_and_no_secret_in_the_logs(
    servers: Servers, fake: FakeLark, caplog: pytest.LogCaptureFixture
) -> None:
    from bot.adapters.lark import LarkAdapter
    from bot.config import LarkSettings

    caplog.set_level(logging.DEBUG)
    idle = LarkAdapter(LarkSettings.model_validate(fake.section()), bot_name="groupmate")
    assert idle.status()["state"] == "connecting"
    fake.unavailable = 1  # Lark's token endpoint is down for a moment
    api = await servers.start(adapters={"lark": fake.section()})
    adapter = api.bot.adapters[0]
    await eventually(lambda: adapter.status()["state"] == "reconnecting")
    assert adapter.status()["last_error"] == "tenant_access_token: unavailable (HTTP 503)"
    await eventually(lambda: adapter.status()["state"] == "connected", within=10)  # backoff
    await post_event(fake, api.base_url, message_event("@_user_1 /reminders", mentions=(BOT,)))
    await fake.wait_sent(1)
    await post_event(fake, api.base_url, message_event("hi", token="wrong"))  # logged: refused
    health = (await api.client.get("/healthz")).json()
    lark = health["adapters"]["lark"]
    assert (lark["state"], lark["mode"], lark["open_id"]) == ("connected", "webhook", BOT_OPEN_ID)
    assert lark["last_event"] is not None and lark["last_error"] is None
    logged = " ".join(r.getMessage() for r in caplog.records)
    for secret in (APP_SECRET, ENCRYPT_KEY, VERIFICATION_TOKEN, "-tenant"):
        assert secret not in logged and secret not in str(health)


async def test_a_refused_secret_says_auth_failed_and_is_not_retried(
    servers: Servers, fake: FakeLark, caplog: pytest.LogCaptureFixture
) -> None:
    wrong = fake.section(app_secret="not-the-secret")
    api = await servers.start(adapters={"lark": wrong})
    adapter = api.bot.adapters[0]
    await eventually(lambda: adapter.status()["state"] == "auth failed")
    assert adapter.status()["last_error"] == "tenant_access_token: 10014 (HTTP 400)"
    await asyncio.sleep(1.2)
    assert fake.refused == 1  # asked once: waiting won't fix a secret
    assert "not-the-secret" not in " ".join(r.getMessage() for r in caplog.records)


async def test_without_an_encrypt_key_the_token_alone_is_checked(
    servers: Servers, fake: FakeLark
) -> None:
    import httpx

    lark = fake.section(encrypt_key=None)
    api = await servers.start(adapters={"lark": lark})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    async with httpx.AsyncClient(base_url=api.base_url) as client:
        wrong = message_event("@_user_1 /reminders", mentions=(BOT,), token="nope")
        assert (await client.post("/lark/events", json=wrong)).status_code == 401
        sealed = await client.post("/lark/events", content=encrypted(wrong))
        assert sealed.status_code == 400  # encrypted, but no key to open it
        right = message_event("@_user_1 /reminders", mentions=(BOT,))
        fake.know(right)
        assert (await client.post("/lark/events", json=right)).status_code == 200
        assert (await client.post("/lark/events", content=b"{not json")).status_code == 400
    (reply,) = await fake.wait_sent(1)
    assert said(reply).startswith("There are no active reminders")


async def test_a_reminder_is_sent_once_per_uuid_and_an_expired_token_is_renewed(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)
    adapter = api.bot.adapters[0]
    at, bob = datetime(2026, 1, 1, 9, tzinfo=UTC), Member("lk:ou_bob", "Bob")
    message = OutgoingMessage(f"lk:{CHAT}", "⏰ @Bob: stretch", people=(bob,),
                              kind="reminder", reminder_id="7", occurrence=at)  # fmt: skip
    first = await adapter.send(message)
    fake.expire_tokens()  # Lark answers 99991663: fetched anew, sent again
    again = await adapter.send(message)  # a retry after a lost answer: Lark drops it
    assert first == again and first is not None
    assert len(fake.sent()) == 1 and fake.token_requests == 2


async def test_the_long_connection_answers_once_acknowledges_and_reconnects(
    servers: Servers, fake: FakeLark
) -> None:
    lark = fake.section(mode="websocket", verification_token=None, encrypt_key=None)
    api = await servers.start(adapters={"lark": lark})
    adapter = api.bot.adapters[0]
    await eventually(lambda: adapter.status()["state"] == "connected", within=10)
    assert adapter.status()["mode"] == "websocket" and fake.sockets == 1
    event = message_event("@_user_1 /remind in 2 hours stretch", mentions=(BOT,))
    first = fake.push(event)
    (reply,) = await fake.wait_sent(1)
    assert said(reply).startswith("⏰ Reminder #1")
    await eventually(lambda: (first, 200) in fake.acks)  # acknowledged: Lark won't re-push
    again = fake.push(event)  # re-pushed all the same
    await eventually(lambda: (again, 200) in fake.acks)
    await asyncio.sleep(0.3)
    assert len(fake.sent()) == 1  # acted on once
    answer = await post_event(fake, api.base_url, event)  # no webhook route in this mode
    assert answer.status_code in (404, 405)
    fake.drop = True  # Lark closes the connection: the library reconnects
    await eventually(lambda: fake.sockets == 2, within=10)
    await eventually(lambda: adapter.status()["state"] == "connected", within=10)
    fake.push(message_event("@_user_1 /reminders", mentions=(BOT,)))
    assert "stretch" in said((await fake.wait_sent(2))[1])
    await servers.aclose()  # a clean stop: the connection's thread ends
    assert not any(t.name == "lark-ws" for t in threading.enumerate())


async def test_a_reply_to_the_bots_message_is_for_it_even_after_a_restart(
    servers: Servers, fake: FakeLark, stub: StubLLM
) -> None:
    stub.script(text_reply("you're welcome", delay=1.5))
    api = await start(servers, fake, llm=llm_section(stub))
    await post_event(fake, api.base_url, message_event("@_user_1 /reminders", mentions=(BOT,)))
    (listing,) = await fake.wait_sent(1)
    await servers.aclose()
    api = await start(servers, fake, llm=llm_section(stub))  # its sent ids forgotten
    began = time.monotonic()
    thanks = message_event("thanks!", parent_id=listing["message_id"])
    answer = await post_event(fake, api.base_url, thanks)
    assert answer.status_code == 200 and time.monotonic() - began < 1.0  # the model: 1.5 s
    assert "welcome" in said((await fake.wait_sent(2))[1])
    assert ("GET", f"/open-apis/im/v1/messages/{listing['message_id']}") in fake.calls
    await post_event(fake, api.base_url, message_event("me too", parent_id="om_someones"))
    await asyncio.sleep(0.3)
    assert len(fake.sent()) == 2 and len(stub.requests) == 1  # not a reply to the bot


def test_rich_text_reads_as_text_with_its_mentions() -> None:
    post = {"title": "Plan", "content": [[{"tag": "at", "user_id": "@_user_1",
            "user_name": "groupmate"}, {"tag": "text", "text": " remind "},
            {"tag": "at", "user_id": "@_user_2"}, {"tag": "text", "text": " at 5"}]]}  # fmt: skip
    message = {"message_type": "post", "content": json.dumps(post)}
    names = {"@_user_1": "groupmate", "@_user_2": "Bob"}
    assert text_of(message, names) == "Plan\n@groupmate remind @Bob at 5"
    assert text_of({"message_type": "image", "content": "{}"}, names) is None


def test_mentions_render_as_at_tags() -> None:
    rendered = render_text("@Bob & @Al: <b>tea</b> @Alice", {"@Bob": "ou_b", "@Al": "ou_a"})
    assert json.loads(rendered)["text"] == (
        '<at user_id="ou_b">Bob</at> & <at user_id="ou_a">Al</at>: <b>tea</b> @Alice'
    )


@pytest.mark.parametrize(
    ("overrides", "origin"),
    [({}, "https://open.feishu.cn"), ({"domain": "lark"}, "https://open.larksuite.com"),
     ({"domain": "lark", "api_url": "http://127.0.0.1:9/"}, "http://127.0.0.1:9")],
)  # fmt: skip
def test_feishu_and_lark_domains(overrides: dict[str, str], origin: str) -> None:
    from bot.adapters.lark_api import LarkApi
    from bot.config import parse_config

    lark = {"app_id": APP_ID, "app_secret": "s", "verification_token": "v"} | overrides
    config = parse_config({"adapters": {"lark": lark}}, environ={})
    assert config.adapters.lark is not None
    assert LarkApi(config.adapters.lark).client.config.domain == origin


@pytest.mark.parametrize(
    ("lark", "said"),
    [
        ({"app_id": APP_ID, "app_secret": "s"}, "verification_token required in webhook mode"),
        ({"app_secret": "s", "mode": "websocket"}, "app_id required in websocket mode"),
        ({"app_id": APP_ID, "app_secret": "s", "mode": "websocket",
          "api_url": "http://lark.example.com/api"}, "adapters.lark.api_url: an origin"),
    ],
)  # fmt: skip
def test_a_section_without_what_its_mode_needs_is_refused(lark: dict[str, str], said: str) -> None:
    from bot.adapters import configured
    from bot.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as refused:
        configured(parse_config({"adapters": {"lark": lark}}, environ={}))
    assert said in str(refused.value)


def test_the_readmes_lark_section_is_a_valid_config() -> None:
    import re
    from pathlib import Path

    import yaml

    from bot.adapters import configured
    from bot.adapters.base import Adapter
    from bot.adapters.lark import LarkAdapter
    from bot.config import parse_config

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    part = readme.split("## Lark/Feishu\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", part, re.S)
    assert block is not None
    environ = {"LARK_APP_ID": "cli_1", "LARK_APP_SECRET": "s",
               "LARK_VERIFICATION_TOKEN": "v", "LARK_ENCRYPT_KEY": "k"}  # fmt: skip
    config = parse_config(yaml.safe_load(block.group(1)), environ=environ)
    [adapter] = configured(config)
    assert isinstance(adapter, LarkAdapter) and isinstance(adapter, Adapter)
    assert (adapter.name, adapter.chat_prefix) == ("lark", "lk:")


@pytest.mark.slow
async def test_of_several_processes_on_one_database_one_runs_the_long_connection(
    tmp_path: Any, pg_server: str, fake: FakeLark
) -> None:
    from tests.postgres import create_database, drop_database

    url = create_database(pg_server)
    first, second = Servers(tmp_path), Servers(tmp_path)
    lark = fake.section(mode="websocket", verification_token=None, encrypt_key=None)
    try:
        leader = await first.start(adapters={"lark": lark}, storage={"url": url})
        await eventually(lambda: leader.bot.adapters[0].status()["state"] == "connected", within=10)
        other = await second.start(adapters={"lark": lark}, storage={"url": url})
        adapter = other.bot.adapters[0]
        await eventually(lambda: adapter.status()["state"] == "standby", within=10)
        await asyncio.sleep(0.5)
        assert fake.sockets == 1  # Lark would push each event to one of them at random
        # The leader's lock connection dies (the server frees the lock with it): the
        # leader closes its long connection and stands by; the other takes over.
        await asyncio.to_thread(_end_lock_holders, url)
        await eventually(lambda: adapter.status()["state"] == "connected", within=20)
        held = leader.bot.adapters[0].status()
        assert held["state"] == "standby" and fake.sockets == 2
        await second.aclose()  # that one stops: the first leads again
        await eventually(lambda: leader.bot.adapters[0].status()["state"] == "connected", within=20)
        assert fake.sockets == 3
    finally:
        await first.aclose()
        await second.aclose()
        drop_database(pg_server, url)


def _end_lock_holders(url: str) -> None:
    """Ends the database sessions that hold advisory locks, as a network cut would."""
    import psycopg
    from sqlalchemy.engine import make_url

    conninfo = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
        )
