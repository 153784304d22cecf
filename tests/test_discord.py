"""The Discord adapter (discord.py over the gateway) against a local Discord REST API and
gateway on real sockets, with a real Bot, SQLite file and the stub model: mentions by the
event's mention entities, Discord replies, reminders that mention people as `<@id>` with
allowed_mentions, snooze by a reply to the reminder, each message acted on once (a repeat,
a RESUME's replay, after a restart), a nonce that makes a retried send show once, a
refused token, 429s waited out, and the Message Content intent missing."""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import update

from bot.adapters.discord_events import render
from groupmate.testing.stub_llm import StubLLM, calls
from storage import Member, OutgoingMessage
from storage.models import Reminder
from tests.conftest import eventually
from tests.fake_discord import (
    BOT,
    CHANNEL,
    MESSAGE_CONTENT,
    THREAD,
    TOKEN,
    USERS,
    FakeDiscord,
)
from tests.http_harness import Api, Servers, llm_section

BOB = USERS["bob"]["id"]


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    api = FakeDiscord()
    api.server.start()
    yield api
    api.server.stop()


async def start(servers: Servers, fake: FakeDiscord, **sections: Any) -> Api:
    discord = {"token": TOKEN, "api_url": fake.api_url}
    api = await servers.start(adapters={"discord": discord}, **sections)
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


async def posted(fake: FakeDiscord, count: int, within: float = 10.0) -> list[dict[str, Any]]:
    await eventually(lambda: len(fake.posted()) >= count, within=within)
    return fake.posted()


async def test_a_mention_sets_a_reminder_that_mentions_its_person_and_a_reply_snoozes_it(
    fake: FakeDiscord, servers: Servers, stub: StubLLM
) -> None:
    stub.script(
        calls(("reminder_set", {"when": "in 10 minutes", "content": "stretch", "who": ["@Bob"]}))
    )
    api = await start(servers, fake, llm=llm_section(stub), reminders={"fast_path": False})
    asked = fake.say(f"<@{BOT}> remind <@{BOB}> in 10 minutes to stretch")
    (reply,) = await posted(fake, 1)
    assert reply["channel_id"] == CHANNEL and "Reminder #1 for @Bob" in reply["content"]
    # A Discord reply to the message, pinging only its author.
    assert str(reply["_body"]["message_reference"]["message_id"]) == asked["id"]
    assert reply["_body"]["allowed_mentions"] == {"parse": [], "replied_user": True}
    [request] = stub.requests
    assert "remind @Bob in 10 minutes to stretch" in str(request["messages"][-1]["content"])
    assert api.bot.reminders is not None

    def rewind(session: Any) -> None:
        query = update(Reminder).where(Reminder.chat_id == f"dc:{CHANNEL}")
        session.execute(query.values(next_fire_at=datetime.now(UTC) - timedelta(seconds=1)))

    await api.bot.reminders.database.write(rewind)
    fired = (await posted(fake, 2))[1]
    assert f"<@{BOB}>" in fired["content"] and "stretch" in fired["content"]
    assert fired["_body"]["allowed_mentions"]["users"] == [int(BOB)]  # Bob is notified
    assert "message_reference" not in fired["_body"]  # a new message, not a reply
    # A reply to the reminder snoozes it (its id came back from the send).
    for attempt in range(100):  # the delivery's outcome (with the id) is written after
        fake.say("snooze 10m", user="bob", reply_to=fired["id"])
        answer = (await posted(fake, 3 + attempt))[-1]
        if answer["content"].startswith("💤"):
            break
        await asyncio.sleep(0.05)
    assert answer["content"].startswith("💤 Snoozed #1")
    assert fake.compressed[0]  # discord.py asked for zlib-stream, and read it


