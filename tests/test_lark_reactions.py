"""Lark/Feishu reactions (im.message.reaction.created_v1 / deleted_v1) against the local
Lark open API, by webhook (encrypted, signed posts) and by the long connection, with a
real Bot and SQLite file: each reaction and its taking back reported, a repeat counted
once, events pushed out of order put in order by their action_time, apps' reactions (the
bot's own) never, the chat of a message the adapter doesn't remember asked of Lark, and
the counts shown by the offline digest that /summary gives without a model."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import eventually
from tests.digest_reading import engaged, line_of
from tests.fake_lark import (
    APP_ID,
    CHAT,
    FakeLark,
    message_event,
    post_event,
    reaction_event,
    said,
)
from tests.http_harness import Api, Servers

PLAN, PIZZA = "om_plan", "om_pizza"


@pytest.fixture
def fake() -> Iterator[FakeLark]:
    api = FakeLark()
    api.server.start()
    yield api
    api.hold = False
    api.server.stop()


async def start(servers: Servers, fake: FakeLark, **section: Any) -> Api:
    api = await servers.start(adapters={"lark": fake.section(**section)})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


WEBSOCKET = {"mode": "websocket", "verification_token": None, "encrypt_key": None}


def talk() -> list[dict[str, Any]]:
    """Three people's group messages, none for the bot."""
    return [
        message_event("the launch moves to Friday", sender="ou_alice", message_id=PLAN),
        message_event("pizza tonight?", sender="ou_bob", message_id=PIZZA),
        message_event("sounds good", sender="ou_carol"),
    ]


def reactions() -> list[dict[str, Any]]:
    """Reactions to the talk, in the order Lark pushes them; FIRE and OK come last (the
    digest is asked for until it shows them)."""
    now = int(time.time() * 1000)
    return [
        reaction_event(PLAN, app=APP_ID),  # the bot's own: never counted
        reaction_event(PLAN, user="ou_bob", at=now),
        reaction_event(PLAN, user="ou_carol", at=now + 1),
        reaction_event(PLAN, user="ou_bob", at=now + 2),  # the same again: counts once
        reaction_event(PLAN, "SMILE", user="ou_max", at=now + 3),
        reaction_event(PLAN, "SMILE", user="ou_max", deleted=True, at=now + 4),  # taken back
        # Pushed out of order: the taking back (the later action) comes first.
        reaction_event(PLAN, "HEART", user="ou_ada", deleted=True, at=now + 6),
        reaction_event(PLAN, "HEART", user="ou_ada", at=now + 5),
        reaction_event(PIZZA, "OK", user="ou_alice", at=now + 7),
        reaction_event(PLAN, "FIRE", user="ou_carol", at=now + 8),
    ]


async def digest_showing(fake: FakeLark, deliver: Any, *emoji: str) -> list[str]:
    """The engaged lines of a /summary once they show every one of `emoji`: reactions are
    reported in tasks of their own, so the first /summary may come before the last."""
    lines: list[str] = []
    for _ in range(50):
        count = len(fake.sent())
        await deliver(message_event("/summary", sender="ou_carol"))
        lines = engaged(said((await fake.wait_sent(count + 1))[count]))
        if all(any(re.search(rf"[( ]{e} \d", line) for line in lines) for e in emoji):
            return lines
        await asyncio.sleep(0.1)
    raise AssertionError(f"the digest never showed {emoji}: {lines}")


def check(lines: list[str]) -> None:
    assert line_of(lines, "the launch moves to Friday").endswith(" (THUMBSUP 2 FIRE 1)")
    assert line_of(lines, "pizza tonight?").endswith(" (OK 1)")
    assert len(lines) == 2  # "sounds good" had none


async def test_reactions_by_webhook_are_counted_in_the_offline_digest(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)

    async def deliver(event: dict[str, Any]) -> None:
        assert (await post_event(fake, api.base_url, event)).status_code == 200

    for event in [*talk(), *reactions()]:
        await deliver(event)
    check(await digest_showing(fake, deliver, "FIRE", "OK"))
    # The adapter remembered each message's chat from its event: Lark was not asked.
    assert not [p for m, p in fake.calls if m == "GET" and p.endswith(f"/messages/{PLAN}")]


async def test_reactions_by_the_long_connection_are_counted_and_acknowledged(
    servers: Servers, fake: FakeLark
) -> None:
    await start(servers, fake, **WEBSOCKET)
    frames: list[str] = []

    async def deliver(event: dict[str, Any]) -> None:
        frames.append(fake.push(event))

    for event in [*talk(), *reactions()]:
        await deliver(event)
    check(await digest_showing(fake, deliver, "FIRE", "OK"))
    acked = dict(fake.acks)
    assert all(acked.get(frame) == 200 for frame in frames)  # Lark won't push them again


async def test_a_reaction_to_a_message_from_before_a_restart_asks_lark_for_its_chat(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)
    for event in talk():
        await post_event(fake, api.base_url, event)
    history = f"/v1/chats/lk:{CHAT}/messages"

    async def logged() -> bool:
        found = (await api.client.get(history)).json()["messages"]
        return len(found) == 3

    await eventually(logged, within=10)
    await servers.aclose()
    api = await start(servers, fake)  # remembers no message's chat now

    async def deliver(event: dict[str, Any]) -> None:
        assert (await post_event(fake, api.base_url, event)).status_code == 200

    await deliver(reaction_event(PLAN, "OK", user="ou_bob"))
    (line,) = await digest_showing(fake, deliver, "OK")
    assert line.endswith("“the launch moves to Friday” (OK 1)")
    asked = [p for m, p in fake.calls if m == "GET" and "/open-apis/im/v1/" in p]
    assert f"/open-apis/im/v1/messages/{PLAN}" in asked  # the message's chat...
    assert f"/open-apis/im/v1/chats/{CHAT}" in asked  # ...and whether it is a group
