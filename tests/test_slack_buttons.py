"""A reminder's buttons on Slack, against the local Slack Web API and signed posts on real
sockets: Block Kit blocks on the bot's messages, `block_actions` payloads at the
Interactivity Request URL (form-encoded, signed and checked as events are; acknowledged
within Slack's 3 s whatever acting takes) and over the socket in Socket Mode, the
presser answered alone (chat.postEphemeral), refusals too, and the pressed message
edited in place (chat.update) with the buttons that remain."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from groupmate.bot.adapters.pressing import NOT_A_BUTTON
from groupmate.bot.adapters.slack import SlackAdapter
from groupmate.bot.adapters.slack_settings import SlackSettings
from groupmate.bot.messages import Reply
from groupmate.bot.presses import PressOutcome
from groupmate.storage import Button, OutgoingMessage
from tests.conftest import eventually
from tests.fake_slack import (
    APP_TOKEN,
    BOT_TOKEN,
    BOT_USER,
    CHANNEL,
    FakeSlack,
    message_event,
    post_event,
    post_press,
    press_payload,
)
from tests.http_harness import Servers
from tests.scripted_presses import (
    DONE,
    ROWS,
    SNOOZE_10M,
    ScriptedHost,
    acknowledgements,
    due_on_the_second,
    people,
    snoozes,
)
from tests.test_slack import start


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    api = FakeSlack()
    api.server.start()
    yield api
    api.server.stop()


@asynccontextmanager
async def on_socket(fake: FakeSlack, host: ScriptedHost) -> AsyncIterator[SlackAdapter]:
    """A Socket Mode adapter for `host` (no Bot: the outcomes are scripted), connected."""
    settings = SlackSettings.model_validate(
        {"bot_token": BOT_TOKEN, "app_token": APP_TOKEN, "mode": "socket", "api_url": fake.api_url}
    )
    adapter = SlackAdapter(settings, bot_name="groupmate")
    await adapter.start(host)
    try:
        await eventually(lambda: adapter.status()["state"] == "connected", within=10)
        yield adapter
    finally:
        await adapter.stop()


def actions(rows: tuple[tuple[Button, ...], ...]) -> list[list[tuple[str, str, str]]]:
    """What Slack shows of `rows` as blocks: (label, action_id, value) per button."""
    found: list[list[tuple[str, str, str]]] = []
    number = 0
    for row in rows:
        found.append([])
        for button in row:
            found[-1].append((button.label, f"groupmate_press_{number}", button.data))
            number += 1
    return found


def shown(blocks: list[dict[str, Any]]) -> tuple[list[str], list[list[tuple[str, str, str]]]]:
    """A message's blocks as (section texts, buttons per actions block)."""
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    buttons = [
        [(e["text"]["text"], e["action_id"], e["value"]) for e in b["elements"]]
        for b in blocks
        if b["type"] == "actions"
    ]
    return sections, buttons


async def test_a_reminder_goes_out_with_its_buttons_under_its_first_piece(
    servers: Servers, fake: FakeSlack
) -> None:
    api = await start(servers, fake)
    adapter = api.bot.adapters[0]
    await adapter.send(OutgoingMessage(chat_id=f"sl:{CHANNEL}", text="⏰ tea & cake", buttons=ROWS))
    await adapter.send(OutgoingMessage(chat_id=f"sl:{CHANNEL}", text="word " * 700, buttons=ROWS))
    await adapter.send(OutgoingMessage(chat_id=f"sl:{CHANNEL}", text="a notice", kind="notice"))
    first, long_first, long_rest, plain = fake.posted()
    assert shown(first["blocks"]) == (["⏰ tea &amp; cake"], actions(ROWS))
    assert first["text"] == "⏰ tea &amp; cake"  # the notification's fallback
    assert first["blocks"][1]["elements"][0]["type"] == "button"
    assert shown(long_first["blocks"])[1] == actions(ROWS)  # the keys under the first piece
    assert "blocks" not in long_rest and "blocks" not in plain


