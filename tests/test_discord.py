"""The Discord adapter (discord.py over the gateway) against a local Discord REST API and
gateway on real sockets, with a real Bot, SQLite file and the stub model: mentions by the
event's mention entities, Discord replies, reminders that mention people as `<@id>` with
allowed_mentions, snooze by a reply to the reminder, each message acted on once (a repeat,
a RESUME's replay, after a restart), nonces that make a retried send show once, answers
tried again, 429s waited out. The connection itself: test_discord_gateway.py."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from groupmate.storage import Member, OutgoingMessage
from groupmate.testing.stub_llm import StubLLM, calls, text
from tests.conftest import eventually
from tests.fake_discord import FakeDiscord
from tests.fake_discord_guild import BOT, BOT_ROLE, CHANNEL, THREAD, TOKEN, USERS
from tests.http_harness import (
    Api,
    Servers,
    delivered_ids,
    fell_due_while_down,
    llm_section,
    make_due,
)

BOB = USERS["bob"]["id"]
ALICE = USERS["alice"]["id"]
ADA = USERS["ada"]["id"]  # an admin (Manage Server)
DM = "1400000000000000001"  # a DM channel: no guild


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    api = FakeDiscord()
    api.server.start()
    yield api
    api.server.stop()


async def start(servers: Servers, fake: FakeDiscord, **sections: Any) -> Api:
    discord = {"token": TOKEN, "api_url": fake.api_url}
    api = await servers.start(adapters={"discord": discord}, **sections)
    await eventually(lambda: api.bot.adapters[0].status()["connected"], within=10)
    return api


async def posted(fake: FakeDiscord, count: int, within: float = 10.0) -> list[dict[str, Any]]:
    await eventually(lambda: len(fake.posted()) >= count, within=within)
    return fake.posted()


async def test_a_mention_sets_a_reminder_that_mentions_its_person_and_a_reply_snoozes_it(
    fake: FakeDiscord, servers: Servers, stub: StubLLM
) -> None:
    stub.script(
        calls(("reminder_set", {"when": "in 10 minutes", "content": "stretch", "who": ["@Bob"]}))
    )
    api = await start(servers, fake, llm=llm_section(stub), reminders={"fast_path": False})
    asked = fake.say(f"<@{BOT}> remind <@{BOB}> in 10 minutes to stretch")
    (reply,) = await posted(fake, 1)
    assert reply["channel_id"] == CHANNEL and "Reminder #1 for @Bob" in reply["content"]
    # A Discord reply to the message, pinging only its author.
    assert str(reply["_body"]["message_reference"]["message_id"]) == asked["id"]
    assert reply["_body"]["allowed_mentions"] == {"parse": [], "replied_user": True}
    [request] = stub.requests
    assert "remind @Bob in 10 minutes to stretch" in str(request["messages"][-1]["content"])
    assert api.bot.reminders is not None

    await make_due(api.bot)
    fired = (await posted(fake, 2))[1]
    assert f"<@{BOB}>" in fired["content"] and "stretch" in fired["content"]
    # Bob is notified, and Alice, who set it (the asker is always mentioned).
    assert f"<@{ALICE}>" in fired["content"]
    assert sorted(fired["_body"]["allowed_mentions"]["users"]) == [int(ALICE), int(BOB)]
    assert "message_reference" not in fired["_body"]  # a new message, not a reply
    # A reply to the reminder snoozes it: its id came back from the send.
    assert fired["id"] in await delivered_ids(api.bot)
    fake.say("snooze 10m", user="bob", reply_to=fired["id"])
    answer = (await posted(fake, 3))[2]
    assert answer["content"].startswith("💤 Snoozed #1")


async def test_remind_us_pings_the_member_who_asked_and_an_admins_pings_everyone(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    fake.say(f"<@{BOT}> /remind us in 10 minutes to stretch", user="bob")
    assert "mentioning only you" in (await posted(fake, 1))[0]["content"]
    fake.say(f"<@{BOT}> /remind everyone in 10 minutes to run", user="ada")
    assert "Reminder #2 for everyone" in (await posted(fake, 2))[1]["content"]
    await make_due(api.bot)
    fired = {m["content"]: m["_body"]["allowed_mentions"] for m in (await posted(fake, 4))[2:]}
    # Discord's own mentions: <@id> with the user allowed, @everyone allowed only then.
    assert fired == {
        f"⏰ Reminder for <@{BOB}>: stretch": {"parse": [], "users": [int(BOB)]},
        f"@everyone ⏰ Reminder for everyone (set by <@{ADA}>): run": {
            "parse": ["everyone"],
            "users": [int(ADA)],
        },
    }


async def test_a_message_not_addressed_to_the_bot_is_only_logged_and_threads_get_replies(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    fake.say("lunch at noon?")
    fake.say(f"<@{BOB}> /reminders?")  # a mention of someone else
    fake.say(rf"what does \<@{BOT}> do?")  # escaped: the bot's id, but no mention
    fake.say("ask @groupmate about it")  # the name typed as text: no mention entity
    asked = fake.say(f"<@!{BOT}> /reminders", channel=THREAD)  # a nickname mention
    (reply,) = await posted(fake, 1)  # the addressed one only
    assert reply["content"].startswith("There are no active reminders")
    assert reply["channel_id"] == THREAD  # in the thread, as a reply to the message
    assert str(reply["_body"]["message_reference"]["message_id"]) == asked["id"]
    history = await api.client.get(f"/v1/chats/dc:{CHANNEL}/messages")
    texts = [m["text"] for m in history.json()["messages"]]
    assert "lunch at noon?" in texts  # in the history the model reads
    await asyncio.sleep(0.3)
    assert len(fake.posted()) == 1
    # A Discord reply to the bot's message (no mention, no command) is for the bot.
    fake.say("and what can you do?", user="bob", channel=THREAD, reply_to=reply["id"])
    answer = (await posted(fake, 2))[1]
    assert "commands" in answer["content"]  # answered (no model here: commands to try)
    fake.say("/reminders")  # the prefix: a command needs no mention
    assert (await posted(fake, 3))[2]["content"].startswith("There are no active reminders")


async def test_a_mention_of_the_bots_role_is_a_mention_of_the_bot(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    fake.say(f"<@&{BOT_ROLE}> /reminders")  # what Discord's autocomplete may pick
    (reply,) = await posted(fake, 1)
    assert reply["content"].startswith("There are no active reminders")
    history = (await api.client.get(f"/v1/chats/dc:{CHANNEL}/messages")).json()["messages"]
    assert history[0]["text"] == "@groupmate /reminders"


async def test_each_message_is_acted_on_once_repeated_resumed_or_after_a_restart(
    fake: FakeDiscord, servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    api = await start(servers, fake)
    adapter = api.bot.adapters[0]
    first = fake.say(f"<@{BOT}> /remind in 2 hours stretch")
    await posted(fake, 1)
    fake.redeliver(first)  # the same message once more
    # The gateway drops and is down a while: discord.py resumes the session, and
    # Discord replays what it missed (a message said meanwhile).
    fake.refuse_gateway = True
    fake.drop()
    await eventually(lambda: adapter.status()["last_error"] == "could not connect", within=10)
    assert adapter.status()["state"] == "reconnecting"
    said = [r.getMessage() for r in caplog.records if r.name == "groupmate.bot.adapters.discord"]
    assert said[-2:] == [  # each reason as it was: not the old close code again
        "discord: gateway: closed with 4000; reconnecting",
        "discord: could not connect; reconnecting",
    ]
    missed = fake.say(f"<@{BOT}> /remind in 3 hours drink water")
    fake.refuse_gateway = False
    await eventually(lambda: adapter.status()["state"] == "connected", within=15)
    assert {r["session_id"] for r in fake.resumes} == {"session-1"}
    assert len(fake.identifies) == 1  # resumed, not a new session
    second = (await posted(fake, 2))[1]
    assert "drink water" in second["content"]
    assert str(second["_body"]["message_reference"]["message_id"]) == missed["id"]
    await servers.aclose()
    # Said while nobody is connected: session-1 keeps it, a RESUME of it would replay it.
    fake.say(f"<@{BOT}> /remind in 4 hours read", channel=THREAD)
    resumed = len(fake.resumes)
    await start(servers, fake)  # the same database
    assert len(fake.identifies) == 2 and len(fake.resumes) == resumed  # a new session
    fake.redeliver(first)  # and the first message once more, after the restart
    fake.say(f"<@{BOT}> /reminders")
    listing = (await posted(fake, 3))[2]
    assert "drink water" in listing["content"] and "read" not in listing["content"]
    await asyncio.sleep(0.3)
    assert len(fake.posted()) == 3  # two answers and one listing: nothing replayed


async def test_a_reminder_due_while_the_bot_was_down_comes_once_late_with_the_note(
    fake: FakeDiscord, servers: Servers
) -> None:
    await start(servers, fake)
    fake.say(f"<@{BOT}> /remind in 2 hours stretch")
    await posted(fake, 1)
    await servers.aclose()
    fell_due_while_down(servers)
    await start(servers, fake)
    fired = (await posted(fake, 2))[1]["content"]
    assert "stretch" in fired and "after downtime" in fired
    await asyncio.sleep(0.5)
    assert len(fake.posted()) == 2  # once


async def test_a_retried_reminder_send_shows_once_through_its_nonce(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    adapter = api.bot.adapters[0]
    reminder = OutgoingMessage(
        chat_id=f"dc:{CHANNEL}",
        text="⏰ @Bob: stretch",
        reminder_id="r1",
        occurrence=datetime(2026, 1, 1, 9, tzinfo=UTC),
        people=(Member(f"dc:{BOB}", "Bob"),),
    )
    fake.lose_answers = 1  # made, but the answer is lost (502): discord.py posts again
    first = await adapter.send(reminder)
    again = await adapter.send(reminder)  # the reminder engine's retry, all the same
    assert len(fake.bodies) == 3  # three posts on the wire ...
    assert [m["id"] for m in fake.posted()] == [first]  # ... one message
    assert again == first
    nonce = fake.bodies[0]["nonce"]
    assert len(nonce) <= 25 and fake.bodies[0]["enforce_nonce"] is True
    assert {b["nonce"] for b in fake.bodies} == {nonce}
    other = OutgoingMessage(
        chat_id=f"dc:{CHANNEL}", text="⏰ tea", reminder_id="r1",
        occurrence=datetime(2026, 1, 2, 9, tzinfo=UTC),
    )  # fmt: skip
    assert await adapter.send(other) != first  # another occurrence: another message


async def test_an_answer_whose_send_fails_is_tried_again_and_shows_once(
    fake: FakeDiscord, servers: Servers
) -> None:
    """Discord delivered the message once: the answer is the adapter's to get through."""
    await start(servers, fake)
    fake.refused = 1  # 503: nothing made (discord.py does not retry a 503 itself)
    fake.lose_answers, fake.lost_status = 1, 503  # made, but the answer is lost
    asked = fake.say(f"<@{BOT}> /reminders")
    await eventually(lambda: len(fake.bodies) == 3, within=10)  # after 1 s and 2 s
    (reply,) = fake.posted()  # one message: the third try got the one the second made
    assert str(reply["_body"]["message_reference"]["message_id"]) == asked["id"]
    nonces = {b["nonce"] for b in fake.bodies}
    assert len(nonces) == 1 and all(b["enforce_nonce"] for b in fake.bodies)
    await asyncio.sleep(0.3)
    assert len(fake.bodies) == 3


