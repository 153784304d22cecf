"""A reminder's buttons on DingTalk (issue 41 §1), against the local DingTalk on real
sockets with a real Bot: with a card template configured, a group reminder goes out as
an interactive card (createAndDeliver, callbacks by Stream), a press comes down the
Stream connection on the card callback topic, is acknowledged, and the card is updated
(the presser's own note); without a template, or in HTTP mode, reminders stay text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from groupmate.bot.adapters.dingtalk_cards import card_of, card_press
from groupmate.bot.presses import ButtonData
from groupmate.storage import Member, OutgoingMessage
from tests.button_rows import DUE, acknowledgements, due_now, group_buttons
from tests.conftest import eventually
from tests.fake_dingtalk import CLIENT_ID, CLIENT_SECRET, GROUP, FakeDingTalk
from tests.http_harness import Api, Servers, delivered_ids
from tests.scripted_presses import people, snoozes

TEMPLATE = "a1b2c3d4-0000-4000-8000-groupmate0001.schema"
CARD_TOPIC = "/v1.0/card/instances/callback"


@pytest.fixture
def fake() -> Iterator[FakeDingTalk]:
    api = FakeDingTalk()
    api.server.start()
    yield api
    api.server.stop()


async def start(servers: Servers, fake: FakeDingTalk, **section: Any) -> Api:
    dingtalk = {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "api_url": fake.api_url}
    api = await servers.start(adapters={"dingtalk": dingtalk | section})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


def reminder(**more: Any) -> OutgoingMessage:
    bob = Member("dt:bob01", "Bob")
    return OutgoingMessage(
        f"dt:{GROUP}", "⏰ Reminder for @Bob: stretch", people=(bob,), occurrence=DUE,
        reminder_id="7", buttons=group_buttons(), **more,
    )  # fmt: skip


async def test_a_group_reminder_goes_out_as_an_interactive_card_with_its_buttons(
    fake: FakeDingTalk, servers: Servers
) -> None:
    api = await start(servers, fake, card_template_id=TEMPLATE)
    assert ("CALLBACK", CARD_TOPIC) in fake.subscribed  # presses come down the Stream
    await api.bot.adapters[0].send(reminder())
    [(track, card)] = fake.cards.items()
    body = card["body"]
    assert body["cardTemplateId"] == TEMPLATE and body["callbackType"] == "STREAM"
    assert body["openSpaceId"] == f"dtv1.card//IM_GROUP.{GROUP}"
    assert body["imGroupOpenDeliverModel"] == {
        "robotCode": CLIENT_ID,
        "atUserIds": {"bob01": "Bob"},
    }
    done = ButtonData("done", "7", DUE).encode()
    assert track.startswith(done.replace(":", ".") + ".")  # the reminder and occurrence
    params = card["params"]
    assert params["content"] == "⏰ Reminder for @Bob: stretch"
    shown = {
        key.removesuffix("_label"): value for key, value in params.items() if key.endswith("_label")
    }
    assert shown == {"done": "✅ Done", "me_too": "👍 Remind me too", "snooze_10m": "💤 10 min",
                     "snooze_1h": "💤 1 h", "snooze_tomorrow": "💤 Tomorrow 9:00"}  # fmt: skip
    assert {params[f"{key}_shown"] for key in shown} == {"true"}
    assert fake.sent() == []  # no text message besides
    # The same send again (a retry) makes the same card id.
    await api.bot.adapters[0].send(reminder())
    assert list(fake.cards) == [track]


def test_a_cards_id_names_its_occurrence_as_a_buttons_data_does() -> None:
    """As exactly as a button's data names it (the store finds an occurrence by equality):
    the press's button is the one the card was made for."""
    due = DUE.replace(microsecond=123456)
    card = card_of("stretch", group_buttons("7", due), tag="dt:chat:key")
    assert card is not None
    content = json.dumps({"cardPrivateData": {"actionIds": ["snooze_1h"], "params": {}}})
    callback = {"outTrackId": card.out_track_id, "userId": "bob01", "spaceType": "IM_GROUP",
                "spaceId": GROUP, "content": content}  # fmt: skip
    pressed = card_press(callback)
    same = ButtonData.decode(ButtonData("snooze", "7", due, "1h").encode())
    assert pressed is not None and pressed.data == same
    assert card_press(callback | {"outTrackId": "gm1.d.7..abc"}) is not None  # no tag check
    assert card_press(callback | {"spaceType": "IM_ROBOT"}) is None  # cards are for groups


async def test_a_press_is_acknowledged_and_answered_on_the_card_to_the_presser(
    fake: FakeDingTalk, servers: Servers
) -> None:
    api = await start(servers, fake, card_template_id=TEMPLATE)
    await api.bot.adapters[0].send(reminder())
    [track] = fake.cards
    frame = fake.press_card(track, "done", user="bob01")
    await eventually(lambda: fake.acked(frame), within=3)
    await eventually(lambda: bool(fake.card_updates), within=5)
    [update] = fake.card_updates
    assert update["outTrackId"] == track
    note = fake.cards[track]["private"]["bob01"]["note"]
    assert note  # the router's answer, to Bob alone


async def test_a_press_on_a_card_that_is_not_ours_is_answered_and_changes_nothing(
    fake: FakeDingTalk, servers: Servers
) -> None:
    api = await start(servers, fake, card_template_id=TEMPLATE)
    await api.bot.adapters[0].send(reminder())
    [track] = fake.cards
    before = dict(fake.cards[track]["params"])
    fake.press_card(track, "delete_everything", user="bob01")
    await eventually(lambda: bool(fake.card_updates), within=5)
    assert fake.cards[track]["private"]["bob01"]["note"] == "This button is no longer in use."
    assert fake.cards[track]["params"] == before
    assert "cardData" not in fake.card_updates[0]


