"""The Matrix adapter against a real Synapse, with the bot as a real `groupmate serve`
process: invites, LLM and offline reminders, pills, kill -9 and restart, encryption."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import pytest
import yaml
from sqlalchemy import create_engine, text, update

from groupmate.bot.adapters import configured
from groupmate.bot.adapters.matrix import ENCRYPTED_NOTICE, MatrixAdapter
from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.storage import Database, Member, OutgoingMessage
from groupmate.storage.models import Reminder
from groupmate.testing import stub_llm as s
from tests.http_harness import llm_section, make_config
from tests.synapse import Client, Synapse, User, ensure_synapse, membership
from tests.tool_venv import stop_process

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


@pytest.fixture(scope="session")
def synapse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    server = Synapse(tmp_path_factory.mktemp("synapse"))
    server.start(ensure_synapse())
    try:
        yield server
    finally:
        server.stop()


def wait_for(probe: Callable[[], T | None], what: str, within: float = 30) -> T:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class BotProcess:
    """`groupmate serve` with the Matrix adapter, as an operator would run it."""

    def __init__(self, tmp_path: Path, synapse: Synapse, bot: User, **sections: Any) -> None:
        self.database_url = f"sqlite:///{tmp_path / 'bot.db'}"
        config: dict[str, Any] = {
            "bot": {"name": "groupmate", "timezone": "Europe/Berlin"},
            "logging": {"level": "INFO"},
            "storage": {"url": self.database_url},
            "reminders": {"watchdog_interval": "200ms", "retry_base": "50ms"},
            "adapters": {
                "webhook": {"port": 0},
                "matrix": {
                    "homeserver": synapse.url,
                    "user_id": bot.user_id,
                    "password": bot.password,
                },
            },
            **sections,
        }
        self.config = tmp_path / "config.yaml"
        self.config.write_text(yaml.safe_dump(config))
        self.log = tmp_path / "bot.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "groupmate.bot.cli", "serve", "--config", str(self.config)],
                env=env,
                stdout=log,
                stderr=log,
            )

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        stop_process(self.process)

    def fire_now(self, short_id: int, *, ago: timedelta = timedelta(seconds=1)) -> None:
        """Move a reminder's next time into the past in the table; the watchdog fires it."""
        database = Database(self.database_url)
        try:
            with database.write_session() as session:
                query = update(Reminder).where(Reminder.short_id == short_id)
                session.execute(query.values(next_fire_at=datetime.now(UTC) - ago))
        finally:
            database.close()


def bodies(client: Client, room: str, sender: User) -> list[str]:
    return [e["content"]["body"] for e in client.messages(room, sender.user_id)]


def bot_as(
    user: User,
    synapse: Synapse,
    tmp_path: Path,
    *,
    matrix: dict[str, Any] | None = None,
    **sections: Any,
) -> tuple[Bot, MatrixAdapter]:
    """An in-process bot logged in as `user` (its name the localpart), and its adapter."""
    settings = {"homeserver": synapse.url, "user_id": user.user_id}
    settings |= {"access_token": user.access_token, **(matrix or {})}
    name = user.user_id[1:].split(":")[0]
    config = parse_config(
        make_config(tmp_path, bot={"name": name}, adapters={"matrix": settings}, **sections),
        environ={},
    )
    bot = Bot(config)
    (adapter,) = configured(config)
    assert isinstance(adapter, MatrixAdapter)
    bot.add_adapter(adapter)
    return bot, adapter


