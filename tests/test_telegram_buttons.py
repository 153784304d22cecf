"""A reminder's buttons on Telegram, against the fake Bot API on a real socket with a real
Bot and SQLite file: the inline keyboard on the bot's messages, `callback_query` updates
(asked for in `allowed_updates`, by long polling and by the webhook with its secret
token), every press answered (answerCallbackQuery, a toast), refusals too, and the
pressed message edited in place with the buttons that remain."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from groupmate.bot.adapters.http import create_app
from groupmate.bot.adapters.pressing import NOT_A_BUTTON
from groupmate.bot.adapters.telegram import TelegramAdapter
from groupmate.bot.adapters.telegram_api import new_client
from groupmate.bot.adapters.telegram_presses import WORKING, edit_in_place
from groupmate.bot.adapters.telegram_settings import TelegramSettings
from groupmate.bot.app import Bot
from groupmate.bot.messages import Reply
from groupmate.bot.presses import PressOutcome
from groupmate.storage import Button, OutgoingMessage
from groupmate.storage.models import Reminder
from tests.conftest import eventually
from tests.fake_telegram import ALICE, BOB, GROUP, TOKEN, FakeTelegram
from tests.scripted_presses import DONE, ROWS, ScriptedHost, acknowledgements, due_on_the_second
from tests.test_telegram import replies, running


@asynccontextmanager
async def on_host(fake: FakeTelegram, host: ScriptedHost) -> AsyncIterator[TelegramAdapter]:
    """A polling adapter for `host` (no Bot: the outcomes are scripted), started."""
    settings = TelegramSettings.model_validate(
        {"token": TOKEN, "api_base": fake.api_base, "poll_timeout": 0.5}
    )
    adapter = TelegramAdapter(settings, bot_name="groupmate")
    await adapter.start(host)
    try:
        yield adapter
    finally:
        await adapter.stop()


@pytest.fixture
def fake() -> Iterator[FakeTelegram]:
    api = FakeTelegram()
    api.server.start()
    yield api
    api.server.stop()


def inline_keyboard(rows: tuple[tuple[Button, ...], ...]) -> dict[str, object]:
    """`rows` as the Bot API's InlineKeyboardMarkup."""
    return {
        "inline_keyboard": [
            [{"text": b.label, "callback_data": b.data} for b in row] for row in rows
        ]
    }