async def test_a_signed_press_is_acknowledged_at_once_and_answered_to_the_presser_alone(
    servers: Servers, fake: FakeSlack
) -> None:
    api = await start(servers, fake)
    fake.slow["users.info"] = 4.0  # acting on it takes longer than Slack waits
    began = time.monotonic()
    answer = await post_press(api.base_url, press_payload(DONE.encode(), "1764100000.000100"))
    assert answer.status_code == 200 and time.monotonic() - began < 3.0
    assert fake.called("chat.postEphemeral") == []  # acknowledged before acting
    await eventually(lambda: len(fake.called("chat.postEphemeral")) == 1, within=15)
    (told,) = fake.called("chat.postEphemeral")
    assert (told["channel"], told["user"]) == (CHANNEL, "UALICE")
    assert told["text"] and told["text"] != NOT_A_BUTTON  # the bot's word: the data was ours
    # The same Request URL as the events works too: bolt tells a payload from an event.
    fake.slow.clear()
    other = await post_press(
        api.base_url, press_payload(DONE.encode(), "1764100000.000100"), path="/slack/events"
    )
    assert other.status_code == 200
    await eventually(lambda: len(fake.called("chat.postEphemeral")) == 2)


async def test_a_forged_or_stale_press_is_refused_before_anything_is_read(
    servers: Servers, fake: FakeSlack
) -> None:
    api = await start(servers, fake)
    calls = len(fake.calls)
    payload = press_payload(DONE.encode(), "1764100000.000100")
    forged = await post_press(api.base_url, payload, secret="guessed")
    stale = await post_press(api.base_url, payload, at=int(time.time()) - 600)
    assert (forged.status_code, stale.status_code) == (401, 401)
    await asyncio.sleep(0.3)
    assert len(fake.calls) == calls  # nothing read, no one asked about, nothing answered
    await post_press(api.base_url, press_payload("vote:yes", "1764100000.000100"))
    await eventually(lambda: len(fake.called("chat.postEphemeral")) == 1)
    assert fake.called("chat.postEphemeral")[0]["text"] == NOT_A_BUTTON
    assert fake.called("chat.update") == []


async def test_in_socket_mode_a_press_is_acknowledged_over_the_socket_and_the_message_updated(
    fake: FakeSlack,
) -> None:
    snoozed = OutgoingMessage(
        chat_id=f"sl:{CHANNEL}", text="⏰ tea <now>\n💤 Snoozed to 10:02 by Bob", buttons=(ROWS[0],)
    )
    done = OutgoingMessage(chat_id=f"sl:{CHANNEL}", text="⏰ tea\n✅ Done by Alice 09:02")
    host = ScriptedHost(
        [
            PressOutcome(ok=True, answer="Snoozed to 10:02.", update=snoozed),
            PressOutcome(ok=True, answer="", update=done),
            PressOutcome(ok=False, answer="That reminder is in another chat."),
        ]
    )
    async with on_socket(fake, host):
        snooze = SNOOZE_10M.encode()
        first = fake.push(
            press_payload(snooze, "1764100000.000100", user="UBOB"), kind="interactive"
        )
        await eventually(lambda: first in fake.acks)
        await eventually(lambda: len(fake.called("chat.update")) == 1)
        fake.push(press_payload(DONE.encode(), "1764100000.000100"), kind="interactive")
        await eventually(lambda: len(fake.called("chat.update")) == 2)
        fake.push(press_payload(DONE.encode(), "1764100000.000900"), kind="interactive")
        await eventually(lambda: len(fake.called("chat.postEphemeral")) == 2)
    (press, second, third) = host.presses
    assert (press.chat_id, press.chat_type, press.sender_id) == (
        f"sl:{CHANNEL}",
        "group",
        "sl:UBOB",
    )
    assert (press.sender_name, press.message_id) == ("Bob", "1764100000.000100")
    assert press.data == SNOOZE_10M and press.press_id.startswith("slack:")
    assert len({press.press_id, second.press_id, third.press_id}) == 3
    edited, finished = fake.called("chat.update")
    assert (edited["channel"], edited["ts"]) == (CHANNEL, "1764100000.000100")
    assert shown(edited["blocks"]) == (
        ["⏰ tea &lt;now&gt;\n💤 Snoozed to 10:02 by Bob"],
        actions((ROWS[0],)),
    )
    assert shown(finished["blocks"]) == (["⏰ tea\n✅ Done by Alice 09:02"], [])  # no keys left
    told = [(t["user"], t["text"]) for t in fake.called("chat.postEphemeral")]
    # No line for an empty answer; the refusal changed nothing in place.
    assert told == [("UBOB", "Snoozed to 10:02."), ("UALICE", "That reminder is in another chat.")]


