"""Matrix's buttons are reactions, on a real Synapse: the bot seeds ✅ 💤 👍 on a
delivered reminder, a member's reaction reaches the bot once per reaction event (also
when a sync batch is replayed), the bot's own do not, and what a reaction did is shown by
editing the message in place (m.replace), or, for a refusal, said to the person.

The first tests run the adapter with a scripted host in place of the router, so that the
adapter's side is tested on its own; the last goes through the real bot: router, tools,
store."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import create_engine, text, update

from groupmate.bot.adapters.matrix import MatrixAdapter
from groupmate.bot.adapters.matrix_settings import MatrixSettings
from groupmate.bot.messages import IncomingMessage, IncomingReaction, Reply
from groupmate.bot.presses import ButtonData, Press, PressOutcome
from groupmate.bot.router import Deliver
from groupmate.storage import Button, Database, OutgoingMessage
from groupmate.storage.adapter_state import load_state, save_state
from groupmate.storage.models import Reminder
from tests.synapse import Client, Synapse, User
from tests.test_matrix import bot_as, synapse, until  # noqa: F401 (the session's homeserver)

AT = datetime(2026, 11, 28, 9, tzinfo=UTC)


def buttons(rid: str, *, me_too: bool = True) -> tuple[tuple[Button, ...], ...]:
    """A delivered reminder's buttons, as the core composes them."""
    row = (
        Button("Done", ButtonData("done", rid, AT).encode()),
        Button("Snooze 10 min", ButtonData("snooze", rid, AT, "10m").encode()),
        Button("1 h", ButtonData("snooze", rid, AT, "1h").encode()),
        Button("Tomorrow 9:00", ButtonData("snooze", rid, AT, "tomorrow").encode()),
    )
    more = ((Button("Remind me too", ButtonData("me_too", rid, AT).encode()),),)
    return (row, *(more if me_too else ()))


@dataclass
class Host:
    """The bot as the adapter sees it (`BotHost`), with the router's answers scripted:
    `outcomes` by emoji; every reaction and `posted` call recorded."""

    database: Database
    outcomes: dict[str, PressOutcome] = field(default_factory=dict)
    reactions: list[IncomingReaction] = field(default_factory=list)
    confirmations: list[tuple[Reply, str]] = field(default_factory=list)
    confirming: Reply | None = None

    async def handle(self, message: IncomingMessage, deliver: Deliver | None = None) -> list[Reply]:
        if self.confirming is None or deliver is None:
            return []
        await deliver([self.confirming])
        return [self.confirming]

    async def react(self, reaction: IncomingReaction) -> PressOutcome | None:
        self.reactions.append(reaction)
        return self.outcomes.get(reaction.emoji) if reaction.added else None

    async def press(self, press: Press) -> PressOutcome:
        raise AssertionError("Matrix has no buttons: its presses are reactions")

    async def posted(self, reply: Reply, message_id: str) -> None:
        self.confirmations.append((reply, message_id))

    def may_address(self, text: str) -> bool:
        return True


def relations(client: Client, room: str, event_id: str, rel_type: str) -> list[dict[str, Any]]:
    """The room's events relating to `event_id` as `rel_type`, oldest first."""
    path = f"/rooms/{quote(room)}/messages?dir=b&limit=100"
    chunk = client.call("GET", path)["chunk"]
    return [
        e
        for e in reversed(chunk)
        if (e.get("content", {}).get("m.relates_to") or {}).get("event_id") == event_id
        and e["content"]["m.relates_to"].get("rel_type") == rel_type
    ]


def react(client: Client, room: str, target: str, key: str) -> str:
    content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": target, "key": key}}
    path = f"/rooms/{quote(room)}/send/m.reaction/{uuid.uuid4().hex}"
    return str(client.call("PUT", path, content)["event_id"])


