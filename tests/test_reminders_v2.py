"""Reminders v2 end to end through the HTTP API with no LLM: remind others, edit, pause,
resume, snooze (by reply and by id) and history, on the real scheduler and database."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import update

from groupmate.storage.models import Reminder
from tests.conftest import eventually
from tests.http_harness import Api, Servers
from tests.receiver import Receiver


async def answered_once(
    say: Callable[[], Awaitable[list[dict[str, Any]]]], start: str
) -> dict[str, Any]:
    """The one answer to `say`, asked again until it starts with `start` (for what the
    bot can answer only once something it writes just after a send is written)."""
    answers: list[dict[str, Any]] = []

    async def answers_so() -> bool:
        (answer,) = await say()
        answers.append(answer)
        return str(answer["text"]).startswith(start)

    await eventually(answers_so, within=10, every=0.05)  # the pace a person retries at
    return answers[-1]


async def fire_now(api: Api, short_id: int, *, snooze: bool = False) -> None:
    """Move one reminder's next time (or, with `snooze`, its pending snooze's: a snooze
    has its reminder's number) to now in the table; the watchdog delivers it."""
    assert api.bot.reminders is not None
    which = Reminder.snooze_of.is_not(None) if snooze else Reminder.snooze_of.is_(None)

    def rewind(session: Any) -> None:
        query = update(Reminder).where(
            Reminder.chat_id == "g1", Reminder.short_id == short_id, Reminder.status == "active"
        )
        query = query.where(which)
        session.execute(query.values(next_fire_at=datetime.now(UTC) - timedelta(seconds=1)))

    await api.bot.reminders.database.write(rewind)


async def test_remind_others_needs_a_member_the_platform_named(servers: Servers) -> None:
    api = await servers.start()
    (unknown,) = await api.say("/remind @bob tomorrow at 9 send the slides")
    assert "can't find @bob" in unknown["text"]
    bob = [{"user_id": "u-bob", "name": "bob"}]
    (named,) = await api.say("/remind @bob tomorrow at 9 send the slides", mentions=bob)
    assert "Reminder #1 for @bob (mentioning you too) set for" in named["text"]
    listed = (await api.client.get("/v1/chats/g1/reminders")).json()
    assert [r["content"] for r in listed] == ["send the slides"]


async def test_remind_everyone_mentions_everyone_only_for_admins_by_default(
    servers: Servers,
) -> None:
    api = await servers.start()
    # A member still gets the group's reminder, mentioning only them.
    (member,) = await api.say("/remind everyone every monday at 9 standup")
    assert member["text"].startswith(
        "⏰ Reminder #1 for this chat, mentioning only you (only group admins "
        "can mention everyone here) set for Mon "
    )
    (allowed,) = await api.say(
        "/remind everyone every monday at 9 standup", sender_id="u-admin", sender_name="Ad"
    )
    assert "Reminder #2 for everyone set for" in allowed["text"]


async def test_edit_pause_resume_and_history(servers: Servers) -> None:
    api = await servers.start()
    await api.say("/remind every monday at 9 send the report")
    (moved,) = await api.say("/edit #1 at 10")
    assert "every Monday at 10:00" in moved["text"] and moved["text"].startswith("✏️")
    (renamed,) = await api.say("/edit #1 send the weekly report")
    assert renamed["text"].endswith("send the weekly report")
    (paused,) = await api.say("/pause 1")
    assert paused["text"].startswith("⏸️ Paused reminder #1 · paused")
    (listed,) = await api.say("/reminders")
    assert "#1 · paused" in listed["text"]
    (resumed,) = await api.say("/resume #1")
    assert resumed["text"].startswith("▶️ Resumed reminder #1 · next Mon")
    (other,) = await api.say("/edit #1 at 11", sender_id="u-bob", sender_name="Bob")
    assert "only they or a group admin can change it" in other["text"]
    (nothing,) = await api.say("/history")
    assert nothing["text"] == "No reminder has gone off in this chat yet."