async def test_a_confirmation_goes_out_with_its_buttons_and_its_ts_is_reported(
    fake: FakeSlack,
) -> None:
    confirmed = Reply(
        f"sl:{CHANNEL}", "⏰ Reminder #7: tea at 15:00", reminder_id="7", buttons=ROWS
    )
    host = ScriptedHost(replies=[confirmed, Reply(f"sl:{CHANNEL}", "It is 15:00 in Berlin.")])
    async with on_socket(fake, host):
        fake.push(message_event(f"<@{BOT_USER}> remind us at 15:00 to have tea"))
        await eventually(lambda: len(fake.posted()) == 2)
        await eventually(lambda: len(host.posts) == 1)
    first, second = fake.posted()
    assert shown(first["blocks"])[1] == actions(ROWS) and "blocks" not in second
    assert host.posts == [(confirmed, first["_ts"])]  # only the confirmation, by its ts


async def test_buttons_act_through_the_bot_once_as_the_presser_and_update_the_reminder(
    servers: Servers, fake: FakeSlack
) -> None:
    api = await start(servers, fake)
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /remind every day at 9:00 tea"))
    dm = message_event("/remind every day at 9:00 call mum", channel="D0001", channel_type="im")
    await post_event(api.base_url, dm)
    await eventually(lambda: len(fake.posted()) == 2)
    await due_on_the_second(api.bot)
    await eventually(lambda: len(fake.posted()) == 4)
    reminder = next(p for p in fake.posted()[2:] if p["channel"] == CHANNEL)
    elsewhere = next(p for p in fake.posted()[2:] if p["channel"] == "D0001")
    _, keys = shown(reminder["blocks"])
    assert [[label for label, _, _ in row] for row in keys] == [
        ["✅ Done", "💤 10 min", "💤 1 h", "💤 Tomorrow 9:00"],
        ["👍 Remind me too"],
    ]
    done, ts = keys[0][0][2], reminder["_ts"]
    await post_press(api.base_url, press_payload(done, ts, user="UBOB"))  # not his
    await eventually(lambda: len(fake.called("chat.postEphemeral")) == 1)
    pressed = press_payload(done, ts)
    await post_press(api.base_url, pressed)
    await eventually(lambda: len(fake.called("chat.update")) == 1)
    await post_press(api.base_url, pressed)  # the same payload again: acts once
    other = shown(elsewhere["blocks"])[1][0][0][2]  # the DM reminder's Done, pressed here
    await post_press(api.base_url, press_payload(other, ts))
    await eventually(lambda: len(fake.called("chat.postEphemeral")) == 3)
    await asyncio.sleep(0.3)
    told = [(t["user"], t["text"]) for t in fake.called("chat.postEphemeral")]
    assert told == [
        ("UBOB", "Reminder #1 was set by Alice; only they or a group admin can mark it done."),
        ("UALICE", "✅ #1 marked done."),
        ("UALICE", "This reminder is gone; nothing was changed."),
    ]
    (update,) = fake.called("chat.update")
    assert (update["channel"], update["ts"]) == (CHANNEL, ts)
    (text,), rows = shown(update["blocks"])
    assert "tea\n✅ Done by Alice " in text and text == update["text"]
    assert [[label for label, _, _ in row] for row in rows] == [["👍 Remind me too"]]
    assert await acknowledgements(api.bot) == 1


