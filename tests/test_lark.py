"""The Lark/Feishu adapter (lark-oapi) in webhook mode against a local Lark open API and
encrypted, signed event posts on real sockets, with a real Bot, SQLite file and the stub
model. The long connection: test_lark_ws.py; rendering and config: test_lark_config.py."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import operator
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from groupmate.storage import Member, OutgoingMessage
from groupmate.testing.stub_llm import StubLLM, calls
from groupmate.testing.stub_llm import text as text_reply
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
    signed,
)
from tests.http_harness import (
    Api,
    Servers,
    delivered_ids,
    fell_due_while_down,
    llm_section,
    make_due,
)

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
    assert reply["parent_id"] == "om_ask" and "thread_id" not in reply  # reply API
    assert fake.requests[reply["message_id"]]["reply_in_thread"] is False
    assert "Reminder #1 for @Bob" in said(reply)
    [request] = stub.requests
    assert "remind @Bob in 10 minutes to stretch" in str(request["messages"][-1]["content"])
    assert api.bot.reminders is not None

    await make_due(api.bot)
    fired = (await fake.wait_sent(2))[1]
    assert fired["chat_id"] == CHAT and "parent_id" not in fired  # a new message
    # A reminder with buttons: a card, where Lark's mention is <at id=…>.
    assert "<at id=ou_bob></at>" in said(fired) and "stretch" in said(fired)
    assert fake.requests[fired["message_id"]]["uuid"].startswith("gm-")  # idempotency key
    # A reply to the reminder snoozes it: its message id came back from the create call.
    assert await delivered_ids(api.bot) == [fired["message_id"]]
    snooze = message_event("snooze 10m", sender="ou_bob", parent_id=fired["message_id"])
    await post_event(fake, api.base_url, snooze)
    answered = (await fake.wait_sent(3))[2]
    assert said(answered).startswith("💤 Snoozed #1")
    assert answered["parent_id"] == snooze["event"]["message"]["message_id"]


async def test_a_reminder_due_while_the_bot_was_down_comes_once_late_with_the_note(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)
    await post_event(fake, api.base_url, message_event("@_user_1 /remind in 2 hours stretch",
                                                       mentions=(BOT,)))  # fmt: skip
    await fake.wait_sent(1)
    await servers.aclose()
    fell_due_while_down(servers)
    await start(servers, fake)
    fired = (await fake.wait_sent(2))[1]
    assert "stretch" in said(fired) and "after downtime" in said(fired)
    await asyncio.sleep(0.5)
    assert len(fake.sent()) == 2  # once


async def test_a_message_not_addressed_to_the_bot_is_only_logged(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)
    await post_event(fake, api.base_url, message_event("lunch at noon?"))
    # The bot's name typed as text is no mention: Lark's mention entities say who is.
    await post_event(fake, api.base_url, message_event("ask @groupmate about it"))
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


async def test_posts_before_the_bot_is_ready_and_after_it_stopped_are_answered_503(
    servers: Servers, fake: FakeLark
) -> None:
    """Lark pushes a post again when it isn't answered 200: none is taken and then lost."""
    fake.unavailable = 1  # the token, so the bot's open_id, comes after a second
    api = await servers.start(adapters={"lark": fake.section()})
    early = message_event("@_user_1 /reminders", mentions=(BOT,))
    assert (await post_event(fake, api.base_url, early)).status_code == 503
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    assert (await post_event(fake, api.base_url, early)).status_code == 200  # pushed again
    (reply,) = await fake.wait_sent(1)
    assert said(reply).startswith("There are no active reminders")
    await api.bot.adapters[0].stop()
    late = message_event("@_user_1 /reminders", mentions=(BOT,))
    assert (await post_event(fake, api.base_url, late)).status_code == 503


async def test_an_answer_whose_reply_is_lost_is_sent_again_under_the_same_uuid(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)
    fake.lose_answers = 1  # Lark posts the reply, its answer is lost: the bot tries again
    ask = message_event("@_user_1 /reminders", mentions=(BOT,), message_id="om_lost")
    await post_event(fake, api.base_url, ask)
    reply_call = ("POST", "/open-apis/im/v1/messages/om_lost/reply")
    await eventually(lambda: fake.calls.count(reply_call) == 2, within=10)  # after 1 s
    await asyncio.sleep(0.3)
    (reply,) = fake.sent()  # one message: Lark dropped the second try by its uuid
    assert said(reply).startswith("There are no active reminders")
    assert fake.requests[reply["message_id"]]["uuid"].startswith("gm-")


