"""A reminder's buttons on Discord (issue 41 §1), against the local Discord on real
sockets with a real Bot: the buttons as message components (action rows, each custom_id
a ButtonData), a press as Discord dispatches it (INTERACTION_CREATE, MESSAGE_COMPONENT)
answered within Discord's 3 s through the interaction's token, the answer shown to the
presser alone (flags 64), a button that is not ours refused in words."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from groupmate.storage import OutgoingMessage
from tests.button_rows import acknowledgements, due_now, group_buttons, hold_database
from tests.conftest import eventually
from tests.fake_discord import FakeDiscord
from tests.fake_discord_guild import APP, BOT, CHANNEL, THREAD, TOKEN, USERS
from tests.fake_discord_interactions import DEADLINE
from tests.http_harness import Api, Servers, delivered_ids
from tests.scripted_presses import people, snoozes

BOB = USERS["bob"]["id"]
ALICE = USERS["alice"]["id"]


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    api = FakeDiscord()
    api.server.start()
    yield api
    api.server.stop()


async def start(servers: Servers, fake: FakeDiscord) -> Api:
    api = await servers.start(adapters={"discord": {"token": TOKEN, "api_url": fake.api_url}})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


async def reminder_posted(servers: Servers, fake: FakeDiscord) -> dict[str, Any]:
    """A bot started, and a reminder with its buttons posted by it."""
    api = await start(servers, fake)
    message = OutgoingMessage(f"dc:{CHANNEL}", "⏰ stretch", buttons=group_buttons())
    await api.bot.adapters[0].send(message)
    [posted] = fake.posted()
    return posted


async def test_a_reminder_goes_out_with_its_buttons_as_action_rows(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    message = OutgoingMessage(f"dc:{CHANNEL}", "⏰ Reminder: stretch", buttons=group_buttons())
    sent = await api.bot.adapters[0].send(message)
    [posted] = fake.posted()
    assert sent == posted["id"]
    rows = posted["_body"]["components"]
    assert [row["type"] for row in rows] == [1, 1]  # action rows
    shown = [
        [(b["type"], b["label"], b["custom_id"], b["style"]) for b in row["components"]]
        for row in rows
    ]
    expected = [[(2, b.label, b.data) for b in row] for row in group_buttons()]
    assert [[entry[:3] for entry in row] for row in shown] == expected
    # Done green (SUCCESS), the snoozes grey (SECONDARY), Remind me too blurple (PRIMARY).
    assert [[entry[3] for entry in row] for row in shown] == [[3, 2, 2, 2], [1]]
    # A message without buttons carries no components.
    await api.bot.adapters[0].send(OutgoingMessage(f"dc:{CHANNEL}", "plain"))
    assert fake.posted()[1]["_body"].get("components", []) == []


async def test_a_press_is_answered_within_the_deadline_to_the_presser_alone(
    fake: FakeDiscord, servers: Servers
) -> None:
    posted = await reminder_posted(servers, fake)
    done = posted["components"][0]["components"][0]["custom_id"]
    pressed = fake.interactions.press(posted, done, user="bob")
    await eventually(lambda: bool(fake.interactions.ephemeral), within=DEADLINE)
    answered = fake.interactions.answered(pressed)
    [callback] = answered.callbacks
    assert callback["_after"] < DEADLINE
    [shown] = fake.interactions.ephemeral
    assert shown["user"] == BOB and shown["content"]  # the router's answer, to Bob only
    assert answered.refused == []


async def test_a_button_that_is_not_ours_is_refused_in_words(
    fake: FakeDiscord, servers: Servers
) -> None:
    posted = await reminder_posted(servers, fake)
    for forged in ("gm1:x:7:", "gm1:d:7:12:34", "something else"):
        fake.interactions.press(posted, forged, user="bob")
    await eventually(lambda: len(fake.interactions.ephemeral) == 3, within=DEADLINE)
    assert {s["content"] for s in fake.interactions.ephemeral} == {
        "This button is no longer in use."
    }
    assert fake.interactions.edits == []  # the message stays as it was


# -- end to end: the real Bot -> Router.press -> the store ------------------------------


async def fired_reminder(
    servers: Servers, fake: FakeDiscord, remind: str = "/remind me in 10 minutes to stretch"
) -> tuple[Api, dict[str, Any]]:
    """Alice sets a reminder in the channel, and it goes off, with its buttons."""
    api = await start(servers, fake)
    fake.say(f"<@{BOT}> {remind}", user="alice")
    await eventually(lambda: len(fake.posted()) == 1, within=10)
    await due_now(api)
    await eventually(lambda: len(fake.posted()) == 2, within=10)
    # Pressed once the engine recorded the delivery (written after the send), as a
    # person's press, seconds later, always is.
    assert fake.posted()[1]["id"] in await delivered_ids(api.bot)
    return api, fake.posted()[1]


def labels(message: dict[str, Any]) -> list[list[str]]:
    return [[b["label"] for b in row["components"]] for row in message["components"]]


async def test_done_pressed_acts_once_as_the_presser_and_edits_the_reminder_in_place(
    fake: FakeDiscord, servers: Servers
) -> None:
    api, fired = await fired_reminder(servers, fake)
    assert labels(fired)[0] == ["✅ Done", "💤 10 min", "💤 1 h", "💤 Tomorrow 9:00"]
    done = fired["components"][0]["components"][0]["custom_id"]
    pressed = fake.interactions.press(fired, done, user="alice")
    await eventually(lambda: bool(fake.interactions.ephemeral), within=DEADLINE)
    [callback] = fake.interactions.answered(pressed).callbacks
    assert callback["type"] == 7 and callback["_after"] < DEADLINE  # UPDATE_MESSAGE in time
    edited = fake.messages[fired["id"]]
    assert "stretch" in edited["content"] and "Done by Alice" in edited["content"]
    assert ["✅ Done"] not in labels(edited) and all("Done" not in r for r in labels(edited))
    [answer] = fake.interactions.ephemeral
    assert answer["user"] == ALICE and answer["content"]
    assert await acknowledgements(api) == 1
    # Discord delivers the same interaction again (a RESUME's replay): nothing more.
    fake.interactions.replay(pressed)
    await eventually(lambda: fake.interactions.answered(pressed).refused == [40060], within=5)
    assert await acknowledgements(api) == 1 and len(fake.interactions.edits) == 1


async def test_a_button_of_another_chats_reminder_is_refused_and_changes_nothing(
    fake: FakeDiscord, servers: Servers
) -> None:
    api, fired = await fired_reminder(servers, fake)
    done = fired["components"][0]["components"][0]["custom_id"]
    elsewhere = fake.say("a message in the thread", channel=THREAD)  # the same data, pressed there
    fake.interactions.press(elsewhere, done, user="alice")
    await eventually(lambda: bool(fake.interactions.ephemeral), within=DEADLINE)
    [answer] = fake.interactions.ephemeral
    assert answer["content"] == "This reminder is gone; nothing was changed."
    assert fake.interactions.edits == [] and await acknowledgements(api) == 0


async def test_a_press_slower_than_2_s_is_acknowledged_first_then_edited(
    fake: FakeDiscord, servers: Servers
) -> None:
    _, fired = await fired_reminder(servers, fake)
    snooze = fired["components"][0]["components"][1]["custom_id"]  # 10 min
    with hold_database(servers.tmp_path / "bot.db", seconds=2.5):  # the press waits
        pressed = fake.interactions.press(fired, snooze, user="alice")
        await eventually(lambda: bool(fake.interactions.ephemeral), within=10)
    answered = fake.interactions.answered(pressed)
    [callback] = answered.callbacks
    assert callback["type"] == 6 and callback["_after"] < DEADLINE  # DEFERRED_UPDATE_MESSAGE
    assert answered.refused == []
    assert "Snoozed to" in fake.messages[fired["id"]]["content"]  # edited after, by the token
    assert ("PATCH", f"/webhooks/{APP}/{pressed['token']}/messages/@original") in fake.requests
    assert fake.interactions.ephemeral[0]["user"] == ALICE


async def test_a_press_acts_with_the_pressers_own_rights(
    fake: FakeDiscord, servers: Servers
) -> None:
    api, fired = await fired_reminder(servers, fake)
    done = fired["components"][0]["components"][0]["custom_id"]
    fake.interactions.press(fired, done, user="bob")  # Alice's reminder; Bob is no admin
    await eventually(lambda: bool(fake.interactions.ephemeral), within=DEADLINE)
    [answer] = fake.interactions.ephemeral
    assert answer["user"] == BOB and "set by Alice" in answer["content"]
    assert fake.interactions.edits == [] and await acknowledgements(api) == 0
    # Ada has Manage Server (the Mods role): her Done acts, as her /done would.
    fake.interactions.press(fired, done, user="ada")
    await eventually(lambda: len(fake.interactions.edits) == 1, within=DEADLINE)
    assert await acknowledgements(api) == 1


async def test_a_confirmation_is_reported_by_its_id_so_a_thumbs_up_on_it_counts(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    fake.say(f"<@{BOT}> /remind me in 10 minutes to stretch", user="alice")
    await eventually(lambda: len(fake.posted()) == 1, within=10)
    [confirmation] = fake.posted()
    reminders = api.bot.reminders
    assert reminders is not None

    async def reported() -> bool:
        found = await reminders.acts.on_message(f"dc:{CHANNEL}", confirmation["id"])
        return found is not None and found[1] is None  # the reminder, before any occurrence

    # The fake shows the post before the adapter has its reply (and the message's id).
    await eventually(reported, within=10)


async def test_snooze_1_h_pressed_snoozes_once_and_a_replay_does_nothing(
    fake: FakeDiscord, servers: Servers
) -> None:
    api, fired = await fired_reminder(servers, fake, "/remind every day at 9:00 stretch")
    assert labels(fired)[0][2] == "💤 1 h"
    snooze = fired["components"][0]["components"][2]["custom_id"]
    pressed = fake.interactions.press(fired, snooze, user="alice")
    await eventually(lambda: len(fake.interactions.edits) == 1, within=DEADLINE)
    edited = fake.messages[fired["id"]]["content"]
    assert re.search(r"\n💤 Snoozed to \d\d:\d\d by Alice$", edited)
    (snoozed,) = await snoozes(api.bot)  # one snooze
    fake.interactions.replay(pressed)  # the same interaction id again
    await eventually(lambda: fake.interactions.answered(pressed).refused == [40060], within=5)
    assert await snoozes(api.bot) == [snoozed] and len(fake.interactions.edits) == 1


async def test_remind_me_too_pressed_adds_bob_once_and_a_new_press_takes_him_off(
    fake: FakeDiscord, servers: Servers
) -> None:
    api, fired = await fired_reminder(servers, fake, "/remind every day at 9:00 stretch")
    assert labels(fired)[1] == ["👍 Remind me too"]
    me_too = fired["components"][1]["components"][0]["custom_id"]
    pressed = fake.interactions.press(fired, me_too, user="bob")
    await eventually(lambda: len(fake.interactions.edits) == 1, within=DEADLINE)
    assert fake.messages[fired["id"]]["content"].endswith("👍 Bob will be reminded too")
    assert await people(api.bot) == [f"dc:{BOB}"]
    fake.interactions.replay(pressed)
    await eventually(lambda: fake.interactions.answered(pressed).refused == [40060], within=5)
    assert await people(api.bot) == [f"dc:{BOB}"] and len(fake.interactions.edits) == 1
    fake.interactions.press(fired, me_too, user="bob")  # a new press: off again
    await eventually(lambda: len(fake.interactions.edits) == 2, within=DEADLINE)
    assert await people(api.bot) == []
