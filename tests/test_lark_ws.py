"""The Lark/Feishu adapter's long connection (lark-oapi's ws client, driven by the
adapter in a thread of its own) against a local endpoint and protobuf WebSocket: events
acknowledged and acted on once, pings, reconnects after drops and failed tries, a refused
app, a stop in the middle of connecting, and one connection among several processes."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import eventually
from tests.fake_lark import BOT_OPEN_ID, FakeLark, message_event, post_event, said
from tests.http_harness import Api, Servers

BOT = (BOT_OPEN_ID, "groupmate")


@pytest.fixture
def fake() -> Iterator[FakeLark]:
    api = FakeLark()
    api.server.start()
    yield api
    api.hold = False
    api.server.stop()


def websocket(fake: FakeLark) -> dict[str, Any]:
    return fake.section(mode="websocket", verification_token=None, encrypt_key=None)


async def connected(servers: Servers, fake: FakeLark) -> Api:
    api = await servers.start(adapters={"lark": websocket(fake)})
    await eventually(lambda: api.bot.adapters[0].status()["state"] == "connected", within=10)
    return api


def _no_lark_thread() -> bool:
    return not any(t.name == "lark-ws" for t in threading.enumerate())


def test_the_lark_oapi_whose_private_parts_the_adapter_drives_is_the_one_read() -> None:
    """lark_ws.py drives lark-oapi 1.7.5's ws client by its private coroutines (`_connect`,
    `_ping_loop`, `_disconnect`), its module-global `loop` and its event handler's
    `_do_without_validation`: another version must be read again before it is used."""
    from importlib.metadata import version

    assert version("lark-oapi") == "1.7.5"


async def test_the_long_connection_answers_once_acknowledges_and_reconnects(
    servers: Servers, fake: FakeLark, caplog: pytest.LogCaptureFixture
) -> None:
    api = await connected(servers, fake)
    adapter = api.bot.adapters[0]
    assert adapter.status()["mode"] == "websocket" and fake.sockets == 1
    await eventually(lambda: fake.pings >= 1)  # the library pings as soon as it is up
    event = message_event("@_user_1 /remind in 2 hours stretch", mentions=(BOT,))
    first = fake.push(event)
    (reply,) = await fake.wait_sent(1)
    assert said(reply).startswith("⏰ Reminder #1")
    await eventually(lambda: (first, 200) in fake.acks)  # acknowledged: Lark won't re-push
    again = fake.push(event)  # re-pushed all the same
    await eventually(lambda: (again, 200) in fake.acks)
    # An event of a type it doesn't act on is acknowledged too (else Lark pushes it again).
    read = {"schema": "2.0", "header": {"event_id": "ev-read", "token": "",
            "event_type": "im.message.message_read_v1"}, "event": {"reader": {}}}  # fmt: skip
    other = fake.push(read)
    await eventually(lambda: (other, 200) in fake.acks)
    await asyncio.sleep(0.3)
    assert len(fake.sent()) == 1  # acted on once
    answer = await post_event(fake, api.base_url, event)  # no webhook route in this mode
    assert answer.status_code in (404, 405)
    # The library's own log: through groupmate's handlers only, each URL without its query
    # (the connection's carries its ticket).
    assert logging.getLogger("Lark").handlers == []
    caplog.set_level(logging.INFO, logger="Lark")
    fake.drop = True  # Lark closes the connection: the adapter connects again
    await eventually(lambda: fake.sockets == 2, within=10)
    await eventually(lambda: adapter.status()["state"] == "connected", within=10)
    fake.push(message_event("@_user_1 /reminders", mentions=(BOT,)))
    assert "stretch" in said((await fake.wait_sent(2))[1])
    assert "connected to ws://127.0.0.1" in caplog.text and "device_id" not in caplog.text
    await servers.aclose()  # a clean stop: the connection's thread ends
    assert _no_lark_thread()


async def test_tries_that_fail_after_a_drop_are_retried_until_one_connects(
    servers: Servers, fake: FakeLark, caplog: pytest.LogCaptureFixture
) -> None:
    api = await connected(servers, fake)
    adapter = api.bot.adapters[0]
    fake.busy = 1  # the endpoint: "system busy", once
    fake.crowded = 1  # then the handshake: too many connections for the app, once
    fake.drop = True
    await eventually(lambda: adapter.status()["state"] == "reconnecting")
    await eventually(lambda: fake.sockets == 2, within=10)
    await eventually(lambda: adapter.status()["state"] == "connected")
    assert fake.handshakes == 3  # one refused: tried again, not taken for a refused app
    warned = caplog.text
    assert "ServerException (1)" in warned and "too many connections" in warned
    fake.push(message_event("@_user_1 /reminders", mentions=(BOT,)))
    assert said((await fake.wait_sent(1))[0]).startswith("There are no active reminders")


async def test_an_app_refused_while_reconnecting_says_auth_failed_and_stops_trying(
    servers: Servers, fake: FakeLark
) -> None:
    api = await connected(servers, fake)
    adapter = api.bot.adapters[0]
    fake.secret = "reset-in-the-console"  # the app's secret changed: Lark refuses the old
    fake.drop = True
    await eventually(lambda: adapter.status()["state"] == "auth failed", within=10)
    assert adapter.status()["last_error"] == "long connection: refused (10014)"
    await asyncio.sleep(1.5)
    assert fake.refused == 1 and fake.sockets == 1  # asked once: waiting won't fix it
    await eventually(_no_lark_thread)


async def test_a_stop_while_the_first_connection_is_being_made_ends_it(
    servers: Servers, fake: FakeLark
) -> None:
    fake.hold = True  # Lark doesn't answer the handshake yet
    api = await servers.start(adapters={"lark": websocket(fake)})
    await eventually(lambda: fake.handshakes == 1, within=10)
    assert api.bot.adapters[0].status()["state"] == "connecting"
    began = time.monotonic()
    await servers.aclose()
    assert time.monotonic() - began < 5.0 and _no_lark_thread()  # stopped, not waited out
    fake.hold = False
    await asyncio.sleep(0.3)
    assert fake.handshakes == 1 and fake.sockets == 0  # no connection after the stop


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
