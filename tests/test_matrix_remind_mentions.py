"""Matrix reminders mention their people the spec's way, on a real Synapse: the member
who asked "remind us" by `m.mentions.user_ids` and a pill, and for an admin's reminder
for everyone the admin and the room (`"room": true`). In a room a member muted to
mentions only, Synapse notifies them of both (its /notifications)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.http_harness import make_due
from tests.synapse import Client, Synapse
from tests.test_matrix import bot_as, synapse, until

__all__ = ["synapse"]  # the session's Synapse, shared with test_matrix.py
pytestmark = pytest.mark.slow


def reminders(client: Client, room: str, sender: str) -> dict[str, dict[str, Any]]:
    """The room's reminders from `sender`: content by body."""
    found = client.messages(room, sender)
    return {e["content"]["body"]: e for e in found if "Reminder for" in e["content"]["body"]}


async def test_remind_us_mentions_the_member_and_an_admins_the_room(
    synapse: Synapse, tmp_path: Path
) -> None:
    alice, bob, mate = (synapse.register(name) for name in ("ali", "bo", "mate3"))
    admin, member = synapse.client(alice), synapse.client(bob)
    room = admin.create_room(invite=[bob.user_id, mate.user_id])
    member.join(room)
    # The bot may notify the room (power level 50, the default for "room" notifications).
    levels = admin.call("GET", f"/rooms/{quote(room)}/state/m.room.power_levels")
    levels["users"][mate.user_id] = 50
    admin.call("PUT", f"/rooms/{quote(room)}/state/m.room.power_levels", levels)
    # Bob mutes the room to mentions only (a room rule that doesn't notify, as clients
    # set "mentions & keywords").
    member.call("PUT", f"/pushrules/global/room/{quote(room)}", {"actions": []})
    bot, _ = bot_as(mate, synapse, tmp_path)
    async with bot:
        await until(lambda: mate.user_id in admin.members(room), "the join")
        member.say(room, "/remind us in 1 hour stretch")
        await until(
            lambda: any("mentioning only you" in b for b in _bodies(admin, room, mate.user_id)),
            "the member's confirmation",
        )
        admin.say(room, "/remind everyone in 1 hour run")
        await until(
            lambda: any("#2 for everyone" in b for b in _bodies(admin, room, mate.user_id)),
            "the admin's confirmation",
        )
        await make_due(bot)
        fired = await until(lambda: _both(member, room, mate.user_id), "both reminders")
        notified = await until(
            lambda: _notified(member, {e["event_id"] for e in fired.values()}),
            "bob's notifications",
        )
    stretch = fired["⏰ Reminder for @bo: stretch"]["content"]
    assert stretch["m.mentions"] == {"user_ids": [bob.user_id]}
    assert f'<a href="https://matrix.to/#/{bob.user_id}">@bo</a>' in stretch["formatted_body"]
    run = fired["⏰ Reminder for everyone (set by @ali): run"]["content"]
    assert run["m.mentions"] == {"user_ids": [alice.user_id], "room": True}
    assert f'<a href="https://matrix.to/#/{alice.user_id}">@ali</a>' in run["formatted_body"]
    assert notified == {e["event_id"] for e in fired.values()}  # muted, and notified


def _both(client: Client, room: str, sender: str) -> dict[str, dict[str, Any]] | None:
    found = reminders(client, room, sender)
    return found if len(found) == 2 else None


def _bodies(client: Client, room: str, sender: str) -> list[str]:
    return [e["content"]["body"] for e in client.messages(room, sender)]


def _notified(client: Client, wanted: set[str]) -> set[str] | None:
    """Which of `wanted` Synapse notified the client's user of; None until all."""
    found = {n["event"]["event_id"] for n in client.call("GET", "/notifications")["notifications"]}
    return wanted if wanted <= found else None
