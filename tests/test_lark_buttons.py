"""A reminder's buttons on Lark/Feishu (issue 41 §1), against the local Lark on real
sockets with a real Bot: the reminder as an interactive card (its buttons' values hold
the ButtonData), a press as Lark's card.action.trigger callback (sealed and signed, by
webhook; or down the long connection) answered within 3 s with a toast, and a callback
Lark did not make refused before anything is read."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from groupmate.storage import Member, OutgoingMessage
from tests.button_rows import group_buttons
from tests.conftest import eventually
from tests.fake_lark import (
    CHAT,
    FakeLark,
    card_action_event,
    card_buttons,
    card_of,
    post_event,
)
from tests.http_harness import Api, Servers


@pytest.fixture
def fake() -> Iterator[FakeLark]:
    api = FakeLark()
    api.server.start()
    yield api
    api.server.stop()


async def start(servers: Servers, fake: FakeLark, **section: Any) -> Api:
    api = await servers.start(adapters={"lark": fake.section(**section)})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


async def sent_card(
    api: Api, fake: FakeLark, text: str = "⏰ Reminder for @Bob: stretch"
) -> dict[str, Any]:
    bob = Member("lk:ou_bob", "Bob")
    message = OutgoingMessage(f"lk:{CHAT}", text, people=(bob,), buttons=group_buttons())
    await api.bot.adapters[0].send(message)
    return (await fake.wait_sent(1))[-1]


async def test_a_reminder_with_buttons_goes_out_as_a_shared_card(
    fake: FakeLark, servers: Servers
) -> None:
    api = await start(servers, fake)
    sent = await sent_card(api, fake, "⏰ Reminder for @Bob: *stretch* <at id=all></at>")
    card = card_of(sent)
    assert card["config"]["update_multi"] is True  # one card: an update shows to everyone
    [text] = [e["text"]["content"] for e in card["elements"] if e["tag"] == "div"]
    # Bob as Lark's mention; the reminder's own markdown and tags shown as typed.
    assert text.startswith("⏰ Reminder for <at id=ou_bob></at>: &#42;stretch&#42; &#60;at")
    rows = card_buttons(card)
    assert [[(b["text"]["content"], b["value"]) for b in row] for row in rows] == [
        [(b.label, {"gm": b.data}) for b in row] for row in group_buttons()
    ]
    assert [[b["type"] for b in row] for row in rows] == [
        ["primary", "default", "default", "default"],
        ["primary"],
    ]
    # Without buttons: a text message, as before.
    await api.bot.adapters[0].send(OutgoingMessage(f"lk:{CHAT}", "plain"))
    assert (await fake.wait_sent(2))[1]["msg_type"] == "text"


async def test_a_press_is_answered_within_3_s_with_a_toast_for_the_presser(
    fake: FakeLark, servers: Servers
) -> None:
    api = await start(servers, fake)
    card = await sent_card(api, fake)
    done = card_buttons(card_of(card))[0][0]["value"]
    began = time.monotonic()
    answer = await post_event(fake, api.base_url, card_action_event(card, done, user="ou_bob"))
    assert answer.status_code == 200 and time.monotonic() - began < 3
    toast = answer.json()["toast"]
    assert toast["content"] and toast["type"] in ("success", "error")


async def test_a_callback_lark_did_not_make_is_refused_before_anything(
    fake: FakeLark, servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    api = await start(servers, fake)
    card = await sent_card(api, fake)
    done = card_buttons(card_of(card))[0][0]["value"]
    forged = await post_event(fake, api.base_url, card_action_event(card, done), sign_key="guess")
    wrong_token = card_action_event(card, done, token="not-the-token")
    refused = await post_event(fake, api.base_url, wrong_token)
    assert (forged.status_code, refused.status_code) == (401, 401)
    assert "toast" not in forged.text and "toast" not in refused.text
    assert "bad signature" in caplog.text and "wrong verification token" in caplog.text


async def test_a_button_that_is_not_ours_is_refused_in_words(
    fake: FakeLark, servers: Servers
) -> None:
    api = await start(servers, fake)
    card = await sent_card(api, fake)
    for value in ({"gm": "gm1:x:7:"}, {"other": "thing"}, {"gm": 7}):
        answer = await post_event(fake, api.base_url, card_action_event(card, value))
        assert answer.json() == {
            "toast": {"type": "error", "content": "This button is no longer in use."}
        }
    assert fake.patches == []  # the card stays as it was


async def test_a_press_down_the_long_connection_is_answered_in_its_frame(
    fake: FakeLark, servers: Servers
) -> None:
    api = await start(servers, fake, mode="websocket", verification_token=None, encrypt_key=None)
    await eventually(lambda: fake.sockets == 1, within=10)
    card = await sent_card(api, fake)
    done = card_buttons(card_of(card))[0][0]["value"]
    frame = fake.push(card_action_event(card, done, user="ou_bob"))
    await eventually(lambda: frame in fake.ack_data, within=3)
    assert (frame, 200) in fake.acks
    assert fake.ack_data[frame]["toast"]["content"]
