"""The reminders-v2 tools called by the model, end to end: POST /v1/messages, the stub LLM
through the real SDK in native and in prompt mode, the real SQLite file and scheduler.

Each test asserts what is stored (read back through the REST API) and what the bot
answers, never what the model said.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from groupmate.function_calls.internal_text import COULD_NOT_DO
from groupmate.testing.stub_llm import Reply, StubLLM, calls, text
from tests.conftest import eventually
from tests.http_harness import Api, Servers, llm_section
from tests.receiver import Receiver
from tests.test_reminders_v2 import fire_now
from tests.test_rest_reminders import BOB, create

PILLS = {"type": "daily", "time": "07:00", "content": "pills", "created_by_name": "Alice"}
ADMIN = {"sender_id": "u-admin", "sender_name": "Ad"}  # an admin by the bot's config


@dataclass(frozen=True, slots=True)
class Chat:
    """Chat g1 of a bot whose model answers each message with the scripted tool call."""

    api: Api
    stub: StubLLM
    mode: str

    def call(self, tool: str, arguments: dict[str, Any]) -> Reply:
        """The model's tool call, as native tool_calls or as hermes markup in its text."""
        if self.mode == "native":
            return calls((tool, arguments))
        payload = json.dumps({"name": tool, "arguments": arguments})
        return text(f"<tool_call>\n{payload}\n</tool_call>")

    async def model_calls(self, tool: str, arguments: dict[str, Any], **fields: Any) -> str:
        """Say something to the bot; the model calls `tool`; the bot's answer."""
        self.stub.script(self.call(tool, arguments))
        (reply,) = await self.api.say("@groupmate remind us, please", **fields)
        request = self.stub.requests[-1]
        assert ("tools" in request) == (self.mode == "native")  # the mode under test
        assert self.stub.pending == 0
        answer: str = reply["text"]
        return answer

    async def reminders(self, chat_id: str = "g1") -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = (
            await self.api.client.get(f"/v1/chats/{chat_id}/reminders")
        ).json()
        return listed

    async def by_short_id(self) -> dict[int, dict[str, Any]]:
        """The reminders by number; a snooze, which keeps its reminder's number, is not
        listed in its place."""
        listed = await self.reminders()
        return {r["short_id"]: r for r in listed if r["snooze_of"] is None}

    async def deliver_pills(self, receiver: Receiver) -> dict[str, Any]:
        """Alice's daily "pills" as #1, delivered once, its outcome written."""
        created = await create(self.api, **PILLS)
        await fire_now(self.api, 1)
        await asyncio.to_thread(receiver.wait_for, 1, 10)
        await eventually(lambda: history_is(self.api, ["sent"]))
        return created


async def history_is(api: Api, outcomes: list[str]) -> bool:
    """Whether the chat's delivery history, newest first, has these outcomes."""
    history = (await api.client.get("/v1/chats/g1/history")).json()
    return [entry["outcome"] for entry in history] == outcomes


def weekday_and_time(reminder: dict[str, Any]) -> tuple[int, int, int]:
    """When the reminder fires next, in its zone: (weekday, hour, minute)."""
    fires = datetime.fromisoformat(reminder["next_fire_at"])
    return fires.weekday(), fires.hour, fires.minute


@pytest.fixture(params=["native", "prompt"])
async def chat(
    request: pytest.FixtureRequest, servers: Servers, stub: StubLLM, receiver: Receiver
) -> Chat:
    mode: str = request.param
    api = await servers.start(
        # The structured fields in both modes: prompt mode would show the compact view.
        llm={**llm_section(stub), "tool_mode": mode, "tool_schema": "full"},
        adapters={"webhook": {"outbound_url": receiver.url}},
        # What the model's calls do: the grammar's own fast path is tested elsewhere.
        reminders={"fast_path": False},
    )
    return Chat(api, stub, mode)


async def test_set_for_a_mentioned_member_every_two_weeks(chat: Chat) -> None:
    arguments = {
        "type": "weekly",
        "time": "09:00",
        "weekday": 0,
        "interval": 2,
        "content": "send the report",
        "who": ["@bob"],
    }
    answer = await chat.model_calls("reminder_set", arguments, mentions=[BOB])
    assert answer.startswith("⏰ Reminder #1 for @bob (mentioning you too) set for Mon ")
    assert answer.endswith(", every 2 weeks on Monday at 09:00: send the report")
    (stored,) = await chat.reminders()
    assert (stored["who"], stored["mentions"]) == (["@bob"], [BOB])
    assert (stored["type"], stored["weekday"], stored["interval"], stored["time"]) == (
        "weekly",
        0,
        2,
        "09:00",
    )
    assert (stored["created_by"], stored["content"]) == ("u-alice", "send the report")
    assert weekday_and_time(stored) == (0, 9, 0)


