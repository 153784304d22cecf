"""The Slack adapter (slack-bolt, Events API) against a local Slack Web API and signed
event posts on real sockets, with a real Bot, SQLite file and the stub model: mentions
by Slack's entities, replies in the thread, reminders that mention people the Slack way,
snooze by a reply in the reminder's thread, each event acted on once (a retry, or after
a restart), bad signatures refused before anything runs, and 429s waited out."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest

from groupmate.bot.adapters.slack_send import render_mrkdwn
from groupmate.storage import Member
from groupmate.testing.stub_llm import StubLLM, calls, text
from tests.conftest import eventually
from tests.docs_pages import page
from tests.fake_slack import (
    APP_TOKEN,
    BOT_TOKEN,
    BOT_USER,
    CHANNEL,
    SIGNING_SECRET,
    FakeSlack,
    message_event,
    post_event,
)
from tests.http_harness import (
    Api,
    Servers,
    delivered_ids,
    fell_due_while_down,
    llm_section,
    make_due,
)


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    api = FakeSlack()
    api.server.start()
    yield api
    api.server.stop()


async def start(servers: Servers, fake: FakeSlack, **sections: Any) -> Api:
    slack = {"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET, "api_url": fake.api_url}
    api = await servers.start(adapters={"slack": slack}, **sections)
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


async def posted(fake: FakeSlack, count: int, within: float = 10.0) -> list[dict[str, Any]]:
    await eventually(lambda: len(fake.posted()) >= count, within=within)
    return fake.posted()


async def test_a_mention_sets_a_reminder_through_the_model_that_mentions_its_person(
    servers: Servers, fake: FakeSlack, stub: StubLLM
) -> None:
    stub.script(
        calls(("reminder_set", {"when": "in 10 minutes", "content": "stretch", "who": ["@Bob"]}))
    )
    api = await start(servers, fake, llm=llm_section(stub), reminders={"fast_path": False})
    envelope = message_event(f"<@{BOT_USER}> remind <@UBOB> in 10 minutes to stretch")
    answer = await post_event(api.base_url, envelope)
    assert answer.status_code == 200  # acknowledged before the model runs
    (reply,) = await posted(fake, 1)
    assert reply["channel"] == CHANNEL and "Reminder #1 for @Bob" in reply["text"]
    assert "thread_ts" not in reply or reply["thread_ts"] is None  # not in a thread
    [request] = stub.requests
    assert "remind @Bob in 10 minutes to stretch" in str(request["messages"][-1]["content"])
    assert api.bot.reminders is not None

    await make_due(api.bot)
    fired = (await posted(fake, 2))[1]
    assert "<@UBOB>" in fired["text"] and "stretch" in fired["text"]  # notifies Bob
    # A reply in the reminder's thread snoozes it (its ts came back from postMessage).
    assert await delivered_ids(api.bot) == [_ts_of(fake, 1)]
    thread = message_event(
        "snooze 10m", user="UBOB", thread_ts=_ts_of(fake, 1), parent_user_id=BOT_USER
    )
    await post_event(api.base_url, thread)
    answer_text = (await posted(fake, 3))[2]
    assert answer_text["text"].startswith("💤 Snoozed #1")
    assert answer_text["thread_ts"] == _ts_of(fake, 1)  # answered in the thread


def _ts_of(fake: FakeSlack, index: int) -> str:
    """The ts Slack gave the `index`th posted message."""
    return str(fake.posted()[index]["_ts"])


async def test_a_message_not_addressed_to_the_bot_is_only_logged(
    servers: Servers, fake: FakeSlack
) -> None:
    api = await start(servers, fake)
    await post_event(api.base_url, message_event("lunch at noon?", ts="1764100000.000100"))
    # The bot's name typed as text is no mention: Slack's entities say who is mentioned.
    await post_event(api.base_url, message_event("ask @groupmate about it", ts="1764100000.000200"))
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /reminders"))
    (reply,) = await posted(fake, 1)  # the addressed one only
    assert reply["text"].startswith("There are no active reminders")
    await post_event(api.base_url, message_event("/reminders"))  # a command needs no mention
    assert (await posted(fake, 2))[1]["text"] == reply["text"]
    history = await api.client.get(f"/v1/chats/sl:{CHANNEL}/messages")
    texts = [m["text"] for m in history.json()["messages"]]
    assert "lunch at noon?" in texts  # in the history the model reads


async def test_each_event_is_acted_on_once_even_retried_or_after_a_restart(
    servers: Servers, fake: FakeSlack
) -> None:
    api = await start(servers, fake)
    envelope = message_event(f"<@{BOT_USER}> /remind in 2 hours stretch")
    await post_event(api.base_url, envelope)
    await posted(fake, 1)
    answer = await post_event(api.base_url, envelope, retry=1)  # Slack's re-delivery
    assert answer.status_code == 200
    await servers.aclose()
    api = await start(servers, fake)  # the same database
    await post_event(api.base_url, envelope, retry=2)
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /reminders"))
    listing = (await posted(fake, 2))[1]
    assert "stretch" in listing["text"]
    await asyncio.sleep(0.3)
    assert len(fake.posted()) == 2  # one answer to the reminder request, one listing
    assert listing["text"].count("stretch") == 1  # and one reminder


@pytest.mark.parametrize(
    "signing",
    [
        {"secret": "not-the-secret"},
        {"at": int(time.time()) - 6 * 60},  # Slack's window is 5 minutes
    ],
)
async def test_a_request_slack_did_not_sign_runs_nothing(
    servers: Servers, fake: FakeSlack, signing: dict[str, Any]
) -> None:
    api = await start(servers, fake)
    envelope = message_event(f"<@{BOT_USER}> /remind in 2 hours stretch")
    answer = await post_event(api.base_url, envelope, **signing)
    assert answer.status_code == 401
    await asyncio.sleep(0.3)
    assert fake.posted() == []
    history = await api.client.get(f"/v1/chats/sl:{CHANNEL}/messages")
    assert history.json()["messages"] == []


async def test_the_url_check_a_429_and_a_private_chat(servers: Servers, fake: FakeSlack) -> None:
    api = await start(servers, fake)
    challenge = {"token": "t", "challenge": "c-4242", "type": "url_verification"}
    answer = await post_event(api.base_url, challenge)
    assert answer.status_code == 200 and "c-4242" in answer.text
    fake.rate_limited = 1  # the first reply is answered 429, Retry-After: 1
    began = time.monotonic()
    dm = message_event("/reminders", channel="D0001", channel_type="im", user="UADMIN")
    await post_event(api.base_url, dm)
    (reply,) = await posted(fake, 1, within=15)
    assert time.monotonic() - began >= 1.0  # waited out, then sent once
    assert reply["channel"] == "D0001"  # a DM needs no mention: a private chat


async def test_workspace_admins_are_admins(servers: Servers, fake: FakeSlack) -> None:
    api = await start(servers, fake)
    change = f"<@{BOT_USER}> /settings remind_others admins"
    await post_event(api.base_url, message_event(change, user="UALICE"))
    refused = (await posted(fake, 1))[0]["text"]
    await post_event(api.base_url, message_event(change, user="UADMIN"))
    changed = (await posted(fake, 2))[1]["text"]
    assert "admin" in refused.casefold() and "remind_others" not in refused
    assert changed != refused and "admins" in changed
    assert api.bot.reminders is not None
    settings = await api.bot.reminders.settings_of(f"sl:{CHANNEL}")
    assert settings.get("remind_others") == "admins"
    # The configured prefix ("!") addresses the bot too: the admin is looked up then.
    prefixed = message_event("! /settings remind_others members", user="UADMIN")
    await post_event(api.base_url, prefixed)
    await posted(fake, 3)
    settings = await api.bot.reminders.settings_of(f"sl:{CHANNEL}")
    assert settings.get("remind_others") == "members"


async def test_status_and_no_token_in_the_logs(
    servers: Servers, fake: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api = await start(servers, fake)
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /reminders"))
    await posted(fake, 1)
    health = (await api.client.get("/healthz")).json()
    slack = health["adapters"]["slack"]
    assert (slack["state"], slack["mode"], slack["user_id"]) == ("connected", "events", BOT_USER)
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert BOT_TOKEN not in logged and SIGNING_SECRET not in logged
    assert BOT_TOKEN not in str(health)


def test_mrkdwn_escapes_text_and_mentions_the_people() -> None:
    people = [Member("sl:UBOB", "Bob"), Member("sl:UAL", "Al")]
    rendered = render_mrkdwn("@Bob & @Al: <b>tea</b> @Alice", people)
    assert rendered == "<@UBOB> &amp; <@UAL>: &lt;b&gt;tea&lt;/b&gt; @Alice"


@pytest.mark.parametrize(
    ("section", "said"),
    [
        ({"bot_token": "xoxb-1"}, "adapters.slack: signing_secret required in events mode"),
        ({"bot_token": "xoxb-1", "mode": "socket"}, "app_token required in socket mode"),
        ({"signing_secret": "s"}, "adapters.slack: bot_token required in events mode (unset)"),
    ],
)
def test_a_section_without_what_its_mode_needs_is_refused(
    section: dict[str, str], said: str
) -> None:
    from groupmate.bot.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as refused:
        parse_config({"adapters": {"slack": section}}, environ={})
    assert said in str(refused.value)


def test_the_readmes_slack_section_is_a_valid_config() -> None:
    import re

    import yaml

    from groupmate.bot.adapters import configured
    from groupmate.bot.adapters.slack import SlackAdapter
    from groupmate.bot.config import parse_config

    section = page("platforms/slack.md")
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    environ = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_SIGNING_SECRET": "s"}
    config = parse_config(yaml.safe_load(block.group(1)), environ=environ)
    [adapter] = configured(config)
    assert isinstance(adapter, SlackAdapter)


async def test_socket_mode_answers_over_the_socket_once_and_acknowledges(
    servers: Servers, fake: FakeSlack
) -> None:
    slack = {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "mode": "socket",
             "api_url": fake.api_url}  # fmt: skip
    api = await servers.start(adapters={"slack": slack})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    await eventually(lambda: api.bot.adapters[0].status()["state"] == "connected")
    assert api.bot.adapters[0].status()["mode"] == "socket"
    assert fake.sockets == 1
    envelope = message_event(f"<@{BOT_USER}> /remind in 2 hours stretch")
    first = fake.push(envelope)
    (reply,) = await posted(fake, 1)
    assert reply["text"].startswith("⏰ Reminder #1")
    await eventually(lambda: first in fake.acks)  # acknowledged, so Slack won't re-send
    again = fake.push(envelope, retry_attempt=1)  # Slack's re-delivery all the same
    await eventually(lambda: again in fake.acks)
    await asyncio.sleep(0.3)
    assert len(fake.posted()) == 1  # acted on once
    # No HTTP route in socket mode: a post to /slack/events reaches nothing.
    answer = await post_event(api.base_url, message_event(f"<@{BOT_USER}> hi"))
    assert answer.status_code in (404, 405)


async def test_a_name_resolves_to_the_one_workspace_member_it_names(
    servers: Servers, fake: FakeSlack
) -> None:
    api = await start(servers, fake)
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /remind @Carol in 2 hours tea"))
    created = (await posted(fake, 1))[0]["text"]
    assert "Reminder #1 for @Carol" in created  # from users.list, all pages
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /remind @Sam in 2 hours tea"))
    ambiguous = (await posted(fake, 2))[1]["text"]
    assert "Reminder #" not in ambiguous  # two Sams: asked about, never guessed
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /remind @Gil in 2 hours tea"))
    gone = (await posted(fake, 3))[2]["text"]
    assert "Reminder #" not in gone  # a deleted account is no one
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /remind @Dave in 2 hours tea"))
    elsewhere = (await posted(fake, 4))[3]["text"]
    assert "Reminder #" not in elsewhere  # in the workspace, not in this channel
    for sam in ("USAM1", "USAM2"):  # both seen in the channel: still neither
        await post_event(api.base_url, message_event("hi all", user=sam))
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /remind @Sam in 2 hours tea"))
    assert "Reminder #" not in (await posted(fake, 5))[4]["text"]
    assert sum(1 for name, _ in fake.calls if name == "users.list") >= 3  # paged
    assert sum(1 for name, _ in fake.calls if name == "conversations.members") >= 3


async def test_a_refused_token_says_auth_failed_and_is_not_retried(
    servers: Servers, fake: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    slack = {"bot_token": "xoxb-wrong-token", "signing_secret": SIGNING_SECRET,
             "api_url": fake.api_url}  # fmt: skip
    api = await servers.start(adapters={"slack": slack})
    adapter = api.bot.adapters[0]
    await eventually(lambda: adapter.status()["state"] == "auth failed")
    assert adapter.status()["last_error"] == "auth.test: invalid_auth"
    await asyncio.sleep(1.2)
    assert (fake.refused, fake.calls) == (1, [])  # asked once: waiting won't fix a token
    assert "xoxb-wrong-token" not in " ".join(r.getMessage() for r in caplog.records)


async def test_a_dropped_socket_reconnects_and_the_status_follows(
    servers: Servers, fake: FakeSlack
) -> None:
    slack = {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "mode": "socket",
             "api_url": fake.api_url}  # fmt: skip
    api = await servers.start(adapters={"slack": slack})
    adapter = api.bot.adapters[0]
    await eventually(lambda: adapter.status()["state"] == "connected", within=10)
    fake.drops = 1
    await eventually(lambda: fake.sockets == 2, within=30)  # a new socket, a new URL
    await eventually(lambda: adapter.status()["state"] == "connected", within=10)
    fake.push(message_event(f"<@{BOT_USER}> /reminders"))
    (reply,) = await posted(fake, 1)
    assert reply["text"].startswith("There are no active reminders")


async def test_a_reminder_due_while_the_bot_was_down_comes_once_late_with_the_note(
    servers: Servers, fake: FakeSlack
) -> None:
    api = await start(servers, fake)
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /remind in 2 hours stretch"))
    await posted(fake, 1)
    await servers.aclose()
    fell_due_while_down(servers)
    api = await start(servers, fake)
    fired = (await posted(fake, 2))[1]["text"]
    assert fired.startswith("⏰ Reminder for <@UALICE>: stretch") and "after downtime" in fired
    await asyncio.sleep(0.5)
    assert len(fake.posted()) == 2  # once


async def test_an_answer_whose_send_fails_for_a_moment_is_sent_again(
    servers: Servers, fake: FakeSlack
) -> None:
    """Slack took the event (acknowledged): it won't send it again, so the adapter must."""
    api = await start(servers, fake)
    fake.failing = 2
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /reminders"))
    (reply,) = await posted(fake, 1, within=15)  # after 1 s and 2 s
    assert reply["text"].startswith("There are no active reminders")
    assert fake.failing == 0