@pytest.mark.parametrize(
    "how",
    [
        {"sign_key": "not-the-key"},  # a bad signature
        {"key": "not-the-key"},  # sealed with another key (signed with it too)
        {"token": "not-the-token"},  # the wrong verification token inside
        {"unsigned": True},  # no signature headers
        {"signature": "sé"},  # a signature that isn't even ASCII
        {"plain": True},  # not encrypted, while an encrypt key is set
    ],
)
async def test_a_post_lark_did_not_make_runs_nothing(
    servers: Servers, fake: FakeLark, how: dict[str, Any]
) -> None:
    api = await start(servers, fake)
    event = message_event(
        "@_user_1 /remind in 2 hours stretch",
        mentions=(BOT,),
        token=how.pop("token", VERIFICATION_TOKEN),
    )
    key = how.get("key", ENCRYPT_KEY)
    body = json.dumps(event).encode() if how.get("plain") else encrypted(event, key)
    sent = signed(body, how.get("sign_key", key))
    if "signature" in how:
        sent["X-Lark-Signature"] = how["signature"]
    if how.get("unsigned"):
        sent = {"Content-Type": "application/json"}
    headers = [(k.encode(), v.encode("latin-1")) for k, v in sent.items()]  # as on the wire
    async with httpx.AsyncClient(base_url=api.base_url) as client:
        answer = await client.post("/lark/events", content=body, headers=headers)
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
    in_thread = (await fake.wait_sent(2))[1]
    assert fake.requests[in_thread["message_id"]]["reply_in_thread"] is True
    assert in_thread["thread_id"]  # Lark put it in a thread


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
    for sam in ("ou_sam1", "ou_sam2"):  # both Sams speak: both are seen in the chat
        await post_event(fake, api.base_url, message_event(f"hi from {sam}", sender=sam))
    for sam in ("ou_sam1", "ou_sam2"):
        await eventually(functools.partial(_logged, api, f"hi from {sam}"))
    ask = "@_user_1 /remind @Sam in 2 hours tea"
    await post_event(fake, api.base_url, message_event(ask, mentions=(BOT,)))
    assert "Reminder #" not in said((await fake.wait_sent(2))[1])  # two Sams: never guessed
    pages = [path for _, path in fake.calls if path.endswith("/members")]
    assert len(pages) >= 4  # all pages walked


async def _logged(api: Api, text: str) -> bool:
    history = await api.client.get(f"/v1/chats/lk:{CHAT}/messages")
    return text in [m["text"] for m in history.json()["messages"]]


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
    # A reply to a person's message, and to another app's bot: not to this bot.
    fake.keep("om_persons", CHAT, "ou_bob", "open_id", "user")
    fake.keep("om_other_app", CHAT, "cli_other", "app_id", "app")
    for parent in ("om_persons", "om_other_app"):
        await post_event(fake, api.base_url, message_event("me too", parent_id=parent))
        asked = ("GET", f"/open-apis/im/v1/messages/{parent}")
        await eventually(functools.partial(operator.contains, fake.calls, asked))
    await asyncio.sleep(0.3)
    assert len(fake.sent()) == 2 and len(stub.requests) == 1  # not a reply to the bot


async def test_status_from_connecting_to_connected_and_no_secret_in_the_logs(
    servers: Servers, fake: FakeLark, caplog: pytest.LogCaptureFixture
) -> None:
    from groupmate.bot.adapters.lark import LarkAdapter
    from groupmate.bot.adapters.lark_settings import LarkSettings

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
    lark = fake.section(encrypt_key=None)
    api = await servers.start(adapters={"lark": lark})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    async with httpx.AsyncClient(base_url=api.base_url) as client:
        wrong = message_event("@_user_1 /reminders", mentions=(BOT,), token="nope")
        assert (await client.post("/lark/events", json=wrong)).status_code == 401
        sealed = await client.post("/lark/events", content=encrypted(wrong))
        assert sealed.status_code == 400  # encrypted, but no key to open it
        odd = await client.post("/lark/events", json={"header": "x", "token": "nope"})
        assert odd.status_code == 401  # a header that isn't an object: refused, no crash
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
    assert fake.sent()[0]["sender"] == {"id": APP_ID, "id_type": "app_id", "sender_type": "app"}
