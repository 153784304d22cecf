"""Telegram reactions (Bot API `message_reaction` updates) against the fake Bot API on a
real socket, with a real Bot and SQLite file: asked for in `allowed_updates`, each
update's change reported (added, taken back, sent again, custom and anonymous), the bot's
own never, and the counts shown by the offline digest that /summary gives without a model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from groupmate.bot.adapters import configured
from groupmate.bot.adapters.http import create_app
from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from tests.conftest import eventually
from tests.digest_reading import engaged, line_of
from tests.fake_telegram import ALICE, BOB, BOT_ID, GROUP, TOKEN, FakeTelegram, user
from tests.http_harness import make_config
from tests.test_telegram import replies, running

CAROL = user(333, "Carol", "carol")
DAVE = user(444, "Dave")
THE_BOT = {**user(BOT_ID, "Groupmate", "groupmate_bot"), "is_bot": True}


@pytest.fixture
def fake() -> Iterator[FakeTelegram]:
    api = FakeTelegram()
    api.server.start()
    yield api
    api.server.stop()


async def test_reactions_are_counted_in_the_offline_digest(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    async with running(tmp_path, fake):
        plan = fake.say("the launch moves to Friday")
        pizza = fake.say("pizza tonight?", sender=BOB)
        fake.say("sounds good", sender=CAROL)
        fake.react(plan, ["👍"], sender=BOB)
        fake.react(plan, ["👍"], sender=CAROL)
        fake.react(plan, ["👍"], sender=BOB)  # the same again: counts once
        fake.react(plan, ["🎉"], sender=DAVE)
        fake.react(plan, [], ["🎉"], sender=DAVE)  # taken back
        fake.react(plan, ["👍", "🔥"], ["👍"], sender=CAROL)  # 🔥 beside her 👍
        fake.react(plan, ["👍"], sender=THE_BOT)  # the bot's own: never counted
        custom = {"type": "custom_emoji", "custom_emoji_id": "5368"}
        fake.react(pizza, [custom, {"type": "paid"}], sender=ALICE)  # stars are no emoji
        group = {"id": GROUP, "type": "supergroup", "title": "Team"}
        fake.react(pizza, ["❤"], sender=None, actor_chat=group)  # an anonymous admin
        fake.say("/summary", sender=DAVE)
        (digest,) = await replies(fake, 1)
    lines = engaged(digest["text"])
    assert line_of(lines, "the launch moves to Friday").endswith(" (👍 2 🔥 1)")
    assert line_of(lines, "pizza tonight?").endswith(" (custom:5368 1 ❤ 1)")
    assert len(lines) == 2  # "sounds good" had none
    # Telegram sends message_reaction updates only when they are asked for.
    polls = [c.body for c in fake.called("getUpdates") if "allowed_updates" in c.body]
    assert polls and all("message_reaction" in p["allowed_updates"] for p in polls)
    assert all("message" in p["allowed_updates"] for p in polls)


async def test_reactions_arrive_by_webhook_too(tmp_path: Path, fake: FakeTelegram) -> None:
    hook = {"webhook_url": "https://bot.example.org/telegram/hook", "webhook_secret": "s3cret"}
    section = {"token": TOKEN, "api_base": fake.api_base, **hook}
    config = parse_config(make_config(tmp_path, adapters={"telegram": section}), environ={})
    bot = Bot(config)
    for adapter in configured(config):
        bot.add_adapter(adapter)
    async with bot:
        await eventually(lambda: bool(fake.called("setMyCommands")))  # connected
        plan = fake.say("the launch moves to Friday")
        fake.react(plan, ["👍"], sender=BOB)
        fake.react(plan, ["👍"], sender=THE_BOT)
        fake.say("/summary", sender=CAROL)
        updates: list[dict[str, Any]] = fake.pending()
        transport = httpx.ASGITransport(app=create_app(bot))
        headers = {"X-Telegram-Bot-Api-Secret-Token": "s3cret"}
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            for update in updates:
                answer = await client.post("/telegram/hook", json=update, headers=headers)
                assert answer.status_code == 200
        (digest,) = await replies(fake, 1)
    (registered,) = fake.called("setWebhook")
    assert "message_reaction" in registered.body["allowed_updates"]
    (line,) = engaged(digest["text"])
    assert line.endswith("“the launch moves to Friday” (👍 1)")