async def test_a_workspace_admin_may_press_done_on_someone_elses_reminder(
    servers: Servers, fake: FakeSlack
) -> None:
    """The press carries the presser's rights as their message would: Ada administers
    the workspace, so her Done on Alice's reminder acts, as her /done would."""
    api = await start(servers, fake)
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /remind every day at 9:00 tea"))
    await eventually(lambda: len(fake.posted()) == 1)
    await due_on_the_second(api.bot)
    await eventually(lambda: len(fake.posted()) == 2)
    reminder = fake.posted()[1]
    _, keys = shown(reminder["blocks"])
    await post_press(api.base_url, press_payload(keys[0][0][2], reminder["_ts"], user="UADMIN"))
    await eventually(lambda: len(fake.called("chat.update")) == 1)
    await eventually(lambda: len(fake.called("chat.postEphemeral")) == 1)
    told = [(t["user"], t["text"]) for t in fake.called("chat.postEphemeral")]
    assert told == [("UADMIN", "✅ #1 marked done.")]
    (text,), _ = shown(fake.called("chat.update")[0]["blocks"])
    assert "tea\n✅ Done by Ada " in text
    assert await acknowledgements(api.bot) == 1


async def slack_reminder(servers: Servers, fake: FakeSlack) -> tuple[Any, dict[str, Any]]:
    """Alice's daily reminder in the channel, gone off with its buttons: the bot, its post."""
    api = await start(servers, fake)
    await post_event(api.base_url, message_event(f"<@{BOT_USER}> /remind every day at 9:00 tea"))
    await eventually(lambda: len(fake.posted()) == 1)
    await due_on_the_second(api.bot)
    await eventually(lambda: len(fake.posted()) == 2)
    return api, fake.posted()[1]


async def test_snooze_10_min_pressed_snoozes_once_and_a_replay_does_nothing(
    servers: Servers, fake: FakeSlack
) -> None:
    api, reminder = await slack_reminder(servers, fake)
    _, keys = shown(reminder["blocks"])
    assert keys[0][1][0] == "💤 10 min"
    pressed = press_payload(keys[0][1][2], reminder["_ts"])
    await post_press(api.base_url, pressed)
    await eventually(lambda: len(fake.called("chat.update")) == 1)
    (text,), _ = shown(fake.called("chat.update")[0]["blocks"])
    assert re.search(r"\n💤 Snoozed to \d\d:\d\d by Alice$", text)
    (snoozed,) = await snoozes(api.bot)  # one snooze
    await post_press(api.base_url, pressed)  # Slack retries the same action_ts
    await asyncio.sleep(0.5)  # a replay is acknowledged and not answered: nothing to wait for
    assert await snoozes(api.bot) == [snoozed] and len(fake.called("chat.update")) == 1
    assert len(fake.called("chat.postEphemeral")) == 1  # a replay: not answered again


async def test_remind_me_too_pressed_adds_bob_once_and_a_new_press_takes_him_off(
    servers: Servers, fake: FakeSlack
) -> None:
    api, reminder = await slack_reminder(servers, fake)
    _, keys = shown(reminder["blocks"])
    assert keys[1][0][0] == "👍 Remind me too"
    pressed = press_payload(keys[1][0][2], reminder["_ts"], user="UBOB")
    await post_press(api.base_url, pressed)
    await eventually(lambda: len(fake.called("chat.update")) == 1)
    assert await people(api.bot) == ["sl:UBOB"]
    (text,), _ = shown(fake.called("chat.update")[0]["blocks"])
    assert text.endswith("👍 Bob will be reminded too")
    await post_press(api.base_url, pressed)  # the same payload again: nothing changes
    await asyncio.sleep(0.5)
    assert await people(api.bot) == ["sl:UBOB"] and len(fake.called("chat.update")) == 1
    later = press_payload(keys[1][0][2], reminder["_ts"], user="UBOB", action_ts="1764100001.5")
    await post_press(api.base_url, later)
    await eventually(lambda: len(fake.called("chat.update")) == 2)
    assert await people(api.bot) == []