async def test_set_for_a_name_the_platform_did_not_mention_stores_nothing(chat: Chat) -> None:
    arguments = {"type": "daily", "time": "09:00", "content": "water", "who": ["@carol"]}
    answer = await chat.model_calls("reminder_set", arguments, mentions=[BOB])
    assert answer.startswith("I can't find @carol among this chat's members, so nothing was set.")
    assert await chat.reminders() == []


async def test_update_moves_the_rule_changes_the_content_and_who(chat: Chat) -> None:
    created = await create(chat.api, **PILLS)
    moved = await chat.model_calls(
        "reminder_update", {"reminder_id": "1", "type": "weekly", "time": "10:15", "weekday": 4}
    )
    assert moved.startswith("✏️ Updated reminder #1 · next Fri ")
    (stored,) = await chat.reminders()
    assert (stored["id"], stored["rule"], stored["content"]) == (
        created["id"],
        "every Friday at 10:15",
        "pills",
    )
    assert weekday_and_time(stored) == (4, 10, 15)

    await chat.model_calls("reminder_update", {"reminder_id": "#1", "content": "vitamins"})
    (renamed,) = await chat.reminders()
    assert (renamed["rule"], renamed["content"]) == ("every Friday at 10:15", "vitamins")
    assert renamed["next_fire_at"] == stored["next_fire_at"]

    await chat.model_calls("reminder_update", {"reminder_id": "1", "who": ["@bob"]}, mentions=[BOB])
    (readdressed,) = await chat.reminders()
    assert (readdressed["who"], readdressed["mentions"]) == (["@bob"], [BOB])
    assert readdressed["content"] == "vitamins"


async def test_pause_resume_and_delete_by_id(chat: Chat) -> None:
    first = await create(chat.api, **PILLS)
    await create(chat.api, type="daily", time="08:00", content="stand-up")
    paused = await chat.model_calls("reminder_pause", {"reminder_id": "1"})
    assert paused.startswith("⏸️ Paused reminder #1 · paused")
    stored = await chat.by_short_id()
    assert (stored[1]["status"], stored[1]["next_fire_at"]) == ("paused", None)
    assert stored[2]["status"] == "active"

    resumed = await chat.model_calls("reminder_resume", {"reminder_id": "#1"})
    assert resumed.startswith("▶️ Resumed reminder #1 · next ")
    stored = await chat.by_short_id()
    assert (stored[1]["status"], stored[1]["next_fire_at"]) == ("active", first["next_fire_at"])

    deleted = await chat.model_calls("reminder_delete", {"reminder_id": "2"})
    assert deleted == "🗑️ Deleted reminder #2 (every day at 08:00): stand-up"
    assert [r["content"] for r in await chat.reminders()] == ["pills"]


async def test_snooze_after_a_delivery_fires_once_and_shows_in_history(
    chat: Chat, receiver: Receiver
) -> None:
    api = chat.api
    nothing = await chat.model_calls("reminder_history", {})
    assert nothing == "No reminder has gone off in this chat yet."
    created = await chat.deliver_pills(receiver)
    before = datetime.now(UTC)
    snoozed = await chat.model_calls("reminder_snooze", {"reminder_id": "1", "minutes": 30})
    assert snoozed.startswith("💤 Snoozed #1 until ") and snoozed.endswith(": pills")
    stored = await chat.reminders()
    (root,) = [r for r in stored if r["snooze_of"] is None]
    assert root["rule"] == "every day at 07:00"  # the rule stays
    (snooze,) = [r for r in stored if r["snooze_of"] == created["id"]]
    # The same reminder put off: it keeps its number.
    assert (snooze["type"], snooze["content"], snooze["short_id"]) == ("once", "pills", 1)
    due = datetime.fromisoformat(snooze["next_fire_at"])
    after = datetime.now(UTC)
    assert before + timedelta(minutes=30, seconds=-1) <= due <= after + timedelta(minutes=30)

    await fire_now(api, 1, snooze=True)
    delivered = await asyncio.to_thread(receiver.wait_for, 2, 10)
    assert [c.body["text"] for c in delivered] == ["⏰ Reminder for @Alice: pills"] * 2
    assert [r["short_id"] for r in await chat.reminders()] == [1]  # the snooze fired once
    await eventually(lambda: history_is(api, ["sent", "snoozed", "sent"]))
    history = (await chat.model_calls("reminder_history", {})).splitlines()
    assert history[0] == "Recent reminders (Europe/Berlin):"
    assert history[1].endswith("#1 pills · sent") and history[3].endswith("#1 pills · sent")
    assert "#1 pills · snoozed until " in history[2]
    await asyncio.sleep(0.5)  # more than two watchdog rounds: nothing fires again
    assert len(receiver.calls) == 2