def test_group_room_reminders_survive_kill_9(synapse: Synapse, stub, tmp_path: Path) -> None:
    alice, bob, bot = (synapse.register(name) for name in ("alice", "bob", "groupmate"))
    person, other = synapse.client(alice), synapse.client(bob)
    room = person.create_room(invite=[bob.user_id, bot.user_id])
    other.join(room)
    person.say(room, "/remind in 5 minutes old history")  # before the bot ever ran
    # The model's call, through a kill -9: the grammar's fast path would skip the model.
    reminders = {"watchdog_interval": "200ms", "retry_base": "50ms", "fast_path": False}
    process = BotProcess(tmp_path, synapse, bot, llm=llm_section(stub), reminders=reminders)
    process.start()
    try:
        wait_for(lambda: bot.user_id in person.members(room), "the bot to join on invite")

        stretch = {"type": "once", "in_minutes": 1, "content": "stretch"}
        stub.script(s.calls(("reminder_set", stretch)))
        asked = person.say(room, "@groupmate remind us in 1 minute to stretch", mention=bot)
        (confirmation,) = wait_for(lambda: person.messages(room, bot.user_id), "an answer")
        body = confirmation["content"]["body"]
        assert body.startswith("⏰ Reminder #1 set for") and body.endswith(": stretch")
        relates = confirmation["content"]["m.relates_to"]["m.in_reply_to"]
        assert relates["event_id"] == asked
        process.fire_now(1)
        reminder = wait_for(
            lambda: [
                e
                for e in person.messages(room, bot.user_id)
                if "Reminder for" in e["content"]["body"]
            ],
            "the reminder",
        )[0]["content"]
        assert reminder["body"] == "⏰ Reminder for @alice: stretch"
        assert reminder["m.mentions"] == {"user_ids": [alice.user_id]}
        pill = f'<a href="https://matrix.to/#/{alice.user_id}">@alice</a>'
        assert pill in reminder["formatted_body"]

        stub.reset()  # from here on, no LLM would answer
        person.say(room, "/remind in 1 minute tea")
        wait_for(lambda: any("tea" in b for b in bodies(person, room, bot)), "/remind tea")
        assert not stub.requests

        # Power level 0 is a member, the room's creator (100) an admin.
        other.say(room, "/tz Asia/Tokyo")
        wait_for(lambda: "Only a group admin" in bodies(person, room, bot)[-1], "the refusal")
        person.say(room, "/tz Asia/Tokyo")
        wait_for(lambda: "Asia/Tokyo" in bodies(person, room, bot)[-1], "the change")

        process.kill()
        process.fire_now(2, ago=timedelta(minutes=10))  # due while the bot was down
        person.say(room, "/remind in 30 minutes water")  # said while it was down
        process.start()
        wait_for(lambda: any("water" in b for b in bodies(person, room, bot)), "the missed one")
        late = wait_for(
            lambda: [b for b in bodies(person, room, bot) if "Reminder for @alice: tea" in b],
            "the late reminder",
        )
        time.sleep(2)  # anything answered twice would arrive by now
    finally:
        process.stop()
    said = bodies(person, room, bot)
    assert "after downtime" in late[0]
    assert sum("Reminder for @alice: tea" in b for b in said) == 1
    assert sum("Reminder for @alice: stretch" in b for b in said) == 1
    assert sum("Reminder #1 set" in b for b in said) == 1
    assert sum("water" in b for b in said) == 1
    assert sum("tea" in b and "Reminder #2" in b for b in said) == 1
    assert not any("old history" in b for b in said)


async def until(probe: Callable[[], T | None], what: str, within: float = 30) -> T:
    """wait_for from inside the bot's event loop: the probing client blocks, so it runs
    in a thread while the bot keeps syncing."""
    return await asyncio.to_thread(wait_for, probe, what, within)


