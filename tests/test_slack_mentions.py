"""A Slack app that reads no channel (only `app_mention`, app_mentions:read): its
mentions are answered, and /healthz says memory sees only what the bot is sent; with
both subscriptions each mention, which Slack sends as two events, is answered once.
Against the local Slack Web API and signed Events API posts, a real Bot and SQLite."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import eventually
from tests.fake_slack import (
    BOT_TOKEN,
    BOT_USER,
    CHANNEL,
    MENTION_SCOPES,
    SIGNING_SECRET,
    FakeSlack,
    mention_event,
    message_event,
    post_event,
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


async def slack_health(api: Api) -> dict[str, Any]:
    health: dict[str, Any] = (await api.client.get("/healthz")).json()
    return dict(health["adapters"]["slack"])


async def test_an_app_that_only_gets_its_mentions_answers_them_and_says_so(
    servers: Servers, fake: FakeSlack
) -> None:
    fake.scopes = MENTION_SCOPES
    api = await start(servers, fake)
    await post_event(api.base_url, mention_event(f"<@{BOT_USER}> /remind me in 2 hours stretch"))
    await eventually(lambda: len(fake.posted()) == 1, within=10)
    (reply,) = fake.posted()
    assert reply["channel"] == CHANNEL and reply["text"].startswith("⏰ Reminder #1")
    slack = await slack_health(api)
    assert slack["reads"] == "only what it is sent"
    assert (
        "memory features (find, catch-up, digests) see only what the bot is sent"
        in (slack["memory"])
    )


@pytest.mark.parametrize("mention_first", [False, True])
async def test_with_both_subscriptions_a_mention_is_answered_once(
    servers: Servers, fake: FakeSlack, mention_first: bool
) -> None:
    api = await start(servers, fake)
    text = f"<@{BOT_USER}> /remind me in 2 hours stretch"
    ts = "1764100000.000300"
    both = [message_event(text, ts=ts), mention_event(text, ts=ts)]
    for envelope in reversed(both) if mention_first else both:
        assert (await post_event(api.base_url, envelope)).status_code == 200
    await eventually(lambda: len(fake.posted()) >= 1, within=10)
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /reminders"))
    await eventually(lambda: len(fake.posted()) >= 2, within=10)
    await asyncio.sleep(0.3)
    texts = [body["text"] for body in fake.posted()]
    assert len(texts) == 2 and texts[0].startswith("⏰ Reminder #1")  # one answer
    assert texts[1].count("stretch") == 1  # and one reminder
    assert (await slack_health(api))["reads"] == "every message"


async def test_without_the_scopes_header_a_channel_message_shows_the_bot_reads_them(
    servers: Servers, fake: FakeSlack
) -> None:
    fake.scopes = None
    api = await start(servers, fake)
    slack = await slack_health(api)
    assert slack["reads"] == "unknown" and "memory" not in slack
    await post_event(api.base_url, message_event("lunch at noon?"))
    await eventually(lambda: api.bot.adapters[0].status()["reads"] == "every message")