async def test_without_a_template_or_in_http_mode_reminders_stay_text(
    fake: FakeDingTalk, servers: Servers
) -> None:
    api = await start(servers, fake)
    assert ("CALLBACK", CARD_TOPIC) not in fake.subscribed
    group = "groupMessages/send"
    await api.bot.adapters[0].send(reminder())
    assert [m["text"] for m in fake.sent() if m["via"] == group] == [reminder().text]
    http = await start(servers, fake, card_template_id=TEMPLATE, mode="http")
    await http.bot.adapters[0].send(reminder())
    assert fake.cards == {} and len([m for m in fake.sent() if m["via"] == group]) == 2


# -- end to end: the real Bot -> Router.press -> the store ------------------------------


async def fired_card(
    servers: Servers, fake: FakeDingTalk, remind: str = "/remind me in 10 minutes to stretch"
) -> tuple[Api, str]:
    """Alice sets a reminder in the group, and it goes off: a card; its id."""
    api = await start(servers, fake, card_template_id=TEMPLATE)
    fake.push(fake.message(remind, sender="alice01"))
    await eventually(lambda: len(fake.sent()) == 1, within=10)
    await due_now(api)
    await eventually(lambda: len(fake.cards) == 1, within=10)
    await delivered_ids(api.bot)  # the delivery is recorded: pressed after, as people do
    [track] = fake.cards
    return api, track


async def test_done_pressed_acts_once_as_the_presser_and_the_card_changes_in_place(
    fake: FakeDingTalk, servers: Servers
) -> None:
    api, track = await fired_card(servers, fake)
    assert fake.cards[track]["params"]["done_shown"] == "true"
    frame = fake.press_card(track, "done", user="alice01")
    await eventually(lambda: len(fake.card_updates) == 1, within=5)
    card = fake.cards[track]
    assert "stretch" in card["params"]["content"] and "Done by Alice" in card["params"]["content"]
    assert card["params"]["done_shown"] == "false"  # nothing left to be done
    assert card["private"]["alice01"]["note"]  # the answer, to Alice alone
    assert await acknowledgements(api) == 1
    # DingTalk sends the same press again (its frame): it acts no more, the card stays.
    shown = dict(card["params"])
    fake.press_card(track, "done", user="alice01", frame=frame)
    await eventually(lambda: len(fake.card_updates) == 2, within=5)
    assert "cardData" not in fake.card_updates[1] and card["params"] == shown
    assert await acknowledgements(api) == 1


async def test_a_press_in_another_group_is_refused_and_changes_nothing(
    fake: FakeDingTalk, servers: Servers
) -> None:
    api, track = await fired_card(servers, fake)
    before = dict(fake.cards[track]["params"])
    fake.press_card(track, "done", user="alice01", space="cidOTHER0002==")
    await eventually(lambda: bool(fake.card_updates), within=5)
    note = fake.cards[track]["private"]["alice01"]["note"]
    assert note == "This reminder is gone; nothing was changed."
    assert fake.cards[track]["params"] == before and await acknowledgements(api) == 0


async def test_snooze_tomorrow_pressed_snoozes_once_and_a_replay_does_nothing(
    fake: FakeDingTalk, servers: Servers
) -> None:
    api, track = await fired_card(servers, fake, "/remind every day at 9:00 stretch")
    assert fake.cards[track]["params"]["snooze_tomorrow_label"] == "💤 Tomorrow 9:00"
    frame = fake.press_card(track, "snooze_tomorrow", user="alice01")
    await eventually(lambda: len(fake.card_updates) == 1, within=5)
    content = fake.cards[track]["params"]["content"]
    assert re.search(r"\n💤 Snoozed to 09:00 by Alice$", content)
    (snoozed,) = await snoozes(api.bot)  # one snooze
    fake.press_card(track, "snooze_tomorrow", user="alice01", frame=frame)  # sent again
    await eventually(lambda: len(fake.card_updates) == 2, within=5)
    assert "cardData" not in fake.card_updates[1] and await snoozes(api.bot) == [snoozed]


async def test_remind_me_too_pressed_adds_bob_once_and_a_new_press_takes_him_off(
    fake: FakeDingTalk, servers: Servers
) -> None:
    api, track = await fired_card(servers, fake, "/remind every day at 9:00 stretch")
    assert fake.cards[track]["params"]["me_too_shown"] == "true"
    frame = fake.press_card(track, "me_too", user="bob01")
    await eventually(lambda: len(fake.card_updates) == 1, within=5)
    # A card callback carries no name, and Bob never wrote to the bot: his staff id.
    assert fake.cards[track]["params"]["content"].endswith("👍 bob01 will be reminded too")
    assert await people(api.bot) == ["dt:bob01"]
    fake.press_card(track, "me_too", user="bob01", frame=frame)  # the same frame again
    await eventually(lambda: len(fake.card_updates) == 2, within=5)
    assert "cardData" not in fake.card_updates[1] and await people(api.bot) == ["dt:bob01"]
    fake.press_card(track, "me_too", user="bob01")  # a new press: off again
    await eventually(lambda: len(fake.card_updates) == 3, within=5)
    assert await people(api.bot) == []