async def test_a_snooze_cannot_be_edited_into_a_repeating_rule(
    chat: Chat, receiver: Receiver
) -> None:
    await chat.deliver_pills(receiver)
    await chat.model_calls("reminder_snooze", {"reminder_id": "1", "minutes": 30})
    before = await chat.reminders()
    (snooze,) = [r for r in before if r["snooze_of"]]
    # The snooze by its full id (as a reply to its message names it): it fires once.
    repeating = {"reminder_id": snooze["id"], "type": "daily", "time": "12:00"}
    refused = await chat.model_calls("reminder_update", repeating)
    assert refused == (
        "Reminder #1 is snoozed and fires once more; a snooze can't repeat. "
        "Set a repeating reminder with /remind."
    )
    assert await chat.reminders() == before
    # Before the fix the snooze became daily: snoozing #1 again moved the daily reminder,
    # and the history could no longer be read in this chat.
    await chat.model_calls("reminder_snooze", {"reminder_id": "1", "minutes": 5})
    (snooze,) = [r for r in await chat.reminders() if r["snooze_of"]]
    assert (snooze["short_id"], snooze["type"]) == (1, "once")
    assert await history_is(chat.api, ["snoozed", "sent"])  # one snooze, moved


async def test_a_chat_id_argument_is_refused_and_nothing_changes(chat: Chat) -> None:
    # Both chats have a #1: a forged delete must reach neither.
    for chat_id in ("g1", "g2"):
        await create(chat.api, chat_id, **PILLS)
    before = {chat_id: await chat.reminders(chat_id) for chat_id in ("g1", "g2")}
    forged = [
        ("reminder_set", {"type": "daily", "time": "09:00", "content": "spam", "chat_id": "g2"}),
        ("reminder_delete", {"reminder_id": "1", "chat_id": "g2"}),
    ]
    for tool, arguments in forged:
        # The model insists: the first refusal goes back to it, the second ends the turn.
        chat.stub.fallback = chat.call(tool, arguments)
        answer = await chat.model_calls(tool, arguments)
        assert {chat_id: await chat.reminders(chat_id) for chat_id in before} == before
        # The user gets one plain sentence; the refusal's details went to the model.
        assert answer == COULD_NOT_DO.english
        told = json.dumps(chat.stub.requests[-1]["messages"][-1])
        assert f"invalid arguments for {tool}" in told and "chat_id" in told


async def test_another_chats_reminder_cannot_be_touched_by_id(chat: Chat) -> None:
    before = await create(chat.api, "g2", **PILLS, created_by="u-admin")
    for reference in ("1", before["id"]):
        missing = (
            "There is no active reminder #1 in this chat."
            if reference == "1"
            else "There is no such active reminder in this chat."  # full ids are not shown
        )
        attempts = [
            ("reminder_update", {"reminder_id": reference, "content": "hijacked"}),
            ("reminder_pause", {"reminder_id": reference}),
            ("reminder_delete", {"reminder_id": reference}),
            ("reminder_snooze", {"reminder_id": reference, "minutes": 5}),
        ]
        for tool, arguments in attempts:
            # Its creator, and an admin: only the chat of the message keeps them out.
            assert await chat.model_calls(tool, arguments, **ADMIN) == missing, tool
    assert await chat.reminders("g2") == [before]
    assert await chat.reminders("g1") == []


async def test_a_member_cannot_change_anothers_reminder_an_admin_can(chat: Chat) -> None:
    before = await create(chat.api, **PILLS)
    bob = {"sender_id": "u-bob", "sender_name": "Bob"}
    changes = [
        ("reminder_update", {"reminder_id": "1", "content": "Bob's now"}, "change"),
        ("reminder_update", {"reminder_id": "1", "type": "daily", "time": "11:00"}, "change"),
        ("reminder_pause", {"reminder_id": "1"}, "pause"),
    ]
    for tool, arguments, verb in changes:
        refusal = f"Reminder #1 was set by Alice; only they or a group admin can {verb} it."
        assert await chat.model_calls(tool, arguments, **bob) == refusal, tool
    assert await chat.reminders() == [before]

    await chat.model_calls("reminder_pause", {"reminder_id": "1"}, **ADMIN)
    (paused,) = await chat.reminders()
    assert (paused["status"], paused["created_by"]) == ("paused", "u-alice")