async def test_a_reminder_goes_out_with_its_buttons_under_its_first_piece(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    async with running(tmp_path, fake) as bot:
        adapter = bot.adapters[0]
        short = OutgoingMessage(chat_id=f"tg:{GROUP}", text="⏰ stand-up", buttons=ROWS)
        await adapter.send(short)
        long = OutgoingMessage(chat_id=f"tg:{GROUP}", text="word " * 1000, buttons=ROWS)
        first_id = await adapter.send(long)
        plain = OutgoingMessage(chat_id=f"tg:{GROUP}", text="a notice", kind="notice")
        await adapter.send(plain)
    sent = fake.sent()
    assert [len(s["text"]) <= 4096 for s in sent] == [True] * 4 and len(sent) == 4
    assert sent[0]["reply_markup"] == inline_keyboard(ROWS)
    # The long one in two pieces: the keys under the first, whose id the bot keeps.
    assert sent[1]["reply_markup"] == inline_keyboard(ROWS)
    assert first_id == str(fake.sent_ids[1])
    assert "reply_markup" not in sent[2] and "reply_markup" not in sent[3]


async def test_a_press_is_asked_for_acted_on_by_the_bot_and_answered(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    async with running(tmp_path, fake) as bot:
        assert fake.allowed is not None and "callback_query" in fake.allowed
        sent = await bot.adapters[0].send(
            OutgoingMessage(chat_id=f"tg:{GROUP}", text="⏰ stand-up", buttons=ROWS)
        )
        assert sent is not None
        query = fake.press(int(sent), DONE.encode())
        await eventually(lambda: len(fake.answers()) == 1)
        (answer,) = fake.answers()
        assert answer["callback_query_id"] == query and answer["show_alert"] is False
        assert answer["text"]  # the bot's word on it, for the presser alone
        assert answer["text"] != NOT_A_BUTTON  # the bot was asked: the data was ours
    assert fake.pending() == []  # answered, so confirmed: a restart won't replay it


async def test_a_button_that_is_not_ours_is_refused_and_still_answered(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    async with running(tmp_path, fake):
        forged = fake.press(1000, "gm1:x:7:")  # no such action
        other = fake.press(1000, "vote:yes")  # another bot's button
        await eventually(lambda: len(fake.answers()) == 2)
    answers = {a["callback_query_id"]: a["text"] for a in fake.answers()}
    assert answers == {forged: NOT_A_BUTTON, other: NOT_A_BUTTON}
    assert fake.edits() == []


async def test_the_message_is_edited_in_place_and_an_edit_that_changes_nothing_is_quiet(
    fake: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    client, requests = new_client(TOKEN, fake.api_base)
    try:
        sent = await client.send_message(GROUP, "⏰ stand-up", reply_markup=None)
        chat, message_id = GROUP, sent.message_id
        snoozed = OutgoingMessage(
            chat_id=f"tg:{GROUP}",
            text="⏰ stand-up <now>\n💤 Snoozed to 10:02 by Bob",
            buttons=(ROWS[0],),
        )
        outcome = PressOutcome(ok=True, answer="Snoozed.", update=snoozed)
        await edit_in_place(client, chat, message_id, outcome)
        done = OutgoingMessage(chat_id=f"tg:{GROUP}", text="⏰ stand-up\n✅ Done by Alice 09:02")
        finished = PressOutcome(ok=True, answer="Done.", update=done)
        await edit_in_place(client, chat, message_id, finished)
        with caplog.at_level(logging.WARNING):
            await edit_in_place(client, chat, message_id, finished)  # pressed twice
    finally:
        for request in requests:
            await request.shutdown()
    first, second = fake.edits()
    assert first["text"] == "⏰ stand-up &lt;now&gt;\n💤 Snoozed to 10:02 by Bob"
    assert first["parse_mode"] == "HTML" and first["reply_markup"] == inline_keyboard((ROWS[0],))
    assert second["text"] == "⏰ stand-up\n✅ Done by Alice 09:02"
    assert "reply_markup" not in second  # no buttons left: the keyboard goes
    assert len(fake.called("editMessageText")) == 3  # the third refused as not modified
    assert caplog.records == []


async def test_a_press_comes_by_the_webhook_only_with_its_secret_token(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    hook: dict[str, Any] = {
        "webhook_url": "https://bot.example.org/telegram/hook",
        "webhook_secret": "s3cret",
    }
    async with running(tmp_path, fake, **hook) as bot:
        assert "callback_query" in fake.called("setWebhook")[0].body["allowed_updates"]
        fake.press(1000, DONE.encode(), sender=ALICE)
        update = fake.pending()[0]
        transport = httpx.ASGITransport(app=create_app(bot))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            wrong = {"X-Telegram-Bot-Api-Secret-Token": "guess"}
            refused = await client.post("/telegram/hook", json=update, headers=wrong)
            assert refused.status_code == 401
            assert fake.answers() == []  # refused before anything was read
            right = {"X-Telegram-Bot-Api-Secret-Token": "s3cret"}
            accepted = await client.post("/telegram/hook", json=update, headers=right)
            assert accepted.status_code == 200
        await eventually(lambda: len(fake.answers()) == 1)
        assert fake.answers()[0]["text"]
    assert await replies(fake, 0) == []


async def test_a_slow_press_is_answered_in_time_and_the_message_edited_when_done(
    fake: FakeTelegram,
) -> None:
    done = OutgoingMessage(chat_id=f"tg:{GROUP}", text="⏰ stand-up\n✅ Done by Bob 09:02")
    host = ScriptedHost(
        [
            PressOutcome(ok=True, answer="Done.", update=done),
            PressOutcome(ok=False, answer="That reminder is gone."),
        ],
        delay=6.0,  # longer than a person should watch a spinner
    )
    async with on_host(fake, host) as adapter:
        sent = await eventually_sent(adapter)
        query = fake.press(sent, DONE.encode(), sender=BOB)
        await eventually(lambda: len(fake.answers()) == 1, within=5.5)
        assert fake.answers()[0] == {
            "callback_query_id": query, "text": WORKING, "show_alert": False, "_taken": True
        }  # fmt: skip
        await eventually(lambda: len(fake.edits()) == 1, within=10)
        again = fake.press(sent, DONE.encode(), sender=BOB, query_id=query)  # redelivered
        host.delay = 0.0
        await eventually(lambda: len(fake.called("answerCallbackQuery")) == 2)
    first, replay = host.presses
    assert (first.chat_id, first.chat_type, first.sender_id) == (f"tg:{GROUP}", "group", "tg:222")
    assert (first.sender_name, first.message_id, first.data) == ("Bob", str(sent), DONE)
    assert first.press_id == replay.press_id == f"tg:cb:{query}" and again == query
    (edit,) = fake.edits()
    assert edit["text"] == "⏰ stand-up\n✅ Done by Bob 09:02" and "reply_markup" not in edit
    # Telegram takes one answer per query: the replay's refusal is not shown twice.
    assert [a["text"] for a in fake.answers()] == [WORKING]


async def test_an_answer_that_meets_a_network_error_is_tried_once_more(
    fake: FakeTelegram,
) -> None:
    """A pooled connection closed as it is reused, a proxy's 502: the spinner would turn
    until Telegram gives up, so the answer is sent again, once (Telegram takes one)."""
    done = OutgoingMessage(chat_id=f"tg:{GROUP}", text="⏰ stand-up\n✅ Done by Bob 09:02")
    host = ScriptedHost([PressOutcome(ok=True, answer="Done.", update=done)] * 2)
    async with on_host(fake, host) as adapter:
        sent = await eventually_sent(adapter)
        fake.bad_gateway["answerCallbackQuery"] = 2  # the first answer, and its retry
        fake.press(sent, DONE.encode(), sender=BOB)
        await eventually(lambda: len(fake.called("answerCallbackQuery")) == 2)
        await eventually(lambda: len(fake.edits()) == 1)
        assert fake.answers() == []  # both met the 502: given up after one retry
        fake.bad_gateway["answerCallbackQuery"] = 1  # the next one's first try only
        query = fake.press(sent, DONE.encode(), sender=BOB)
        await eventually(lambda: len(fake.answers()) == 1)
    assert len(fake.called("answerCallbackQuery")) == 4
    assert fake.answers()[0]["callback_query_id"] == query


async def test_a_press_waiting_behind_another_is_answered_within_its_own_deadline(
    fake: FakeTelegram,
) -> None:
    done = OutgoingMessage(chat_id=f"tg:{GROUP}", text="⏰ stand-up\n✅ Done by Alice 09:02")
    outcomes = [PressOutcome(ok=True, answer="Done.", update=done)] * 2
    host = ScriptedHost(outcomes, delay=4.0)  # each press takes 4 s: the second waits
    async with on_host(fake, host) as adapter:
        sent = await eventually_sent(adapter)
        first = fake.press(sent, DONE.encode())
        second = fake.press(sent, DONE.encode(), sender=BOB)
        began = time.monotonic()
        await eventually(lambda: len(fake.answers()) == 2, within=7)
        answered = time.monotonic() - began
        await eventually(lambda: len(host.presses) == 2)
    texts = {a["callback_query_id"]: a["text"] for a in fake.answers()}
    # Its 5 s ran from when it came, not from its turn (4 s later): "working on it".
    assert texts == {first: "Done.", second: WORKING} and answered < 6.5


async def eventually_sent(adapter: TelegramAdapter) -> int:
    """The id of a reminder with buttons the adapter sent, once it is connected."""
    await eventually(lambda: adapter.status()["connected"], within=10)
    sent = await adapter.send(
        OutgoingMessage(chat_id=f"tg:{GROUP}", text="⏰ stand-up", buttons=ROWS)
    )
    assert sent is not None
    return int(sent)


async def test_a_confirmation_goes_out_with_its_buttons_and_its_message_id_is_reported(
    fake: FakeTelegram,
) -> None:
    text = "⏰ Reminder #7: stand-up at 09:00"
    confirmed = Reply(f"tg:{GROUP}", text, reminder_id="7", buttons=ROWS)
    host = ScriptedHost(replies=[confirmed, Reply(f"tg:{GROUP}", "It is 09:00 in Berlin.")])
    async with on_host(fake, host):
        fake.say("/remind 9:00 stand-up")
        await eventually(lambda: len(fake.sent()) == 2)
        await eventually(lambda: len(host.posts) == 1)
    first, second = fake.sent()
    assert first["reply_markup"] == inline_keyboard(ROWS) and "reply_markup" not in second
    # Only the confirmation is reported, by the id Telegram gave it.
    assert host.posts == [(confirmed, str(fake.sent_ids[0]))]


async def test_buttons_act_through_the_bot_once_as_the_presser_and_edit_the_reminder(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    async with running(tmp_path, fake) as bot:
        fake.say("/remind every day at 9:00 stand-up")
        fake.say("/remind every day at 9:00 call mum", chat=ALICE["id"])
        await replies(fake, 2)
        await due_on_the_second(bot)
        await eventually(lambda: len(with_keys(fake)) == 2)
        (group_id, keys), (_, elsewhere) = sorted(with_keys(fake).items(), key=lambda k: k[0][0])
        message = group_id[1]
        done = keys[0][0]["callback_data"]
        assert [[key["text"] for key in row] for row in keys] == [
            ["✅ Done", "💤 10 min", "💤 1 h", "💤 Tomorrow 9:00"],
            ["👍 Remind me too"],
        ]
        fake.press(message, done, sender=BOB)  # not his reminder: refused as Bob
        await eventually(lambda: len(fake.answers()) == 1)
        query = fake.press(message, done)
        await eventually(lambda: len(fake.edits()) == 1)
        fake.press(message, done, query_id=query)  # the same press delivered again
        # Another chat's reminder's button, pressed here: refused, nothing changed.
        fake.press(message, elsewhere[0][0]["callback_data"])
        await eventually(lambda: len(fake.called("answerCallbackQuery")) == 4)
        assert await acknowledgements(bot) == 1
    refused, acted, other = (a["text"] for a in fake.answers())
    assert refused == "Reminder #1 was set by Alice; only they or a group admin can mark it done."
    assert acted == "✅ #1 marked done."
    assert other == "This reminder is gone; nothing was changed."
    (edit,) = fake.edits()
    assert edit["message_id"] == message and edit["text"].startswith("⏰ Reminder")
    assert "stand-up\n✅ Done by Alice " in edit["text"]
    # A daily reminder goes on: Done and the snoozes are spent, Remind me too stays.
    assert [[k["text"] for k in row] for row in edit["reply_markup"]["inline_keyboard"]] == [
        ["👍 Remind me too"]
    ]


async def test_a_group_admin_may_press_done_on_someone_elses_reminder(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    """The press carries the presser's rights as their message would: Telegram says Bob
    administers the group, so his Done on Alice's reminder acts, as his /done would."""
    fake.admins.add(BOB["id"])
    async with running(tmp_path, fake) as bot:
        message, keys = await gone_off(bot, fake, "/remind every day at 9:00 stand-up")
        fake.press(message, keys[0][0]["callback_data"], sender=BOB)
        await eventually(lambda: len(fake.edits()) == 1)
        assert await acknowledgements(bot) == 1
    (acted,) = (a["text"] for a in fake.answers())
    assert acted == "✅ #1 marked done."
    assert "✅ Done by Bob " in fake.edits()[0]["text"]


async def gone_off(
    bot: Bot,
    fake: FakeTelegram,
    remind: str,
    go_off: Callable[[Bot], Awaitable[None]] = due_on_the_second,
) -> tuple[int, list[list[dict[str, str]]]]:
    """`remind` said in the group, then made to go off by `go_off`: the id of the
    reminder's message and its rows of keys."""
    fake.say(remind)
    await replies(fake, 1)
    await go_off(bot)
    await eventually(lambda: len(with_keys(fake)) == 1)
    ((_, message), keys), *_ = with_keys(fake).items()
    return message, keys


def with_keys(fake: FakeTelegram) -> dict[tuple[int, int], list[list[dict[str, str]]]]:
    """The bot's messages that have a keyboard: (chat, message id) -> its rows of keys."""
    return {
        key: shown["reply_markup"]["inline_keyboard"]
        for key, shown in dict(fake.messages).items()
        if "reply_markup" in shown
    }


async def test_snooze_by_button_answers_the_time_and_says_so_in_place(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    async with running(tmp_path, fake) as bot:
        message, keys = await gone_off(bot, fake, "/remind every day at 9:00 stand-up")
        fake.press(message, keys[0][1]["callback_data"])  # 💤 10 min
        await eventually(lambda: len(fake.edits()) == 1)
        await eventually(lambda: len(fake.answers()) == 1)
    assert fake.answers()[0]["text"].startswith("💤 Snoozed #1")
    (edit,) = fake.edits()
    assert edit["text"].split("\n")[-1].startswith("💤 Snoozed to ")
    assert edit["text"].endswith(" by Alice") and edit["message_id"] == message


async def goes_off_now(bot: Bot) -> None:
    """The one reminder, set "in 10 minutes", goes off now: its time moved 10 minutes
    earlier, to the fraction of a second, as it was set."""
    assert bot.reminders is not None

    def move(session: Session) -> None:
        pending = session.scalars(select(Reminder)).one()
        assert pending.next_fire_at is not None
        pending.next_fire_at -= timedelta(minutes=10, seconds=1)

    await bot.reminders.database.write(move)


async def test_done_on_a_reminder_set_in_minutes(tmp_path: Path, fake: FakeTelegram) -> None:
    async with running(tmp_path, fake) as bot:
        message, keys = await gone_off(bot, fake, "/remind in 10 minutes stand-up", goes_off_now)
        fake.press(message, keys[0][0]["callback_data"])  # ✅ Done
        await eventually(lambda: len(fake.answers()) == 1)
    assert fake.answers()[0]["text"] == "✅ #1 marked done."