def adapter_for(user: User, synapse: Synapse) -> MatrixAdapter:  # noqa: F811
    settings = MatrixSettings(
        homeserver=synapse.url, user_id=user.user_id, access_token=user.access_token
    )
    return MatrixAdapter(settings, bot_name=user.user_id[1:].split(":")[0])


async def test_seeded_reactions_act_once_and_edit_the_reminder_in_place(
    synapse: Synapse,  # noqa: F811
    sqlite_template: Path,
    tmp_path: Path,
) -> None:
    ana, ben, mate = (synapse.register(name) for name in ("pana", "pben", "pressbot"))
    person, other = synapse.client(ana), synapse.client(ben)
    room = person.create_room(invite=[ben.user_id, mate.user_id])
    other.join(room)
    shutil.copyfile(sqlite_template, tmp_path / "bot.db")
    database = Database(f"sqlite:///{tmp_path / 'bot.db'}")
    host = Host(database)
    chat = f"mx:{room}"
    reminder = OutgoingMessage(
        chat_id=chat,
        text="⏰ Reminder: tea",
        reminder_id="r1",
        occurrence=AT,
        buttons=buttons("r1"),
    )
    done = "⏰ Reminder: tea\n✅ Done by pben 09:02"
    # Done for good: only "Remind me too" is left to press, so only 👍 stays seeded.
    left = buttons("r1")[1:]
    host.outcomes["✅"] = PressOutcome(True, "Done.", OutgoingMessage(chat, done, buttons=left))
    host.outcomes["👍"] = PressOutcome(False, "The asker switched “me too” off for this one.")
    adapter = adapter_for(mate, synapse)
    await adapter.start(host)
    try:
        await until(lambda: mate.user_id in person.members(room), "the join")
        sent = await adapter.send(reminder)
        assert sent is not None
        assert await adapter.send(reminder) == sent  # a retry: no second message, no seeds
        seeds = await until(lambda: seeded(person, room, sent, 3), "the seeded reactions")
        assert seeds == ["✅", "💤", "👍"]
        key = f"matrix:{mate.user_id}:since"
        before = await load_state(database, key)  # the position before anyone reacted

        ticked = react(other, room, sent, "✅")
        edits = await until(lambda: relations(person, room, sent, "m.replace"), "the edit")
        await until(lambda: seeded(person, room, sent, 0, by=mate) == ["👍"] or None, "unseeding")
        thumb = react(other, room, sent, "👍")
        refusal = await until(lambda: notices(person, room, mate), "the refusal")
    finally:
        await adapter.stop()

    # Only ben's reactions reached the bot, each with its event's id; the seeds did not.
    assert [(r.sender_id, r.emoji, r.reaction_id) for r in host.reactions] == [
        (f"mx:{ben.user_id}", "✅", ticked),
        (f"mx:{ben.user_id}", "👍", thumb),
    ]
    (edit,) = edits
    assert edit["sender"] == mate.user_id
    assert edit["content"]["m.new_content"]["body"] == done
    assert edit["content"]["body"] == f"* {done}"
    assert edit["content"]["m.mentions"] == {}  # an edit notifies no one again
    (notice,) = refusal
    assert notice["content"]["body"] == "@pben: The asker switched “me too” off for this one."
    assert notice["content"]["m.mentions"]["user_ids"] == [ben.user_id]
    assert notice["content"]["m.relates_to"]["m.in_reply_to"]["event_id"] == sent

    # A replayed sync (the position saved before the reactions, as after a crash) hands
    # the bot the same reaction events: the router sees the same ids (it acts once on
    # them) and says it was a replay; nothing is edited or said again. Then taking the
    # 👍 back (a redaction) reaches the bot as that reaction's id, taken back.
    assert before is not None
    await save_state(database, key, before)
    host.reactions.clear()
    host.outcomes = {e: PressOutcome(True, "Done.", repeated=True) for e in ("✅", "👍")}
    adapter = adapter_for(mate, synapse)
    await adapter.start(host)
    try:
        await until(lambda: len(host.reactions) == 2 or None, "the replay")
        other.call("PUT", f"/rooms/{quote(room)}/redact/{quote(thumb)}/undo-{thumb[1:9]}", {})
        await until(lambda: len(host.reactions) == 3 or None, "the redaction")
    finally:
        await adapter.stop()
        database.close()
    assert [(r.reaction_id, r.added) for r in host.reactions] == [
        (ticked, True),
        (thumb, True),
        (thumb, False),
    ]
    assert len(relations(person, room, sent, "m.replace")) == 1
    assert len(notices(person, room, mate)) == 1


