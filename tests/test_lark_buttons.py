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

from groupmate.bot.adapters.lark_cards import SLOW
from groupmate.storage import Member, OutgoingMessage
from tests.button_rows import acknowledgements, due_now, group_buttons, hold_database
from tests.conftest import eventually
from tests.fake_lark import (
    APP_ID,
    BOT_OPEN_ID,
    CHAT,
    MANAGER,
    FakeLark,
    card_action_event,
    card_buttons,
    card_of,
    message_event,
    post_event,
)
from tests.http_harness import Api, Servers, delivered_ids
from tests.scripted_presses import people

BOT = (BOT_OPEN_ID, "groupmate")


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


# -- end to end: the real Bot -> Router.press -> the store ------------------------------


async def fired_card(
    servers: Servers, fake: FakeLark, remind: str = "/remind me in 10 minutes to stretch"
) -> tuple[Api, dict[str, Any]]:
    """Alice sets a reminder in the group, and it goes off: a card with its buttons."""
    api = await start(servers, fake)
    asked = message_event(f"@_user_1 {remind}", mentions=(BOT,))
    await post_event(fake, api.base_url, asked)
    await fake.wait_sent(1)
    await due_now(api)
    fired = (await fake.wait_sent(2))[1]
    assert fired["message_id"] in await delivered_ids(api.bot)  # pressed after, as people do
    return api, fired


def markdown(card: dict[str, Any]) -> str:
    return str(next(e["text"]["content"] for e in card["elements"] if e["tag"] == "div"))


async def test_done_pressed_acts_once_as_the_presser_and_the_card_changes_in_place(
    fake: FakeLark, servers: Servers
) -> None:
    api, fired = await fired_card(servers, fake)
    done = card_buttons(card_of(fired))[0][0]["value"]
    press = card_action_event(fired, done, user="ou_alice")
    # A callback Lark did not sign is refused before anything is read.
    forged = await post_event(fake, api.base_url, press, sign_key="guess")
    assert forged.status_code == 401 and await acknowledgements(api) == 0
    answer = (await post_event(fake, api.base_url, press)).json()
    assert answer["toast"]["type"] == "success" and answer["toast"]["content"]
    assert "stretch" in markdown(answer["card"]["data"])
    assert "Done by Alice" in markdown(answer["card"]["data"])
    assert await acknowledgements(api) == 1
    # Lark pushes the same callback again (no answer in time): it acts no more.
    again = (await post_event(fake, api.base_url, press)).json()
    assert "card" not in again and await acknowledgements(api) == 1


async def test_a_button_of_another_chats_reminder_is_refused_and_changes_nothing(
    fake: FakeLark, servers: Servers
) -> None:
    api, fired = await fired_card(servers, fake)
    done = card_buttons(card_of(fired))[0][0]["value"]
    elsewhere = fired | {"chat_id": "oc_other", "message_id": "om_elsewhere"}
    fake.keep("om_elsewhere", "oc_other", APP_ID, "app_id", "app")
    answer = (await post_event(fake, api.base_url, card_action_event(elsewhere, done))).json()
    assert answer == {
        "toast": {"type": "error", "content": "This reminder is gone; nothing was changed."}
    }
    assert await acknowledgements(api) == 0 and fake.patches == []


async def test_a_press_slower_than_lark_waits_gets_a_toast_then_the_card_is_updated(
    fake: FakeLark, servers: Servers
) -> None:
    api, fired = await fired_card(servers, fake)
    snooze = card_buttons(card_of(fired))[0][1]["value"]  # 10 min
    with hold_database(servers.tmp_path / "bot.db", seconds=3.0):  # the press waits
        began = time.monotonic()
        answer = await post_event(
            fake, api.base_url, card_action_event(fired, snooze, user="ou_alice")
        )
        assert time.monotonic() - began < 3
    assert answer.json() == {"toast": {"type": "success", "content": SLOW}}
    await eventually(lambda: bool(fake.patches), within=10)
    [(message_id, card)] = fake.patches
    assert message_id == fired["message_id"] and "Snoozed to" in markdown(card)


async def test_a_confirmation_is_reported_by_its_id(fake: FakeLark, servers: Servers) -> None:
    api = await start(servers, fake)
    asked = message_event("@_user_1 /remind me in 10 minutes to stretch", mentions=(BOT,))
    await post_event(fake, api.base_url, asked)
    [confirmation] = await fake.wait_sent(1)
    assert api.bot.reminders is not None
    found = await api.bot.reminders.acts.on_message(f"lk:{CHAT}", confirmation["message_id"])
    assert found is not None and found[1] is None


async def test_a_group_manager_may_press_done_on_someone_elses_reminder(
    fake: FakeLark, servers: Servers
) -> None:
    """The press carries the presser's rights as their message would: Lark says Max
    manages the group, so his Done on Alice's reminder acts, as his /done would; Bob,
    a member, is refused."""
    api, fired = await fired_card(servers, fake)
    done = card_buttons(card_of(fired))[0][0]["value"]
    refused = await post_event(fake, api.base_url, card_action_event(fired, done, user="ou_bob"))
    assert refused.json()["toast"]["type"] == "error" and await acknowledgements(api) == 0
    answer = await post_event(fake, api.base_url, card_action_event(fired, done, user=MANAGER))
    assert answer.json()["toast"] == {"type": "success", "content": "✅ #1 marked done."}
    assert await acknowledgements(api) == 1


async def test_remind_me_too_pressed_adds_bob_once_and_a_new_press_takes_him_off(
    fake: FakeLark, servers: Servers
) -> None:
    api, fired = await fired_card(servers, fake, "/remind every day at 9:00 stretch")
    (me_too,) = card_buttons(card_of(fired))[1]
    assert me_too["text"]["content"] == "👍 Remind me too"
    press = card_action_event(fired, me_too["value"], user="ou_bob")
    answer = (await post_event(fake, api.base_url, press)).json()
    assert markdown(answer["card"]["data"]).endswith("👍 Bob will be reminded too")
    assert await people(api.bot) == ["lk:ou_bob"]
    # Lark pushes the same callback again (its event id): nothing changes.
    again = (await post_event(fake, api.base_url, press)).json()
    assert "card" not in again and await people(api.bot) == ["lk:ou_bob"]
    later = card_action_event(fired, me_too["value"], user="ou_bob")  # a new press: off
    off = (await post_event(fake, api.base_url, later)).json()
    assert "card" in off and await people(api.bot) == []