async def test_an_event_before_the_bot_knows_itself_is_refused_so_slack_sends_it_again(
    servers: Servers, fake: FakeSlack
) -> None:
    fake.auth_down = 1  # auth.test fails once: the bot is up 1 s later
    slack = {"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET, "api_url": fake.api_url}
    api = await servers.start(adapters={"slack": slack})
    envelope = message_event(f"<@{BOT_USER}> /reminders")
    early = await post_event(api.base_url, envelope)
    assert early.status_code == 503  # not acknowledged: Slack re-sends it
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    again = await post_event(api.base_url, envelope, retry=1)
    assert again.status_code == 200
    (reply,) = await posted(fake, 1)
    assert reply["text"].startswith("There are no active reminders")


async def test_a_follow_up_in_a_thread_someone_started_reaches_the_bot(
    servers: Servers, fake: FakeSlack, stub: StubLLM
) -> None:
    """Every message of a Slack thread names the thread's first message: the bot asked
    there answers there, and with follow-ups on, the asker's next message in the thread
    reaches it without a mention (the thread's first message is Bob's, not a reply
    Alice picked to someone else)."""
    stub.script(text("the 14th"), text("at 10"))
    api = await start(servers, fake, llm=llm_section(stub))
    await post_event(
        api.base_url, message_event(f"<@{BOT_USER}> /settings followup on", user="UADMIN")
    )
    await posted(fake, 1)
    root = "1764100000.000100"
    await post_event(api.base_url, message_event("launch planning", user="UBOB", ts=root))
    asked = message_event(
        f"<@{BOT_USER}> when is the launch?", thread_ts=root, parent_user_id="UBOB"
    )
    await post_event(api.base_url, asked)
    answer = (await posted(fake, 2))[1]
    assert answer["text"].endswith("the 14th") and answer["thread_ts"] == root
    follow = message_event("and what time?", thread_ts=root, parent_user_id="UBOB")
    await post_event(api.base_url, follow)
    then = (await posted(fake, 3))[2]
    assert then["text"].endswith("at 10") and then["thread_ts"] == root
    assert stub.pending == 0
