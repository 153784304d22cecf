"""The Telegram adapter against a fake Bot API on a real socket, with a real Bot and
SQLite file: privacy-mode triggers, replies as replies, reminders with text mentions,
snooze by reply, 429s honoured, long replies split, and the token never logged."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from groupmate.bot.adapters import configured
from groupmate.bot.adapters.http import create_app
from groupmate.bot.adapters.telegram import TelegramAdapter
from groupmate.bot.adapters.telegram_events import render_html
from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.storage import Member, OutgoingMessage, SendError
from groupmate.testing.stub_llm import StubLLM, text
from tests.conftest import eventually
from tests.fake_telegram import (
    ALICE,
    BOB,
    BOT_ID,
    BOT_USERNAME,
    GROUP,
    TOKEN,
    FakeTelegram,
    user,
)
from tests.http_harness import delivered_ids, llm_section, make_config, make_due


@pytest.fixture
def fake() -> Iterator[FakeTelegram]:
    api = FakeTelegram()
    api.server.start()
    yield api
    api.server.stop()


@asynccontextmanager
async def running(
    tmp_path: Path, fake: FakeTelegram, llm: dict[str, Any] | None = None, **settings: Any
) -> AsyncIterator[Bot]:
    """A bot whose only platform is Telegram (through the fake), started and connected."""
    section = {"token": TOKEN, "api_base": fake.api_base, "poll_timeout": 0.5, **settings}
    sections: dict[str, Any] = {"adapters": {"telegram": section}}
    if llm is not None:
        sections["llm"] = llm
    config = parse_config(make_config(tmp_path, **sections), environ={})
    bot = Bot(config)
    for adapter in configured(config):
        bot.add_adapter(adapter)
    async with bot:
        # Connected: polling, or (with `webhook_url`) registered its commands.
        connected = "setMyCommands" if settings.get("webhook_url") else "getUpdates"
        await eventually(lambda: bool(fake.called(connected)), within=10)
        yield bot


async def replies(fake: FakeTelegram, count: int, within: float = 10.0) -> list[dict[str, Any]]:
    await eventually(lambda: len(fake.sent()) >= count, within=within)
    return fake.sent()


def bot_message(message_id: int, text: str = "hi") -> dict[str, Any]:
    """A message of the bot's, as a reply's `reply_to_message`."""
    return {
        "message_id": message_id,
        "from": {"id": BOT_ID, "is_bot": True, "first_name": "Groupmate"},
        "chat": {"id": GROUP, "type": "supergroup"},
        "date": 0,
        "text": text,
    }


async def test_connects_with_commands_and_answers_a_mention_as_a_reply(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    async with running(tmp_path, fake) as bot:
        first = fake.say("hello there")  # not for the bot: no answer
        asked = fake.say(f"🙂 @{BOT_USERNAME} /help")
        (answer,) = await replies(fake, 1)
        assert answer["reply_parameters"]["message_id"] == asked != first
        assert answer["chat_id"] == GROUP and answer["parse_mode"] == "HTML"
        # No model: the nearest commands, and where to find them all (HTML-escaped).
        assert "/remind &lt;when&gt;" in answer["text"] and "All of them: /help" in answer["text"]
        status = bot.adapters[0].status()
        assert status["connected"] and status["username"] == BOT_USERNAME
    assert fake.called("deleteWebhook") and fake.called("getMe")
    (commands,) = fake.called("setMyCommands")
    assert {"command": "remind", "description": "Set a reminder: /remind <when> <what>"} in (
        commands.body["commands"]
    )
    assert fake.pending() == []  # stopping confirmed what was answered: no replay


async def test_commands_for_this_bot_are_answered_and_for_others_ignored(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    fake.admins.add(ALICE["id"])
    async with running(tmp_path, fake):
        fake.say("/help@otherbot")
        asked = fake.say(f"/remind@{BOT_USERNAME} tomorrow at 9 call the dentist")
        (answer,) = await replies(fake, 1)
        assert answer["reply_parameters"]["message_id"] == asked
        assert "Reminder #1" in answer["text"] and "call the dentist" in answer["text"]
        await asyncio.sleep(0.3)
        assert len(fake.sent()) == 1
        # Asked only for the message that might be for the bot, and cached.
        assert [c.body["user_id"] for c in fake.called("getChatMember")] == [ALICE["id"]]


async def test_a_reply_to_the_bot_and_a_private_chat(tmp_path: Path, fake: FakeTelegram) -> None:
    async with running(tmp_path, fake):
        fake.say("/reminders", reply_to=bot_message(5))
        (listed,) = await replies(fake, 1)
        assert "no" in listed["text"].lower() or "reminder" in listed["text"].lower()
        fake.say("/help", chat=ALICE["id"])
        private = (await replies(fake, 2))[1]
        assert private["chat_id"] == ALICE["id"] and "Commands:" in private["text"]


async def test_a_reminder_mentions_the_user_and_snoozes_by_reply(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    async with running(tmp_path, fake) as bot:
        fake.say("/reminders", sender=BOB)  # Bob speaks to the bot: it knows @bobby now
        await replies(fake, 1)
        fake.say(f"/remind@{BOT_USERNAME} @bobby tomorrow at 9 <b>send</b> the slides")
        created = (await replies(fake, 2))[1]
        assert "Reminder #1 for @bobby" in created["text"]
        assert "&lt;b&gt;send&lt;/b&gt;" in created["text"]  # user text cannot add markup
        assert bot.reminders is not None

        await make_due(bot)
        fired = (await replies(fake, 3))[2]
        assert f'<a href="tg://user?id={BOB["id"]}">@bobby</a>' in fired["text"]
        assert "reply_parameters" not in fired
        # The reminder's message id came back from sendMessage: a reply to it snoozes.
        assert await delivered_ids(bot) == [str(fake.sent_ids[2])]
        fake.say("snooze 10m", sender=BOB, reply_to=bot_message(fake.sent_ids[2]))
        answer = (await replies(fake, 4))[3]
        assert answer["text"].startswith("💤 Snoozed #1")


async def test_remind_us_text_mentions_the_member_who_asked_and_an_admins_too(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    """Telegram has no mention of everyone: a reminder for everyone mentions (a text
    mention, which notifies even in a muted group) the admin who set it."""
    fake.admins.add(ALICE["id"])
    async with running(tmp_path, fake) as bot:
        fake.say(f"/remind@{BOT_USERNAME} us tomorrow at 9 stretch", sender=BOB)
        assert "mentioning only you" in (await replies(fake, 1))[0]["text"]
        fake.say(f"/remind@{BOT_USERNAME} everyone tomorrow at 9 run")
        assert "Reminder #2 for everyone" in (await replies(fake, 2))[1]["text"]
        await make_due(bot)
        fired = sorted(m["text"] for m in (await replies(fake, 4))[2:])
        bob = f'<a href="tg://user?id={BOB["id"]}">'
        alice = f'<a href="tg://user?id={ALICE["id"]}">'
        assert fired == [
            f"⏰ Reminder for {bob}@Bob</a>: stretch",
            f"⏰ Reminder for everyone (set by {alice}@Alice</a>): run",
        ]


async def test_a_429_is_waited_out(tmp_path: Path, fake: FakeTelegram) -> None:
    fake.rate_limit["sendMessage"] = (1, 1)
    async with running(tmp_path, fake):
        fake.say("/help", chat=ALICE["id"])
        await replies(fake, 2)  # the refused attempt is recorded too
        first, second = fake.called("sendMessage")
        assert second.at - first.at >= 0.95


async def test_a_long_reply_is_split_and_a_refused_send_raises(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    text = ("word " * 800).strip() + "\n\n" + ("more " * 200).strip()  # ~5,000 characters
    async with running(tmp_path, fake) as bot:
        adapter = bot.adapters[0]
        first_id = await adapter.send(OutgoingMessage(f"tg:{GROUP}", text))
        pieces = fake.sent()
        assert len(pieces) == 2 and all(len(p["text"]) <= 4096 for p in pieces)
        assert first_id is not None and int(first_id) > 0
        assert pieces[1]["text"].startswith("more")
        fake.rate_limit["sendMessage"] = (5, 3600)  # longer than any send should wait
        with pytest.raises(SendError) as refused:
            await adapter.send(OutgoingMessage(f"tg:{GROUP}", "later"))
        assert "sendMessage" in str(refused.value) and TOKEN not in str(refused.value)
    with pytest.raises(SendError, match="stopped"):
        await adapter.send(OutgoingMessage(f"tg:{GROUP}", "after the bot stopped"))


async def test_the_token_never_reaches_the_logs(
    tmp_path: Path, fake: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    # `groupmate` itself keeps these at WARNING (bot.logs); an embedding app may not.
    for chatty in ("httpx", "httpcore"):
        caplog.set_level(logging.DEBUG, logger=chatty)
    async with running(tmp_path, fake):
        fake.say("/help", chat=ALICE["id"])
        await replies(fake, 1)
    assert "sendMessage" in caplog.text  # httpx did log the requests...
    assert TOKEN not in caplog.text  # ...without the token in their URLs
    # An unreachable API: the error says so, without the token.
    adapter = TelegramAdapter(
        parse_config(
            {"adapters": {"telegram": {"token": TOKEN, "api_base": "http://127.0.0.1:9"}}},
            environ={},
        ).adapters.telegram,  # type: ignore[arg-type]
        bot_name="groupmate",
    )
    with pytest.raises(SendError) as failed:
        await adapter.send(OutgoingMessage(f"tg:{GROUP}", "hi"))
    await adapter.stop()
    assert "network error" in str(failed.value)
    assert TOKEN not in str(failed.value) and TOKEN not in caplog.text


async def test_a_rejected_token_is_not_repeated(
    tmp_path: Path, fake: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    wrong = "42:WRONG-telegram-TOKEN"  # PTB's InvalidToken quotes the token it was given
    section = {"token": wrong, "api_base": fake.api_base}
    config = parse_config(make_config(tmp_path, adapters={"telegram": section}), environ={})
    bot = Bot(config)
    for adapter in configured(config):
        bot.add_adapter(adapter)
    async with bot:
        await eventually(lambda: bot.adapters[0].status()["last_error"] is not None)
        error = bot.adapters[0].status()["last_error"]
    assert error.startswith("getMe:") and wrong not in error and wrong not in caplog.text


def test_html_escapes_text_and_links_the_people() -> None:
    people = (Member("tg:5", "Al"), Member("tg:6", "Alice"), Member("mx:@x:y", "x"))
    html = render_html("<i>@Alice & @Al</i> @x", people)
    assert html == (
        '&lt;i&gt;<a href="tg://user?id=6">@Alice</a> &amp; '
        '<a href="tg://user?id=5">@Al</a>&lt;/i&gt; @x'
    )


async def test_polling_survives_a_bad_gateway_and_loses_no_message(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    async with running(tmp_path, fake) as bot:
        fake.bad_gateway["getUpdates"] = 1
        await eventually(lambda: bot.adapters[0].status()["last_error"] is not None)
        assert not bot.adapters[0].status()["connected"]
        fake.say("/help", chat=ALICE["id"])  # arrives while the bot waits to reconnect
        (answer,) = await replies(fake, 1, within=10)
        assert "Commands:" in answer["text"] and bot.adapters[0].status()["connected"]


async def test_a_message_stays_unconfirmed_until_it_is_answered(
    tmp_path: Path, fake: FakeTelegram, stub: StubLLM
) -> None:
    # If the process died now, Telegram must still hold the message for the next run.
    stub.fallback = text("sure", delay=1.5)
    async with running(tmp_path, fake, llm=llm_section(stub)) as bot:
        fake.say("@groupmate_bot are you there?")
        await eventually(lambda: len(stub.requests) == 1, within=10)
        held = [u["update_id"] for u in fake.pending()]
        assert len(held) == 1
        other = fake.say("/help", sender=BOB, chat=BOB["id"])  # another chat is not held up
        await eventually(lambda: any("Commands:" in m["text"] for m in fake.sent()), within=5)
        assert held[0] in [u["update_id"] for u in fake.pending()]
        assert other
        (answer,) = [m for m in await replies(fake, 2) if m["text"] == "sure"]
        assert answer["chat_id"] == GROUP
        await eventually(lambda: fake.pending() == [], within=5)
        assert bot.adapters[0].status()["connected"]


async def test_webhook_mode_checks_the_secret_token(tmp_path: Path, fake: FakeTelegram) -> None:
    hook = {"webhook_url": "https://bot.example.org/telegram/hook", "webhook_secret": "s3cret"}
    section = {"token": TOKEN, "api_base": fake.api_base, **hook}
    config = parse_config(make_config(tmp_path, adapters={"telegram": section}), environ={})
    bot = Bot(config)
    for adapter in configured(config):
        bot.add_adapter(adapter)
    async with bot:
        await eventually(lambda: bool(fake.called("setMyCommands")))
        (registered,) = fake.called("setWebhook")
        assert registered.body["url"] == hook["webhook_url"]
        assert registered.body["secret_token"] == "s3cret"
        fake.say("/help", chat=ALICE["id"])
        update = fake.pending()[0]
        transport = httpx.ASGITransport(app=create_app(bot))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            wrong = {"X-Telegram-Bot-Api-Secret-Token": "guess"}
            refused = await client.post("/telegram/hook", json=update, headers=wrong)
            assert refused.status_code == 401
            right = {"X-Telegram-Bot-Api-Secret-Token": "s3cret"}
            accepted = await client.post("/telegram/hook", json=update, headers=right)
            assert accepted.status_code == 200
            again = await client.post("/telegram/hook", json=update, headers=right)
            assert again.status_code == 200  # Telegram's retry of the same update
        (answer,) = await replies(fake, 1)
        assert "Commands:" in answer["text"]
        await asyncio.sleep(0.2)
        assert len(fake.sent()) == 1 and not fake.called("getUpdates")


async def test_group_admins_come_from_get_chat_member(tmp_path: Path, fake: FakeTelegram) -> None:
    fake.admins.add(ALICE["id"])
    async with running(tmp_path, fake):
        fake.say("/tz Asia/Tokyo", sender=BOB)
        (refused,) = await replies(fake, 1)
        assert refused["text"] == "Only a group admin can change this chat's time zone."
        fake.say("/tz Asia/Tokyo")
        changed = (await replies(fake, 2))[1]
        assert "Asia/Tokyo" in changed["text"] and "Only" not in changed["text"]


async def test_a_display_name_two_people_share_is_asked_about(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    sam_a, sam_b = user(501, "Sam"), user(502, "Sam")  # no usernames: only "Sam"
    async with running(tmp_path, fake):
        fake.say("/reminders", sender=sam_a)
        fake.say("/reminders", sender=sam_b)
        await replies(fake, 2)
        fake.say(f"/remind@{BOT_USERNAME} @Sam tomorrow at 9 tea")
        asked = (await replies(fake, 3))[2]["text"]
        assert "Reminder #" not in asked  # never one of them at random
        fake.say(f"/remind@{BOT_USERNAME} @bobby tomorrow at 9 tea", sender=BOB)  # unique
        assert "Reminder #1 for @bobby" in (await replies(fake, 4))[3]["text"]