async def test_a_long_answer_is_split_under_discords_limit_and_pings_once(
    fake: FakeDiscord, servers: Servers, stub: StubLLM
) -> None:
    long = "\n\n".join(f"Paragraph {n}: " + "word " * 150 for n in range(3))  # ~2300
    stub.script(text(long))
    await start(servers, fake, llm=llm_section(stub))
    fake.say(f"<@{BOT}> tell me everything")
    first, second = await posted(fake, 2)
    assert len(first["content"]) <= 2000 and len(second["content"]) <= 2000
    assert "Paragraph 1" in first["content"] and "Paragraph 2" in second["content"]
    pings = [m["_body"]["allowed_mentions"].get("replied_user") for m in (first, second)]
    assert pings == [True, None]  # the asker is pinged once (left out: not pinged)
    assert first["_body"]["nonce"] != second["_body"]["nonce"]


async def test_a_429_is_waited_out(fake: FakeDiscord, servers: Servers) -> None:
    await start(servers, fake)
    fake.rate_limited = 1  # the first reply is answered 429, retry_after 1 s
    began = time.monotonic()
    fake.say(f"<@{BOT}> /reminders")
    await posted(fake, 1, within=15)
    assert time.monotonic() - began >= 1.0  # waited out, then sent once
    assert len(fake.bodies) == 2