async def test_snooze_by_reply_fires_again_once(servers: Servers, receiver: Receiver) -> None:
    api = await servers.start(adapters={"webhook": {"outbound_url": receiver.url}})
    receiver.reply_message_id = "platform-msg-7"
    await api.say("/remind every day at 7 take pills")
    await fire_now(api, 1)
    (first,) = await asyncio.to_thread(receiver.wait_for, 1, 10)
    assert first.body["text"] == "⏰ Reminder for @Alice: take pills"
    # The outcome (with the platform's id) is written after the send: until then, the
    # reply is to no reminder the bot knows.
    snoozed = await answered_once(
        lambda: api.say("snooze 1m", reply_to_message_id="platform-msg-7", reply_to_bot=True),
        "💤",
    )
    assert snoozed["text"].startswith("💤 Snoozed #1 until ")
    (listed,) = await api.say("/reminders")
    assert "every day at 07:00" in listed["text"] and "snoozed" in listed["text"]
    await fire_now(api, 1, snooze=True)  # the snooze, #1 as well
    calls = await asyncio.to_thread(receiver.wait_for, 2, 10)
    assert [c.body["text"] for c in calls] == ["⏰ Reminder for @Alice: take pills"] * 2
    service = api.bot.reminders
    assert service is not None

    async def recorded() -> bool:  # the outcome is written after the send
        return len(await service.history("g1")) == 3

    await eventually(recorded)
    (history,) = await api.say("/history")
    lines = history["text"].splitlines()
    assert len(lines) == 4  # heading, the snoozed firing, the snooze, the first firing
    assert lines[1].endswith("#1 take pills · sent")
    assert "snoozed until" in lines[2]
    (again,) = await api.say("/snooze #1 10m")
    assert again["text"].startswith("💤 Snoozed #1 until ")
    (ambiguous,) = await api.say("/snooze 5")
    assert ambiguous["text"] == "Reminder #5 or 5 minutes? Write /snooze #5 or /snooze 5m."


async def test_group_admins_set_who_may_remind_others(servers: Servers) -> None:
    api = await servers.start()
    bob = [{"user_id": "u-bob", "name": "bob"}]
    (shown,) = await api.say("/settings")
    assert shown["text"].startswith("Reminders for other members: members.")
    (denied,) = await api.say("/settings remind_others admins")
    assert denied["text"] == "Only a group admin can change who may set reminders for others."
    (bad,) = await api.say("/settings remind_others nobody", sender_id="u-admin")
    assert "remind_others" in bad["text"] and "Reminder" not in bad["text"]
    (usage,) = await api.say("/settings colour red", sender_id="u-admin")
    assert usage["text"].startswith("Usage: /settings")
    (changed,) = await api.say("/settings remind_others admins", sender_id="u-admin")
    assert changed["text"].startswith("⚙️ Updated. Reminders for other members: admins.")
    (refused,) = await api.say("/remind @bob tomorrow at 9 send the slides", mentions=bob)
    assert refused["text"] == "Only a group admin can set reminders for other members in this chat."
    (allowed,) = await api.say(
        "/remind @bob tomorrow at 9 send the slides", mentions=bob, sender_id="u-admin"
    )
    assert "Reminder #1 for @bob (mentioning you too) set for" in allowed["text"]
    settings = (await api.client.get("/v1/chats/g1/settings")).json()
    assert settings["remind_others"] == "admins"


async def test_a_pending_snooze_follows_edits_and_pause(
    servers: Servers, receiver: Receiver
) -> None:
    api = await servers.start(adapters={"webhook": {"outbound_url": receiver.url}})
    await api.say("/remind every day at 7 take pills")
    await fire_now(api, 1)
    await asyncio.to_thread(receiver.wait_for, 1, 10)
    # The outcome is written just after the send.
    snoozed = await answered_once(lambda: api.say("/snooze #1 30m"), "💤")
    assert snoozed["text"].startswith("💤 Snoozed #1")
    await api.say("/edit #1 take the blue pills")
    listed = (await api.client.get("/v1/chats/g1/reminders")).json()
    assert [(r["short_id"], r["content"]) for r in listed] == [
        (1, "take the blue pills"),  # the snooze, due first, says the new words
        (1, "take the blue pills"),  # and keeps its reminder's number
    ]
    (paused,) = await api.say("/pause #1")
    assert paused["text"].startswith("⏸️ Paused")
    listed = (await api.client.get("/v1/chats/g1/reminders")).json()
    assert [(r["short_id"], r["status"]) for r in listed] == [(1, "paused")]
