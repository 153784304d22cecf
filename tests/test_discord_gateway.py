"""The Discord adapter's connection, against the local Discord of fake_discord.py: the
gateway handshake as Discord checks it (IDENTIFY's shape, heartbeats ACKed, the transport
compression the client asks for), RECONNECT, a refused token, the Message Content intent
missing, a gateway down at start, status on /healthz without secrets, and the config."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import shutil
from collections.abc import Iterator
from subprocess import PIPE

import aiohttp
import discord.utils
import pytest
import yaml
from discord.gateway import DiscordWebSocket
from discord.http import Route

from groupmate.bot.adapters import configured
from groupmate.bot.adapters.discord import DiscordAdapter
from groupmate.bot.adapters.discord_events import render
from groupmate.bot.config import ConfigError, parse_config
from groupmate.storage import Member
from tests.conftest import eventually
from tests.docs_pages import page
from tests.fake_discord import FakeDiscord
from tests.fake_discord_guild import BOT, CHANNEL, MESSAGE_CONTENT, TOKEN
from tests.http_harness import Servers
from tests.test_discord import BOB, posted, start


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    api = FakeDiscord()
    api.server.start()
    yield api
    api.server.stop()


async def test_the_gateway_handshake_heartbeats_and_compression_are_discords(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    [identify] = fake.identifies
    assert identify["token"] == TOKEN and isinstance(identify["intents"], int)
    assert {"os", "browser", "device"} <= set(identify["properties"])
    # What discord.py asked for (zstd-stream when a zstd module is installed), it read.
    asked = discord.utils._ActiveDecompressionContext.COMPRESSION_TYPE
    assert fake.compressed == [asked]
    # HELLO said 200 ms: heartbeats carry the last sequence number and are ACKed.
    await eventually(lambda: len(fake.heartbeats) >= 2, within=5)
    assert fake.heartbeats[-1] is not None and fake.heartbeats[-1] >= 2  # READY, GUILD_CREATE
    status = (await api.client.get("/healthz")).json()["adapters"]["discord"]
    assert isinstance(status["latency_ms"], int)  # a round trip: the ACK came back
    assert len(fake.identifies) == 1  # no ACK missed: the session went on


async def test_a_reconnect_request_is_resumed_without_losing_a_message(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    adapter = api.bot.adapters[0]
    fake.ask_to_reconnect()  # op 7: the client closes and resumes
    said = fake.say(f"<@{BOT}> /reminders")  # while it moves: replayed by the RESUME
    await eventually(lambda: len(fake.resumes) == 1, within=10)
    [resume] = fake.resumes
    assert (resume["token"], resume["session_id"]) == (TOKEN, "session-1")
    (reply,) = await posted(fake, 1)
    assert str(reply["_body"]["message_reference"]["message_id"]) == said["id"]
    await eventually(lambda: adapter.status()["state"] == "connected")
    assert len(fake.identifies) == 1  # the same session


@pytest.mark.skipif(shutil.which("zstd") is None, reason="the zstd tool reads the stream")
async def test_the_fake_gateway_speaks_zstd_stream_when_asked(fake: FakeDiscord) -> None:
    """The fake's own check: what a client with zstandard installed would read."""
    url = f"ws://127.0.0.1:{fake.server.port}/gateway?v=10&encoding=json&compress=zstd-stream"
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as socket:
        hello = await socket.receive_bytes(timeout=5)
    zstd = await asyncio.create_subprocess_exec(
        "zstd", "-d", "-c", stdin=PIPE, stdout=PIPE, stderr=PIPE
    )  # it says the stream goes on (it does: the connection's one frame)
    decoded, _ = await zstd.communicate(hello)
    assert json.loads(decoded)["d"] == {"heartbeat_interval": fake.heartbeat_ms}


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
    # A reply pings its author by default: Discord counts it a mention, text included.
    fake.say("/reminders", reply_to=reply["id"], ping=False)  # no ping: no text
    fake.say("/reminders", reply_to=reply["id"])
    listing = (await posted(fake, 2))[1]
    assert "stretch" in listing["content"]
    await asyncio.sleep(0.3)
    assert len(fake.posted()) == 2 and adapter.status()["connected"]
    history = (await api.client.get(f"/v1/chats/dc:{CHANNEL}/messages")).json()["messages"]
    assert [m["text"] for m in history if m["sender_id"] != "bot"] == [
        "@groupmate /remind in 2 hours stretch",
        "/reminders",
    ]  # the withheld texts are not logged as empty messages