async def test_a_message_not_addressed_to_the_bot_is_only_logged_and_threads_get_replies(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    fake.say("lunch at noon?")
    fake.say(f"<@{BOB}> /reminders?")  # a mention of someone else
    fake.say(rf"what does \<@{BOT}> do?")  # escaped: the bot's id, but no mention
    asked = fake.say(f"<@!{BOT}> /reminders", channel=THREAD)  # a nickname mention
    (reply,) = await posted(fake, 1)  # the addressed one only
    assert reply["content"].startswith("There are no active reminders")
    assert reply["channel_id"] == THREAD  # in the thread, as a reply to the message
    assert str(reply["_body"]["message_reference"]["message_id"]) == asked["id"]
    history = await api.client.get(f"/v1/chats/dc:{CHANNEL}/messages")
    texts = [m["text"] for m in history.json()["messages"]]
    assert "lunch at noon?" in texts  # in the history the model reads
    await asyncio.sleep(0.3)
    assert len(fake.posted()) == 1
    # A Discord reply to the bot's message (no mention, no command) is for the bot.
    fake.say("and what can you do?", user="bob", channel=THREAD, reply_to=reply["id"])
    answer = (await posted(fake, 2))[1]
    assert "Commands:" in answer["content"]  # answered (no model here: the help line)
    fake.say("/reminders")  # the prefix: a command needs no mention
    assert (await posted(fake, 3))[2]["content"].startswith("There are no active reminders")


async def test_each_message_is_acted_on_once_repeated_resumed_or_after_a_restart(
    fake: FakeDiscord, servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    api = await start(servers, fake)
    adapter = api.bot.adapters[0]
    first = fake.say(f"<@{BOT}> /remind in 2 hours stretch")
    await posted(fake, 1)
    fake.redeliver(first)  # the same message once more
    # The gateway drops and is down a moment: discord.py resumes the session, and
    # Discord replays what it missed (a message said meanwhile).
    fake.refuse_gateway = True
    fake.drop()
    await eventually(lambda: adapter.status()["state"] == "reconnecting")
    assert "4000" in adapter.status()["last_error"]  # the reason
    missed = fake.say(f"<@{BOT}> /remind in 3 hours drink water")
    fake.refuse_gateway = False
    await eventually(lambda: adapter.status()["state"] == "connected", within=15)
    assert [r["session_id"] for r in fake.resumes] == ["session-1"]
    assert len(fake.identifies) == 1  # resumed, not a new session
    second = (await posted(fake, 2))[1]
    assert "drink water" in second["content"]
    assert str(second["_body"]["message_reference"]["message_id"]) == missed["id"]
    await servers.aclose()
    gc.collect()  # aiohttp warns about a session it finds unclosed when collected
    assert "Unclosed" not in caplog.text  # the client's HTTP session was closed
    fake.say(f"<@{BOT}> /remind in 4 hours read", channel=THREAD)  # nobody connected
    discord = {"token": TOKEN, "api_url": fake.api_url}
    api = await servers.start(adapters={"discord": discord})  # the same database
    assert api.bot.reminders is not None

    def due_while_down(session: Any) -> None:  # "stretch" fell due 10 minutes ago
        query = update(Reminder).where(Reminder.content == "stretch")
        session.execute(query.values(next_fire_at=datetime.now(UTC) - timedelta(minutes=10)))

    await api.bot.reminders.database.write(due_while_down)  # before the gateway is up
    late = (await posted(fake, 3))[2]
    assert "stretch" in late["content"] and "after downtime" in late["content"]
    assert len(fake.identifies) == 2  # a new session
    fake.redeliver(first)  # and the first message once more, after the restart
    fake.say(f"<@{BOT}> /reminders")
    listing = (await posted(fake, 4))[3]
    assert "drink water" in listing["content"]
    await asyncio.sleep(0.3)
    # Two answers, the late reminder once and one listing: nothing replayed.
    assert len(fake.posted()) == 4
    assert "read" not in listing["content"]


async def test_a_retried_reminder_send_shows_once_through_its_nonce(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    adapter = api.bot.adapters[0]
    reminder = OutgoingMessage(
        chat_id=f"dc:{CHANNEL}",
        text="⏰ @Bob: stretch",
        reminder_id="r1",
        occurrence=datetime(2026, 1, 1, 9, tzinfo=UTC),
        people=(Member(f"dc:{BOB}", "Bob"),),
    )
    fake.lose_answers = 1  # made, but the answer is lost: discord.py retries the post
    first = await adapter.send(reminder)
    again = await adapter.send(reminder)  # the reminder engine's retry, all the same
    assert len(fake.bodies) == 3  # three posts on the wire ...
    assert [m["id"] for m in fake.posted()] == [first]  # ... one message
    assert again == first
    nonce = fake.bodies[0]["nonce"]
    assert len(nonce) <= 25 and fake.bodies[0]["enforce_nonce"] is True
    assert {b["nonce"] for b in fake.bodies} == {nonce}
    other = OutgoingMessage(
        chat_id=f"dc:{CHANNEL}", text="⏰ tea", reminder_id="r1",
        occurrence=datetime(2026, 1, 2, 9, tzinfo=UTC),
    )  # fmt: skip
    assert await adapter.send(other) != first  # another occurrence: another message


async def test_a_429_is_waited_out_and_a_dm_is_a_private_chat(
    fake: FakeDiscord, servers: Servers
) -> None:
    await start(servers, fake)
    fake.rate_limited = 1  # the first reply is answered 429, retry_after 1 s
    began = time.monotonic()
    dm = "1400000000000000001"
    fake.say("/reminders", channel=dm, user="ada")  # a DM needs no mention
    (reply,) = await posted(fake, 1, within=15)
    assert time.monotonic() - began >= 1.0  # waited out, then sent once
    assert reply["channel_id"] == dm and len(fake.bodies) == 2


async def test_members_with_manage_server_are_admins(fake: FakeDiscord, servers: Servers) -> None:
    api = await start(servers, fake)
    change = f"<@{BOT}> /settings remind_others admins"
    fake.say(change, user="alice")
    refused = (await posted(fake, 1))[0]["content"]
    fake.say(change, user="ada")  # her role has Manage Server
    changed = (await posted(fake, 2))[1]["content"]
    assert "admin" in refused.casefold() and "remind_others" not in refused
    assert changed != refused and "admins" in changed
    assert api.bot.reminders is not None
    settings = await api.bot.reminders.settings_of(f"dc:{CHANNEL}")
    assert settings.get("remind_others") == "admins"


async def test_a_name_resolves_to_the_one_member_it_names(
    fake: FakeDiscord, servers: Servers
) -> None:
    await start(servers, fake)
    for user in ("carol", "sam1", "sam2"):
        fake.say("hi all", user=user, channel=THREAD)  # seen in the guild
    fake.say(f"<@{BOT}> /remind @Carol in 2 hours tea")
    created = (await posted(fake, 1))[0]["content"]
    assert "Reminder #1 for @Carol" in created  # seen in the guild's thread
    fake.say(f"<@{BOT}> /remind @Sam in 2 hours tea", channel=THREAD)
    ambiguous = (await posted(fake, 2))[1]["content"]
    assert "Reminder #" not in ambiguous  # two Sams: asked about, never guessed
    fake.say(f"<@{BOT}> /remind @Dave in 2 hours tea")
    assert "Reminder #" not in (await posted(fake, 3))[2]["content"]  # never seen


async def test_without_the_message_content_intent_it_says_so_and_mentions_still_work(
    fake: FakeDiscord, servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    fake.message_content_enabled = False  # not switched on in the Developer Portal
    api = await start(servers, fake)
    adapter = api.bot.adapters[0]
    assert fake.close_codes == [4014]
    first, second = (i["intents"] for i in fake.identifies)
    assert first & MESSAGE_CONTENT and not second & MESSAGE_CONTENT  # asked again without
    status = (await api.client.get("/healthz")).json()["adapters"]["discord"]
    assert status["state"] == "connected" and status["message_content"] is False
    assert "Message Content intent is not enabled" in status["last_error"]
    assert "Message Content intent is not enabled" in caplog.text
    fake.say("/reminders")  # the prefix: Discord sends no text, so nothing to answer
    fake.say(f"<@{BOT}> /remind in 2 hours stretch")  # a mention carries its text
    (reply,) = await posted(fake, 1)
    assert reply["content"].startswith("⏰ Reminder #1")
    assert adapter.status()["connected"]
    history = (await api.client.get(f"/v1/chats/dc:{CHANNEL}/messages")).json()["messages"]
    assert [m["text"] for m in history if m["sender_id"] != "bot"] == [
        "@groupmate /remind in 2 hours stretch"
    ]  # the withheld text is not logged as an empty message


async def test_status_and_no_token_in_the_logs(
    fake: FakeDiscord, servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api = await start(servers, fake)
    fake.say(f"<@{BOT}> /reminders")
    await posted(fake, 1)
    health = (await api.client.get("/healthz")).json()
    discord = health["adapters"]["discord"]
    assert (discord["state"], discord["user_id"]) == ("connected", BOT)
    assert discord["message_content"] is True and discord["last_error"] is None
    assert discord["last_event"] is not None
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert TOKEN not in logged and TOKEN not in str(health)


async def test_message_content_off_in_the_config_is_not_asked_for(
    fake: FakeDiscord, servers: Servers
) -> None:
    discord = {"token": TOKEN, "api_url": fake.api_url, "message_content": False}
    api = await servers.start(adapters={"discord": discord})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    [identify] = fake.identifies
    # Guilds, guild messages and DMs; neither privileged intent (Server Members: 1 << 1).
    assert identify["intents"] == 1 | 1 << 9 | 1 << 12
    status = api.bot.adapters[0].status()
    assert status["message_content"] is False and status["last_error"] is None


@pytest.mark.parametrize("where", ["rest", "gateway"])
async def test_a_refused_token_says_auth_failed_and_is_not_retried(
    fake: FakeDiscord, servers: Servers, caplog: pytest.LogCaptureFixture, where: str
) -> None:
    token = "MTAw.wrong-token.secret" if where == "rest" else TOKEN
    fake.gateway_token = "reset-in-the-portal" if where == "gateway" else TOKEN
    discord = {"token": token, "api_url": fake.api_url}
    api = await servers.start(adapters={"discord": discord})
    adapter = api.bot.adapters[0]
    await eventually(lambda: adapter.status()["state"] == "auth failed")
    await asyncio.sleep(1.2)
    if where == "rest":  # GET /users/@me answered 401: asked once
        assert adapter.status()["last_error"] == "REST: 401 Unauthorized"
        assert fake.requests == [("GET", "/users/@me")] and fake.identifies == []
    else:  # IDENTIFY answered by close code 4004
        assert adapter.status()["last_error"] == "gateway: 4004 authentication failed"
        assert len(fake.identifies) == 1 and fake.close_codes == [4004]
    assert token not in caplog.text


def test_render_mentions_its_people() -> None:
    people = [Member(f"dc:{BOB}", "Bob"), Member("dc:7", "Al"), Member("sl:U1", "Sl")]
    assert render("@Bob & @Al: @Alice @Sl", people) == f"<@{BOB}> & <@7>: @Alice @Sl"


def test_a_section_without_a_token_is_refused() -> None:
    from bot.config import ConfigError, parse_config

    with pytest.raises(ConfigError) as refused:
        parse_config({"adapters": {"discord": {"api_url": "http://x"}}}, environ={})
    assert "adapters.discord: token required (unset)" in str(refused.value)


def test_the_readmes_discord_section_is_a_valid_config() -> None:
    import re
    from pathlib import Path

    import yaml

    from bot.adapters import configured
    from bot.adapters.discord import DiscordAdapter
    from bot.config import parse_config

    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = text.split("## Discord\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    config = parse_config(yaml.safe_load(block.group(1)), environ={"DISCORD_BOT_TOKEN": "t"})
    [adapter] = configured(config)
    assert isinstance(adapter, DiscordAdapter)


async def test_a_gateway_that_is_down_at_start_is_retried_with_backoff(
    fake: FakeDiscord, servers: Servers
) -> None:
    fake.refuse_gateway = True
    api = await servers.start(adapters={"discord": {"token": TOKEN, "api_url": fake.api_url}})
    adapter = api.bot.adapters[0]
    await eventually(lambda: adapter.status()["state"] == "reconnecting", within=10)
    assert adapter.status()["last_error"] == "could not connect"
    fake.refuse_gateway = False
    await eventually(lambda: adapter.status()["state"] == "connected", within=15)
    assert adapter.status()["last_error"] is None
    assert fake.requests.count(("GET", "/users/@me")) >= 2  # a new login after the pause