def notices(client: Client, room: str, bot: User) -> list[dict[str, Any]]:
    return [e for e in client.messages(room, bot.user_id) if e["content"]["msgtype"] == "m.notice"]


async def test_a_confirmation_is_reported_and_seeded(
    synapse: Synapse,  # noqa: F811
    sqlite_template: Path,
    tmp_path: Path,
) -> None:
    """A reply that confirms a reminder is reported with its event id (a 👍 on it then
    means "me too"), and carries the reactions its buttons stand for."""
    cara, mate = synapse.register("pcara"), synapse.register("confirmbot")
    person = synapse.client(cara)
    room = person.create_room(invite=[mate.user_id])
    shutil.copyfile(sqlite_template, tmp_path / "bot.db")
    database = Database(f"sqlite:///{tmp_path / 'bot.db'}")
    me_too = ((Button("Remind me too", ButtonData("me_too", "r7").encode()),),)
    confirming = Reply(f"mx:{room}", "⏰ Reminder #7 set", reminder_id="r7", buttons=me_too)
    host = Host(database, confirming=confirming)
    adapter = adapter_for(mate, synapse)
    await adapter.start(host)
    try:
        await until(lambda: mate.user_id in person.members(room), "the join")
        person.say(room, "/remind in 1 hour stretch")
        (reported,) = await until(lambda: host.confirmations, "the confirmation")
        seeds = await until(lambda: relations(person, room, reported[1], "m.annotation"), "seeds")
    finally:
        await adapter.stop()
        database.close()
    (said,) = person.messages(room, mate.user_id)
    assert reported == (confirming, said["event_id"])
    assert [e["content"]["m.relates_to"]["key"] for e in seeds] == ["👍"]