async def test_message_content_off_in_the_config_is_not_asked_for(
    fake: FakeDiscord, servers: Servers
) -> None:
    discord = {"token": TOKEN, "api_url": fake.api_url, "message_content": False}
    api = await servers.start(adapters={"discord": discord})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    [identify] = fake.identifies
    # Guilds, guild messages and DMs, and reactions in both (1 << 10, 1 << 13); neither
    # privileged intent (Server Members: 1 << 1).
    assert identify["intents"] == 1 | 1 << 9 | 1 << 10 | 1 << 12 | 1 << 13
    status = api.bot.adapters[0].status()
    assert status["message_content"] is False and status["last_error"] is None


async def test_status_and_no_token_in_the_logs_through_a_reconnect_and_a_failed_send(
    fake: FakeDiscord, servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # the library's request and gateway logs too
    api = await start(servers, fake)
    adapter = api.bot.adapters[0]
    fake.say(f"<@{BOT}> /reminders")
    await posted(fake, 1)
    health = (await api.client.get("/healthz")).json()
    status = health["adapters"]["discord"]
    assert (status["state"], status["user_id"]) == ("connected", BOT)
    assert status["message_content"] is True and status["last_error"] is None
    assert status["last_event"] is not None
    fake.drop()  # a reconnect: RESUME carries the token
    await eventually(lambda: len(fake.resumes) == 1, within=10)
    await eventually(lambda: adapter.status()["state"] == "connected")
    fake.refused = 3  # an answer that fails for good: logged
    fake.say(f"<@{BOT}> /reminders")
    await eventually(lambda: "answering a message failed" in caplog.text, within=10)
    assert "HTTP 503" in caplog.text
    assert TOKEN not in caplog.text and TOKEN not in str(health)
    assert TOKEN not in str((await api.client.get("/healthz")).json())


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


async def test_the_library_constants_are_restored_on_stop(
    fake: FakeDiscord, servers: Servers
) -> None:
    before = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)
    await start(servers, fake)
    assert fake.api_url == Route.BASE  # the config's api_url is discord.py's REST base
    await servers.aclose()
    assert before == (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)


def test_render_mentions_its_people() -> None:
    people = [Member(f"dc:{BOB}", "Bob"), Member("dc:7", "Al"), Member("sl:U1", "Sl")]
    assert render("@Bob & @Al: @Alice @Sl", people) == f"<@{BOB}> & <@7>: @Alice @Sl"


def test_a_section_without_a_token_or_with_an_unversioned_api_url_is_refused() -> None:
    url = "https://discord.com/api/v10"
    with pytest.raises(ConfigError) as refused:
        parse_config({"adapters": {"discord": {"api_url": url}}}, environ={})
    assert "adapters.discord: token required (unset)" in str(refused.value)
    with pytest.raises(ConfigError) as refused:
        parse_config({"adapters": {"discord": {"token": "t", "api_url": "http://x"}}}, environ={})
    assert "api_url must end in /api/v<N>" in str(refused.value)


def test_the_readmes_discord_section_is_a_valid_config() -> None:
    section = page("platforms/discord.md")
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    config = parse_config(yaml.safe_load(block.group(1)), environ={"DISCORD_BOT_TOKEN": "t"})
    [adapter] = configured(config)
    assert isinstance(adapter, DiscordAdapter)
