"""Slack reactions (`reaction_added`, `reaction_removed`) through the Slack adapter, a real
Bot and SQLite file, against the local Slack Web API and signed event posts on real
sockets: each person's emoji counted once on the message it names, a resent event once,
the bot's own and a file's ignored, a taken-back one gone; the offline digest of /summary
shows the counts."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from groupmate.bot.adapters.slack_events import reaction_of
from tests.conftest import eventually
from tests.digest_reading import counts, engaged
from tests.fake_slack import (
    BOT_TOKEN,
    BOT_USER,
    CHANNEL,
    SIGNING_SECRET,
    FakeSlack,
    message_event,
    post_event,
    reaction_event,
)
from tests.http_harness import Api, Servers


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    api = FakeSlack()
    api.server.start()
    yield api
    api.server.stop()


async def start(servers: Servers, fake: FakeSlack) -> Api:
    slack = {"bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET, "api_url": fake.api_url}
    api = await servers.start(adapters={"slack": slack})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


async def summary(api: Api, fake: FakeSlack) -> list[str]:
    """The engaged-messages part of the offline digest /summary posts."""
    count = len(fake.posted())
    await post_event(api.base_url, message_event("/summary", user="UADMIN"))
    await eventually(lambda: len(fake.posted()) > count, within=10)
    digest = str(fake.posted()[count]["text"])
    assert "offline digest" in digest  # no model configured
    return engaged(digest)


async def test_reactions_are_counted_once_per_person_and_emoji_in_the_digest(
    servers: Servers, fake: FakeSlack
) -> None:
    api = await start(servers, fake)
    base = time.time() - 120
    launch, which, ten = (f"{base + n:.6f}" for n in (1, 2, 3))
    said = [
        message_event("launch moved to friday", user="UALICE", ts=launch),
        message_event("which time?", user="UBOB", ts=which),
        message_event("10 am", user="UADMIN", ts=ten),
    ]
    for envelope in said:
        await post_event(api.base_url, envelope)

    async def logged() -> bool:
        history = await api.client.get(f"/v1/chats/sl:{CHANNEL}/messages")
        return len(history.json()["messages"]) == 3

    await eventually(logged, within=10)
    assert fake.posted() == []  # none was for the bot: only logged

    bobs = reaction_event("thumbsup", launch, user="UBOB")
    for envelope in (
        bobs,
        reaction_event("thumbsup", launch, user="UADMIN"),
        reaction_event("eyes", which, user="UALICE", item_user="UBOB"),
        reaction_event("tada", ten, user="UBOB", item_user="UADMIN"),
        reaction_event("thumbsup", launch, user=BOT_USER),  # the bot's own: not counted
        reaction_event("thumbsup", "", item_type="file"),  # on a file: no message of it
        reaction_event("thumbsup", "1.000001", user="UBOB"),  # a message never logged
    ):
        answer = await post_event(api.base_url, envelope)
        assert answer.status_code == 200
    await post_event(api.base_url, bobs, retry=1)  # Slack's resend of the same event

    lines: list[str] = []

    async def all_counted() -> bool:
        nonlocal lines
        lines = await summary(api, fake)
        return counts(lines, "10 am") is not None and counts(lines, "which time?") is not None

    await eventually(all_counted, within=10, every=0.3)
    assert counts(lines, "launch moved to friday") == "(:thumbsup: 2)"
    assert counts(lines, "which time?") == "(:eyes: 1)"
    assert counts(lines, "10 am") == "(:tada: 1)"
    assert re.fullmatch(r"• Alice, \d\d:\d\d: “launch moved to friday” \(:thumbsup: 2\)", lines[0])

    # Bob takes his 🎉 back: "10 am" has nothing left to be listed for.
    await post_event(api.base_url, reaction_event("tada", ten, user="UBOB", removed=True))

    async def taken_back() -> bool:
        nonlocal lines
        lines = await summary(api, fake)
        return counts(lines, "10 am") is None

    await eventually(taken_back, within=10, every=0.3)
    assert counts(lines, "launch moved to friday") == "(:thumbsup: 2)"
    assert counts(lines, "which time?") == "(:eyes: 1)"


def test_a_reaction_in_a_dm_is_a_private_chats_and_a_skin_tone_stays() -> None:
    event: dict[str, Any] = reaction_event(
        "thumbsup::skin-tone-2", "1764100000.000100", user="UALICE", channel="D0001"
    )["event"]
    seen = reaction_of(event, me=BOT_USER)
    assert seen is not None
    assert (seen.chat_id, seen.chat_type, seen.sender_id) == ("sl:D0001", "private", "sl:UALICE")
    assert (seen.message_id, seen.emoji, seen.added) == (
        "1764100000.000100",
        ":thumbsup::skin-tone-2:",
        True,
    )
    assert seen.timestamp is not None
    assert abs(seen.timestamp.timestamp() - float(event["event_ts"])) < 1e-3
    removed = reaction_event("tada", "1.1", channel="G0001", removed=True)["event"]
    group = reaction_of(removed, me=BOT_USER)
    assert group is not None and (group.chat_type, group.added) == ("group", False)
