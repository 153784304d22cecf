"""Discord reactions (the raw MESSAGE_REACTION_ADD / _REMOVE events, under the reactions
intents the adapter asks for) through the Discord adapter, a real Bot and SQLite file,
against the local Discord REST API and gateway on real sockets: each person's emoji
counted once on the message it names, a repeated event once, the bot's own ignored, a
taken-back one gone, a server's own emoji by its name; in a thread and a DM, in the chat
of their message. The offline digest of /summary shows the counts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from tests.conftest import eventually
from tests.digest_reading import counts, engaged
from tests.fake_discord import FakeDiscord
from tests.fake_discord_guild import (
    CHANNEL,
    DIRECT_MESSAGE_REACTIONS,
    GUILD_MESSAGE_REACTIONS,
    THREAD,
    TOKEN,
    USERS,
)
from tests.http_harness import Api, Servers

DM = "1400000000000000001"  # a DM channel: no guild
PARROT = "1500000000000000001"  # the server's own emoji "partyparrot"


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    api = FakeDiscord()
    api.server.start()
    yield api
    api.server.stop()


async def start(servers: Servers, fake: FakeDiscord) -> Api:
    discord = {"token": TOKEN, "api_url": fake.api_url}
    api = await servers.start(adapters={"discord": discord})
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


async def logged(api: Api, channel: str, count: int) -> None:
    """Wait until the chat's log holds `count` messages (a reaction names a logged one)."""

    async def holds() -> bool:
        history = await api.client.get(f"/v1/chats/dc:{channel}/messages")
        return len(history.json()["messages"]) >= count

    await eventually(holds, within=10)


async def summary(fake: FakeDiscord, channel: str = CHANNEL) -> list[str]:
    """The engaged-messages lines of the offline digest /summary answers in `channel`."""
    count = len(fake.posted())
    fake.say("/summary", user="ada", channel=channel)
    await eventually(lambda: len(fake.posted()) > count, within=10)
    digest = str(fake.posted()[count]["content"])
    assert "offline digest" in digest  # no model configured
    return engaged(digest)


async def test_reactions_are_counted_once_per_person_and_emoji_in_the_digest(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    [identify] = fake.identifies
    assert identify["intents"] & GUILD_MESSAGE_REACTIONS  # asked for: not privileged
    assert identify["intents"] & DIRECT_MESSAGE_REACTIONS
    launch = fake.say("launch moved to friday", user="alice")
    which = fake.say("which time?", user="bob")
    ten = fake.say("10 am", user="ada")
    await logged(api, CHANNEL, 3)
    assert fake.posted() == []  # none was for the bot: only logged

    fake.react(launch, "👍", user="bob")
    fake.react(launch, "👍", user="ada")
    fake.react(launch, "partyparrot", user="carol", custom_id=PARROT)
    fake.react(launch, "👍", user="bob")  # the same reaction again: counted once
    fake.react(launch, "👍", user="bot")  # the bot's own: not counted
    fake.react(which, "👀", user="alice")
    fake.react(ten, "🎉", user="bob")
    ghost = {"id": "1600000000000000001", "channel_id": CHANNEL, "author": launch["author"]}
    fake.react(ghost, "👍", user="bob")  # a message never logged: nothing to count it on

    lines: list[str] = []

    async def all_counted() -> bool:
        nonlocal lines
        lines = await summary(fake)
        return counts(lines, "10 am") is not None and counts(lines, "which time?") is not None

    await eventually(all_counted, within=10, every=0.3)
    assert re.fullmatch(
        r"• Alice, \d\d:\d\d: “launch moved to friday” \(👍 2 :partyparrot: 1\)", lines[0]
    )
    assert counts(lines, "which time?") == "(👀 1)"
    assert counts(lines, "10 am") == "(🎉 1)"

    # Bob takes his 🎉 back: "10 am" has nothing left to be listed for.
    fake.react(ten, "🎉", user="bob", remove=True)

    async def taken_back() -> bool:
        nonlocal lines
        lines = await summary(fake)
        return counts(lines, "10 am") is None

    await eventually(taken_back, within=10, every=0.3)
    assert counts(lines, "launch moved to friday") == "(👍 2 :partyparrot: 1)"
    assert counts(lines, "which time?") == "(👀 1)"


async def test_a_reaction_in_a_thread_or_a_dm_counts_in_the_chat_of_its_message(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    fake.say("plans are in the thread", user="carol")
    plan: dict[str, Any] = fake.say("plan b: ship on monday", user="bob", channel=THREAD)
    await logged(api, CHANNEL, 1)
    await logged(api, THREAD, 1)
    fake.react(plan, "✅", user="alice")
    lines: list[str] = []

    async def in_thread() -> bool:
        nonlocal lines
        lines = await summary(fake, THREAD)
        return counts(lines, "plan b: ship on monday") is not None

    await eventually(in_thread, within=10, every=0.3)
    assert counts(lines, "plan b: ship on monday") == "(✅ 1)"  # the thread's own chat
    assert await summary(fake, CHANNEL) == []  # not its channel's

    # /summary is for groups: the DM's reaction is looked for where it is kept.
    note = fake.say("note to self: renew the domain", user="ada", channel=DM)
    await logged(api, DM, 1)
    fake.react(note, "📌", user="ada")
    fake.react(note, "📌", user="bot")
    expected = [(f"dc:{DM}", note["id"], f"dc:{USERS['ada']['id']}", "📌")]
    await eventually(lambda: kept(servers, DM) == expected, within=10, every=0.1)


def kept(servers: Servers, channel: str) -> list[tuple[str, str, str, str]]:
    """The reactions the bot's database holds for the chat of `channel`."""
    engine = create_engine(f"sqlite:///{servers.tmp_path / 'bot.db'}")
    try:
        with engine.connect() as db:
            rows = db.execute(
                text(
                    "SELECT chat_id, message_id, sender_id, emoji FROM reactions"
                    " WHERE chat_id = :chat ORDER BY id"
                ),
                {"chat": f"dc:{channel}"},
            )
            return [(str(a), str(b), str(c), str(d)) for a, b, c, d in rows]
    finally:
        engine.dispose()


def test_a_reaction_event_as_the_bot_sees_it() -> None:
    from discord import PartialEmoji, RawReactionActionEvent

    from groupmate.bot.adapters.discord_events import reaction_of
    from tests.fake_discord_guild import BOT, GUILD

    def event(emoji: PartialEmoji, kind: Any = "REACTION_ADD", **data: Any) -> Any:
        fields = {"message_id": "17", "channel_id": DM, "user_id": USERS["ada"]["id"], "type": 0}
        return RawReactionActionEvent(fields | data, emoji, kind)  # type: ignore[arg-type]

    thumbs = PartialEmoji(name="👍")
    dm = reaction_of(event(thumbs), me=int(BOT))
    assert dm is not None
    assert (dm.chat_id, dm.chat_type, dm.sender_id) == (
        f"dc:{DM}",
        "private",
        f"dc:{USERS['ada']['id']}",
    )
    assert (dm.message_id, dm.emoji, dm.added) == ("17", "👍", True)
    parrot = PartialEmoji(name="partyparrot", id=int(PARROT))
    taken = reaction_of(
        event(parrot, "REACTION_REMOVE", channel_id=THREAD, guild_id=GUILD), me=int(BOT)
    )
    assert taken is not None
    assert (taken.chat_id, taken.chat_type) == (f"dc:{THREAD}", "group")
    assert (taken.emoji, taken.added) == (":partyparrot:", False)
    assert reaction_of(event(thumbs, user_id=BOT), me=int(BOT)) is None  # the bot's own