def count(tmp_path: Path, table: str) -> int:
    engine = create_engine(f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        with engine.connect() as connection:
            return int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
    finally:
        engine.dispose()


async def test_reactions_on_a_delivered_reminder_act_once_through_the_bot(
    synapse: Synapse,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The real path: a daily reminder Ana set in the room, delivered by the engine with
    the core's buttons as seeded reactions. Ben's ✅ is refused (not his reminder) with
    nothing changed; made a moderator, his ✅ is one acknowledgement and an edit; Ana's
    💤 is one snooze; Ben's
    👍 puts him among the people and taking it back takes him off again. The same
    events seen again after a restart (the sync position rolled back) change nothing."""
    ana, ben, mate = (synapse.register(name) for name in ("rana", "rben", "realbot"))
    person, other = synapse.client(ana), synapse.client(ben)
    room = person.create_room(invite=[ben.user_id, mate.user_id])
    other.join(room)
    chat = f"mx:{room}"

    def edits() -> int:
        return len(relations(person, room, sent, "m.replace"))

    bot, _ = bot_as(mate, synapse, tmp_path)
    async with bot:
        assert bot.reminders is not None and bot.database is not None
        service = bot.reminders
        await until(lambda: mate.user_id in person.members(room), "the join")
        person.say(room, "/remind every day at 9:00 tea")
        (confirmation,) = await until(lambda: person.messages(room, mate.user_id), "the reply")
        (view,), _ = await service.list_for_chat(chat)

        def rewind(session: Any) -> None:
            due = update(Reminder).where(Reminder.id == view.id)
            session.execute(due.values(next_fire_at=datetime.now(UTC) - timedelta(seconds=1)))

        await service.database.write(rewind)
        (delivered,) = await until(lambda: reminders_in(person, room, mate), "the reminder")
        sent = delivered["event_id"]
        seeds = await until(lambda: seeded(person, room, sent, 3), "the seeds")
        assert seeds == ["✅", "💤", "👍"]
        key = f"matrix:{mate.user_id}:since"
        before = await load_state(bot.database, key)

        first = react(other, room, sent, "✅")  # Ben may not mark Ana's reminder done
        (refusal,) = await until(lambda: notices(person, room, mate), "the refusal")
        assert "only they or a group admin" in refusal["content"]["body"]
        assert count(tmp_path, "acknowledgements") == 0 and edits() == 0
        # Made a moderator (power level 50), Ben may: as his /done would.
        levels_path = f"/rooms/{quote(room)}/state/m.room.power_levels"
        levels = person.call("GET", levels_path)
        person.call("PUT", levels_path, levels | {"users": levels["users"] | {ben.user_id: 50}})
        redact(other, room, first)  # one ✅ per person: his first goes, then he clicks again
        react(other, room, sent, "✅")
        (edit,) = await until(lambda: relations(person, room, sent, "m.replace"), "the edit")
        assert "✅ Done by rben" in edit["content"]["m.new_content"]["body"]  # his name
        assert count(tmp_path, "acknowledgements") == 1
        react(person, room, sent, "💤")
        await until(lambda: edits() == 2 or None, "the snooze's edit")
        views, _ = await service.list_for_chat(chat)
        assert [v.snooze_of for v in views if v.snooze_of] == [view.id]

        async def people() -> list[str]:
            return [m.user_id for m in (await service.get(view.id)).audience.mentions]

        thumb = react(other, room, sent, "👍")
        await until(lambda: edits() == 3 or None, "the me-too's edit")
        assert await people() == [f"mx:{ben.user_id}"]
        redact(other, room, thumb)
        await until(lambda: edits() == 4 or None, "the edit taking him off")
        assert await people() == []
        # A 👍 on the confirmation ("⏰ Reminder #1 set …") is "me too" as well.
        react(other, room, confirmation["event_id"], "👍")
        for _ in range(150):  # no edit to wait for: a confirmation has no occurrence
            if await people() == [f"mx:{ben.user_id}"]:
                break
            await asyncio.sleep(0.2)
        assert await people() == [f"mx:{ben.user_id}"]
        rows = count(tmp_path, "reminders")
        assert before is not None
        await save_state(bot.database, key, before)
    # The same reaction events again, after a restart from the old position.
    bot, _ = bot_as(mate, synapse, tmp_path)
    async with bot:
        assert bot.reminders is not None
        await asyncio.sleep(3)  # the replayed batch is handled by now
        assert [m.user_id for m in (await bot.reminders.get(view.id)).audience.mentions] == [
            f"mx:{ben.user_id}"
        ]
    assert count(tmp_path, "acknowledgements") == 1
    assert count(tmp_path, "reminders") == rows  # no second snooze
    assert edits() == 4
    assert len(notices(person, room, mate)) == 1


def reminders_in(client: Client, room: str, bot: User) -> list[dict[str, Any]]:
    return [e for e in client.messages(room, bot.user_id) if "Reminder for" in e["content"]["body"]]


def seeded(
    client: Client, room: str, event_id: str, wanted: int, *, by: User | None = None
) -> list[str] | None:
    """The keys of the reactions on `event_id` (`by` one user's), once there are
    `wanted` of them (a redacted reaction relates to nothing any more)."""
    found = relations(client, room, event_id, "m.annotation")
    found = [e for e in found if by is None or e["sender"] == by.user_id]
    return [e["content"]["m.relates_to"]["key"] for e in found] if len(found) >= wanted else None


def redact(client: Client, room: str, event_id: str) -> None:
    client.call("PUT", f"/rooms/{quote(room)}/redact/{quote(event_id)}/{uuid.uuid4().hex}", {})