async def test_resend_invites_members_and_encryption(synapse: Synapse, tmp_path: Path) -> None:
    carol, mate = synapse.register("carol"), synapse.register("mate")
    person = synapse.client(carol)
    room = person.create_room(invite=[mate.user_id])
    secret = person.create_room(invite=[mate.user_id], encrypted=True)
    elsewhere = person.create_room(invite=[mate.user_id])
    # Two members of one room go by "Sam": "remind @Sam" there names neither.
    sam_a, sam_b = synapse.register("sama"), synapse.register("samb")
    sams = person.create_room(invite=[mate.user_id, sam_a.user_id, sam_b.user_id])
    for sam in (sam_a, sam_b):
        their = synapse.client(sam)
        their.join(sams)
        their.call("PUT", f"/profile/{quote(sam.user_id)}/displayname", {"displayname": "Sam"})
    rooms = [room, secret, sams]
    bot, adapter = bot_as(mate, synapse, tmp_path, matrix={"allow_rooms": rooms})
    async with bot:
        await until(lambda: mate.user_id in person.members(room), "the join")
        notices = await until(lambda: person.messages(secret, mate.user_id), "the notice")
        await until(
            lambda: membership(person, elsewhere, mate.user_id) == "leave", "the declined invite"
        )
        assert adapter.status()["connected"]

        message = OutgoingMessage(
            chat_id=f"mx:{room}",
            text="⏰ Reminder for @carol: tea",
            mentions=(f"mx:{carol.user_id}",),
            reminder_id="r1",
            occurrence=datetime(2026, 1, 1, 9, tzinfo=UTC),
            people=(Member(f"mx:{carol.user_id}", "carol"),),
        )
        first = await adapter.send(message)
        assert await adapter.send(message) == first  # the retry after a lost answer
        assert [e["event_id"] for e in person.messages(room, mate.user_id)] == [first]

        assert await adapter.find(f"mx:{room}", "@Carol") == Member(f"mx:{carol.user_id}", "carol")
        assert await adapter.find(f"mx:{room}", "nobody") is None
        await until(lambda: mate.user_id in person.members(sams), "the join of the Sams' room")
        assert await adapter.find(f"mx:{sams}", "Sam") is None
        assert await adapter.find(f"mx:{sams}", "@sama") == Member(f"mx:{sam_a.user_id}", "Sam")
    assert [e["content"]["body"] for e in notices] == [ENCRYPTED_NOTICE]
    assert [e["content"]["msgtype"] for e in notices] == ["m.notice"]


def send(client: Client, room: str, content: dict[str, Any]) -> str:
    path = f"/rooms/{quote(room)}/send/m.room.message/{uuid.uuid4().hex}"
    return str(client.call("PUT", path, content)["event_id"])


async def test_name_reply_and_direct_room_are_answered(
    synapse: Synapse, stub, tmp_path: Path
) -> None:
    dave, erin, robo = (synapse.register(name) for name in ("dave", "erin", "robo"))
    # A display name unlike the localpart and the bot's name: it is matched as such.
    synapse.client(robo).call(
        "PUT", f"/profile/{quote(robo.user_id)}/displayname", {"displayname": "Helper Bee"}
    )
    person, other = synapse.client(dave), synapse.client(erin)
    group = person.create_room(invite=[erin.user_id, robo.user_id])
    other.join(group)
    direct = person.create_room(invite=[robo.user_id])
    bot, _ = bot_as(robo, synapse, tmp_path, llm=llm_section(stub))
    stub.script(*(s.text(f"answer {n}") for n in range(1, 4)))
    async with bot:
        for room in (group, direct):
            await until(lambda: robo.user_id in person.members(room), "the join")  # noqa: B023
        other.say(group, "just chatting among people")
        person.say(group, "helper bee, what is the capital of France?")
        (first,) = await until(lambda: person.messages(group, robo.user_id), "the name")
        assert first["content"]["body"] == "answer 1"
        reply: dict[str, Any] = {"msgtype": "m.text", "body": "and of Spain?"}
        reply["m.relates_to"] = {"m.in_reply_to": {"event_id": first["event_id"]}}
        send(other, group, reply)
        await until(lambda: len(person.messages(group, robo.user_id)) == 2, "the reply")
        person.say(direct, "hello there")
        (private,) = await until(lambda: person.messages(direct, robo.user_id), "the direct")
        assert private["content"]["body"] == "answer 3"
        await asyncio.sleep(1)  # an answer to the chatting would arrive by now
    assert bodies(person, group, robo) == ["answer 1", "answer 2"]
    assert stub.pending == 0