async def test_when_phrases_set_move_and_snooze_exactly(chat: Chat, receiver: Receiver) -> None:
    # The server's real clock: "every monday at 9am" must come out a Monday 09:00.
    weekly = await chat.model_calls(
        "reminder_set", {"when": "every monday at 9am", "content": "send the report"}
    )
    assert weekly.startswith("⏰ Reminder #1 set for Mon ") and "every Monday at 09:00" in weekly
    (stored,) = await chat.reminders()
    assert (stored["rule"], weekday_and_time(stored)) == ("every Monday at 09:00", (0, 9, 0))

    # A bare time keeps the rule: "at 10:30" moves the Monday reminder, not to a one-time.
    await chat.model_calls("reminder_update", {"reminder_id": "1", "when": "at 10:30"})
    (moved,) = await chat.reminders()
    assert (moved["rule"], weekday_and_time(moved)) == ("every Monday at 10:30", (0, 10, 30))
    await chat.model_calls("reminder_update", {"reminder_id": "1", "when": "every friday at 5pm"})
    (friday,) = await chat.reminders()
    assert (friday["rule"], weekday_and_time(friday)) == ("every Friday at 17:00", (4, 17, 0))

    # A phrase and fields that disagree: nothing changes; the model is told to repair.
    chat.stub.script(
        chat.call("reminder_update", {"reminder_id": "1", "when": "at 8", "type": "daily"}),
        text("I need to fix that."),
    )
    (repaired,) = await chat.api.say("@groupmate move it")
    # Nothing was moved, and the model's words do not say so: the user is told plainly.
    assert repaired["text"].startswith("Nothing was set or changed: your message didn't say")
    assert "leave type and time out" in json.dumps(chat.stub.requests[-1]["messages"])
    (unchanged,) = await chat.reminders()
    assert unchanged["next_fire_at"] == friday["next_fire_at"]

    await create(chat.api, **PILLS)
    await fire_now(chat.api, 2)
    await asyncio.to_thread(receiver.wait_for, 1, 10)
    await eventually(lambda: history_is(chat.api, ["sent"]))
    before = datetime.now(UTC)
    snoozed = await chat.model_calls("reminder_snooze", {"reminder_id": "2", "when": "1h"})
    assert snoozed.startswith("💤 Snoozed #2 until ")
    pills = (await chat.by_short_id())[2]
    (snooze,) = [r for r in await chat.reminders() if r["snooze_of"] == pills["id"]]
    due = datetime.fromisoformat(snooze["next_fire_at"])
    assert before + timedelta(minutes=59) <= due <= datetime.now(UTC) + timedelta(minutes=60)


async def test_the_sender_named_by_name_is_me(chat: Chat) -> None:
    answer = await chat.model_calls(
        "reminder_set", {"when": "in 1 hour", "content": "tea", "who": ["@alice"]}
    )
    assert answer.startswith("⏰ Reminder #1 set for ")
    (stored,) = await chat.reminders()
    assert (stored["who"], stored["mentions"]) == (["me"], [])


async def test_a_new_time_passed_as_text_is_sent_back_not_stored(chat: Chat) -> None:
    await create(chat.api, **PILLS)
    as_text = chat.call("reminder_update", {"reminder_id": "1", "content": "pills at 17:00"})
    chat.stub.script(as_text, text("Which time?"))
    (reply,) = await chat.api.say("@groupmate move reminder 1 to friday at 5pm")
    assert reply["text"] == "Which time?"
    assert "the message names a new time" in json.dumps(chat.stub.requests[-1]["messages"])
    (unchanged,) = await chat.reminders()
    assert (unchanged["content"], unchanged["rule"]) == ("pills", "every day at 07:00")


async def test_a_time_the_words_do_not_say_is_sent_back_not_stored(chat: Chat) -> None:
    today = chat.call("reminder_set", {"type": "once", "time": "2026-11-24 15:30", "content": "x"})
    chat.stub.script(today, text("That was yesterday."))
    (reply,) = await chat.api.say("@groupmate remind me yesterday at 3pm to call mom")
    # Not a question back: the grammar's own reason, never words that could read as done.
    assert reply["text"].startswith("Nothing was set: Yesterday is in the past;")
    assert await chat.reminders() == []


