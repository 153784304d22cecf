"""A reminder's buttons on Discord (issue 41 §1), against the local Discord on real
sockets with a real Bot: the buttons as message components (action rows, each custom_id
a ButtonData), a press as Discord dispatches it (INTERACTION_CREATE, MESSAGE_COMPONENT)
answered within Discord's 3 s through the interaction's token, the answer shown to the
presser alone (flags 64), a button that is not ours refused in words."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from groupmate.storage import OutgoingMessage
from tests.button_rows import reminder_buttons
from tests.conftest import eventually
from tests.fake_discord import FakeDiscord
from tests.fake_discord_guild import CHANNEL, TOKEN, USERS
from tests.fake_discord_interactions import DEADLINE
from tests.http_harness import Api, Servers

BOB = USERS["bob"]["id"]


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
    message = OutgoingMessage(f"dc:{CHANNEL}", "⏰ stretch", buttons=reminder_buttons())
    await api.bot.adapters[0].send(message)
    [posted] = fake.posted()
    return posted


async def test_a_reminder_goes_out_with_its_buttons_as_action_rows(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    message = OutgoingMessage(f"dc:{CHANNEL}", "⏰ Reminder: stretch", buttons=reminder_buttons())
    sent = await api.bot.adapters[0].send(message)
    [posted] = fake.posted()
    assert sent == posted["id"]
    rows = posted["_body"]["components"]
    assert [row["type"] for row in rows] == [1, 1]  # action rows
    shown = [
        [(b["type"], b["label"], b["custom_id"], b["style"]) for b in row["components"]]
        for row in rows
    ]
    expected = [[(2, b.label, b.data) for b in row] for row in reminder_buttons()]
    assert [[entry[:3] for entry in row] for row in shown] == expected
    assert shown[0][0][3] == 3  # Done is green (SUCCESS); the snoozes grey
    assert {entry[3] for entry in shown[1]} == {2}
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