async def test_a_send_given_up_during_a_global_429_does_not_stall_later_sends(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    adapter = api.bot.adapters[0]
    fake.rate_limited, fake.global_limit = 1, True  # every request waits 1 s
    tea = OutgoingMessage(chat_id=f"dc:{CHANNEL}", text="⏰ tea")
    with pytest.raises(TimeoutError):  # the reminder engine gives up on a send so
        await asyncio.wait_for(adapter.send(tea), 0.3)
    coffee = OutgoingMessage(chat_id=f"dc:{CHANNEL}", text="⏰ coffee")
    await asyncio.wait_for(adapter.send(coffee), 10)  # not stuck behind the global lock
    await posted(fake, 2)  # and the given-up one went out after all, once
    assert sorted(m["content"] for m in fake.posted()) == ["⏰ coffee", "⏰ tea"]


async def test_a_dm_is_a_private_chat_answered_without_a_mention(
    fake: FakeDiscord, servers: Servers
) -> None:
    api = await start(servers, fake)
    fake.say("hello", user="ada")  # in the guild: only logged
    fake.say("hello", channel=DM, user="ada")  # in a DM: for the bot
    (reply,) = await posted(fake, 1)
    assert reply["channel_id"] == DM and "commands" in reply["content"]
    await asyncio.sleep(0.3)  # the DM answer's own MESSAGE_CREATE is read back too
    assert api.bot.adapters[0].status()["connected"] and len(fake.identifies) == 1
    assert len(fake.posted()) == 1


async def test_members_with_manage_server_are_admins(fake: FakeDiscord, servers: Servers) -> None:
    api = await start(servers, fake)
    change = f"<@{BOT}> /settings remind_others admins"
    fake.say(change, user="alice")
    refused = (await posted(fake, 1))[0]["content"]
    fake.say(change, user="ada")  # her role has Manage Server
    changed = (await posted(fake, 2))[1]["content"]
    assert "admin" in refused.casefold() and "remind_others" not in refused
    assert changed != refused and "admins" in changed
    assert api.bot.reminders is not None
    settings = await api.bot.reminders.settings_of(f"dc:{CHANNEL}")
    assert settings.get("remind_others") == "admins"


async def test_a_name_resolves_to_the_one_member_it_names(
    fake: FakeDiscord, servers: Servers
) -> None:
    await start(servers, fake)
    for user in ("carol", "sam1", "sam2"):
        fake.say("hi all", user=user, channel=THREAD)  # seen in the guild
    fake.say(f"<@{BOT}> /remind @Carol in 2 hours tea")
    created = (await posted(fake, 1))[0]["content"]
    assert "Reminder #1 for @Carol" in created  # seen in the guild's thread
    fake.say(f"<@{BOT}> /remind @Sam in 2 hours tea", channel=THREAD)
    ambiguous = (await posted(fake, 2))[1]["content"]
    assert "Reminder #" not in ambiguous  # two Sams: asked about, never guessed
    fake.say(f"<@{BOT}> /remind @Dave in 2 hours tea")
    assert "Reminder #" not in (await posted(fake, 3))[2]["content"]  # never seen


async def test_a_message_that_arrives_while_stopping_is_logged(
    fake: FakeDiscord, servers: Servers, stub: StubLLM, caplog: pytest.LogCaptureFixture
) -> None:
    """Discord will not send it again: the log says which one went unread."""
    stub.script(text("done", delay=1.0))
    await start(servers, fake, llm=llm_section(stub))
    fake.say(f"<@{BOT}> think slowly")
    await eventually(lambda: len(stub.requests) == 1)  # its answer is in flight
    stopping = asyncio.create_task(servers.aclose())
    await asyncio.sleep(0.2)
    late = fake.say(f"<@{BOT}> /reminders")
    await stopping
    assert f"message {late['id']} in {CHANNEL} not read" in caplog.text
    assert [m["content"] for m in fake.posted()] == ["done"]  # the one in flight finished