@pytest.mark.parametrize(
    ("said", "when", "problem"),
    [
        # A time of day keeps the rule; a model that adds one changes what nobody asked.
        ("把提醒1改到早上8点", "every weekday at 08:00", "keeps the reminder's day and rule"),
        ("move reminder 1 to 10am", "every day at 10", "keeps the reminder's day and rule"),
        ("move reminder 1 to 10am", "11am", "but when '11am' means"),
        ("change #1 to friday at 5pm", "friday at 6pm", "the message asks for Fri"),
        ("change reminder 1 to 7:30", "8:30", "the message asks for 07:30, but when '8:30'"),
    ],
)
async def test_an_edit_to_a_time_the_words_do_not_say_is_sent_back_not_stored(
    chat: Chat, said: str, when: str, problem: str
) -> None:
    await create(chat.api, **PILLS)
    chat.stub.script(chat.call("reminder_update", {"reminder_id": "1", "when": when}), text("?"))
    (reply,) = await chat.api.say(f"@groupmate {said}")
    assert reply["text"] == "?"
    assert problem in json.dumps(chat.stub.requests[-1]["messages"], ensure_ascii=False)
    (unchanged,) = await chat.reminders()
    assert unchanged["rule"] == "every day at 07:00"


@pytest.mark.parametrize(
    ("said", "when", "rule"),
    [
        ("把提醒1改到早上8点", "早上8点", "every day at 08:00"),
        # A bare "7:30" is compared as a time of day only, whatever the hour now: resolved
        # as a new reminder it would be asked about (tonight or tomorrow morning?).
        ("change reminder 1 to 7:30", "7:30", "every day at 07:30"),
    ],
)
async def test_an_edit_with_the_words_the_message_says_is_stored(
    chat: Chat, said: str, when: str, rule: str
) -> None:
    await create(chat.api, **PILLS)
    chat.stub.script(chat.call("reminder_update", {"reminder_id": "1", "when": when}))
    (reply,) = await chat.api.say(f"@groupmate {said}")
    assert reply["text"].startswith("✏️ Updated reminder #1")
    (changed,) = await chat.reminders()
    assert changed["rule"] == rule


@pytest.mark.parametrize(
    ("said", "arguments", "problem"),
    [
        # Seen in the eval: a snooze and a cancel that the model turned into new reminders.
        (
            "remind me again in an hour",
            {"when": "in an hour", "content": "stretch"},
            "the message is about a reminder that exists",
        ),
        (
            "cancel reminder #5",
            {"when": "every tuesday at 19:00", "content": "take pills"},
            "the message is about a reminder that exists",
        ),
        # A time in the message, even without "remind", is the user's time.
        ("ok, do it at 5pm", {"when": "at 6pm", "content": "x"}, "17:00 (Europe/Berlin), but"),
        # A message about something else sets nothing.
        (
            "translate 'good morning' to French",
            {"when": "tomorrow at 10", "content": "say good morning"},
            "the message neither asks for a reminder nor names a time",
        ),
        # A Chinese request's reminder keeps the user's words, untranslated.
        (
            "2小时后提醒我休息",
            {"when": "2小时后", "content": "rest"},
            "content 'rest' is not in their language: use the user's own words ('休息')",
        ),
        (
            "明天上午9点提醒我开会",
            {"when": "明天上午9点", "content": "会议"},
            "content '会议' is not the user's words: use the user's own words ('开会')",
        ),
        # A time the model did not manage to translate: the message's own words to copy.
        (
            "周五下午4点提醒我们发周报",
            {"when": "friday at 5pm", "content": "发周报"},
            "pass the user's time words in when, e.g. when='周五下午4点'",
        ),
    ],
)
async def test_a_new_reminder_the_words_do_not_ask_for_is_sent_back_not_stored(
    chat: Chat, said: str, arguments: dict[str, Any], problem: str
) -> None:
    chat.stub.script(chat.call("reminder_set", arguments), text("?"))
    (reply,) = await chat.api.say(f"@groupmate {said}")
    # The model's "?" stands, or (for a reminder the words do ask for) the grammar's offer.
    assert reply["text"] == "?" or reply["text"].startswith("还没有设置任何提醒。要设置")
    assert problem in json.dumps(chat.stub.requests[-1]["messages"], ensure_ascii=False)
    assert await chat.reminders() == []


async def test_a_time_from_the_earlier_chat_is_not_refused(chat: Chat) -> None:
    arguments = {"when": "tomorrow at 9", "content": "call the plumber"}
    chat.stub.script(chat.call("reminder_set", arguments))
    (reply,) = await chat.api.say("@groupmate yes please, remind me then")
    assert reply["text"].startswith("⏰ Reminder #1 set for ")
    assert reply["text"].endswith(" 09:00 (Europe/Berlin): call the plumber")