async def test_in_a_thread_the_bot_answers_there_and_the_fallback_is_no_reply_to_it(
    synapse: Synapse, stub, tmp_path: Path
) -> None:
    """Asked in a thread (m.thread), the bot answers in the thread. The next message
    there carries the thread's fallback m.in_reply_to (the thread's latest event: the
    bot's answer) with is_falling_back: people talking on in the thread are not
    answering the bot, and it stays quiet."""
    fay, gus, robo = (synapse.register(name) for name in ("fay", "gus", "threadbot"))
    person, other = synapse.client(fay), synapse.client(gus)
    group = person.create_room(invite=[gus.user_id, robo.user_id])
    other.join(group)
    bot, _ = bot_as(robo, synapse, tmp_path, llm=llm_section(stub))
    stub.script(s.text("the 14th"))
    async with bot:
        await until(lambda: robo.user_id in person.members(group), "the join")
        root = person.say(group, "launch planning")

        def in_thread(body: str, latest: str) -> dict[str, Any]:
            relation = {"rel_type": "m.thread", "event_id": root, "is_falling_back": True}
            relation["m.in_reply_to"] = {"event_id": latest}
            return {"msgtype": "m.text", "body": body, "m.relates_to": relation}

        asked = send(other, group, in_thread("threadbot: when is the launch?", root))
        (answer,) = await until(lambda: person.messages(group, robo.user_id), "the answer")
        relation = answer["content"]["m.relates_to"]
        assert answer["content"]["body"] == "the 14th"
        assert relation["rel_type"] == "m.thread" and relation["event_id"] == root
        assert relation["m.in_reply_to"] == {"event_id": asked}
        assert relation["is_falling_back"] is False
        send(person, group, in_thread("great, I'll book the room", answer["event_id"]))
        await until(lambda: len(person.messages(group, fay.user_id)) == 2, "the thread")
        await asyncio.sleep(1.5)  # an answer to it would arrive by now
    assert bodies(person, group, robo) == ["the 14th"]
    assert stub.pending == 0


def kept_reactions(tmp_path: Path) -> int:
    engine = create_engine(f"sqlite:///{tmp_path / 'bot.db'}")
    try:
        with engine.connect() as connection:
            return int(connection.execute(text("SELECT count(*) FROM reactions")).scalar_one())
    finally:
        engine.dispose()


async def test_reactions_are_counted_and_a_redacted_one_is_taken_back(
    synapse: Synapse, tmp_path: Path
) -> None:
    """m.reaction events count in the offline digest, in the room's order with its
    messages; redacting a reaction takes it back."""
    ida, jon, kai, robo = (synapse.register(name) for name in ("ida", "jon", "kai", "reactbot"))
    person, second, third = synapse.client(ida), synapse.client(jon), synapse.client(kai)
    group = person.create_room(invite=[jon.user_id, kai.user_id, robo.user_id])
    second.join(group)
    third.join(group)
    bot, _ = bot_as(robo, synapse, tmp_path)

    def react(client: Client, target: str, key: str) -> str:
        relation = {"rel_type": "m.annotation", "event_id": target, "key": key}
        path = f"/rooms/{quote(group)}/send/m.reaction/{uuid.uuid4().hex}"
        return str(client.call("PUT", path, {"m.relates_to": relation})["event_id"])

    async with bot:
        await until(lambda: robo.user_id in person.members(group), "the join")
        said = person.say(group, "launch moved to friday")
        react(second, said, "👍")
        react(third, said, "👍")
        party = react(third, said, "🎉")
        # Counted first (else the homeserver may hand the bot the reaction already
        # redacted, with nothing in it): the redaction must take it back.
        await until(lambda: kept_reactions(tmp_path) == 3 or None, "the reactions")
        path = f"/rooms/{quote(group)}/redact/{quote(party)}/{uuid.uuid4().hex}"
        third.call("PUT", path, {})
        person.say(group, "/summary")
        (digest,) = await until(lambda: person.messages(group, robo.user_id), "the digest")
    line = next(line for line in digest["content"]["body"].splitlines() if "launch moved" in line)
    assert line.endswith("(👍 2)")


async def test_a_long_downtime_loses_no_message(synapse: Synapse, tmp_path: Path) -> None:
    fran, ivy = synapse.register("fran"), synapse.register("ivy")
    person = synapse.client(fran)
    room = person.create_room(invite=[ivy.user_id])

    def running() -> Bot:
        # A timeline of 3 per sync: eight missed messages overflow it, as a long outage
        # overflows the default 100.
        return bot_as(ivy, synapse, tmp_path, matrix={"timeline_limit": 3})[0]

    async with running():
        await until(lambda: ivy.user_id in person.members(room), "the join")
        person.say(room, "/remind in 10 minutes first")
        await until(lambda: person.messages(room, ivy.user_id), "the first answer")
    for n in range(1, 9):  # said while the bot is down: more than one sync carries
        person.say(room, f"/remind in {n + 10} minutes missed{n}")
    async with running():
        await until(lambda: any("missed8" in b for b in bodies(person, room, ivy)), "the newest")
        await asyncio.sleep(1)  # anything answered twice would arrive by now
    said = bodies(person, room, ivy)
    assert len(said) == 9
    for n in range(1, 9):
        assert sum(f"missed{n}" in b for b in said) == 1, said


def asked(body: dict[str, Any]) -> str:
    """The newest user message in a Chat Completions request."""
    return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])


async def test_a_slow_answer_holds_up_no_other_room(
    synapse: Synapse, stub: s.StubLLM, tmp_path: Path
) -> None:
    gil, hal, jo = (synapse.register(name) for name in ("gil", "hal", "jo"))
    person, other = synapse.client(gil), synapse.client(hal)
    slow_room = person.create_room(invite=[jo.user_id])
    fast_room = other.create_room(invite=[jo.user_id])
    bot, _ = bot_as(jo, synapse, tmp_path, llm=llm_section(stub))
    stub.fallback = lambda body: (
        s.text("thought long", delay=8) if "slow" in asked(body) else s.text("quick")
    )
    async with bot:
        for room, client in ((slow_room, person), (fast_room, other)):
            await until(lambda: jo.user_id in client.members(room), "the join")  # noqa: B023
        person.say(slow_room, "a slow question")
        await until(lambda: len(stub.requests) == 1, "the slow question to reach the model")
        for n in range(1, 4):
            other.say(fast_room, f"/remind in {n + 10} minutes step{n}")
        other.say(fast_room, "a fast question")
        # The other room is answered, in order, while the slow answer is still pending.
        await until(lambda: len(bodies(other, fast_room, jo)) == 4, "the other room")
        assert person.messages(slow_room, jo.user_id) == []
        said = bodies(other, fast_room, jo)
        assert [n for n in range(1, 4) for b in said if f"step{n}" in b] == [1, 2, 3]
        assert said[3] == "quick"
        await until(lambda: bodies(person, slow_room, jo) == ["thought long"], "the slow answer")


async def test_a_homeserver_restart_loses_no_message_and_no_answer(
    synapse: Synapse, stub: s.StubLLM, tmp_path: Path
) -> None:
    kim, lu = synapse.register("kim"), synapse.register("lu")
    person = synapse.client(kim)
    room = person.create_room(invite=[lu.user_id])
    bot, adapter = bot_as(lu, synapse, tmp_path, llm=llm_section(stub))
    stub.fallback = s.text("answered across the restart", delay=3)
    async with bot:
        await until(lambda: lu.user_id in person.members(room), "the join")
        person.say(room, "what did we decide?")
        await until(lambda: len(stub.requests) == 1, "the question to reach the model")
        # The homeserver goes down while the model thinks: the reply cannot be sent.
        await asyncio.to_thread(synapse.stop)
        await until(lambda: not adapter.status()["connected"], "the lost connection")
        await asyncio.sleep(3)  # the model has answered; sending it has failed by now
        await asyncio.to_thread(synapse.start, ensure_synapse())
        person.say(room, "/remind in 10 minutes after the restart")
        await until(lambda: len(bodies(person, room, lu)) == 2, "both answers", within=60)
        assert adapter.status()["connected"]
        await asyncio.sleep(1)  # anything sent twice would arrive by now
    said = bodies(person, room, lu)
    assert said[0] == "answered across the restart"
    assert "after the restart" in said[1]
    assert len(said) == 2
    assert len(stub.requests) == 1  # resent, not asked again
