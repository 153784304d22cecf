"""Scheduled actions through the real bot (HTTP API, SQLite file, FakeClock): a reminder
that runs /summary, /search-like commands and plugin commands at each occurrence, as its
creator, checked again then; a quiet day said or skipped; no model: the offline digest."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from groupmate.storage import OutgoingMessage
from groupmate.testing.stub_llm import StubLLM, text
from tests.conftest import FakeClock, eventually
from tests.http_harness import Api, Servers, llm_section

CHAT = "rec:1"


class Recorder:
    """The chat platform of `rec:` chats: what the bot posted."""

    def __init__(self) -> None:
        self.sent: list[OutgoingMessage] = []

    async def __call__(self, message: OutgoingMessage) -> str:
        self.sent.append(message)
        return f"rec-{len(self.sent)}"

    def texts(self) -> list[str]:
        return [m.text for m in self.sent]


async def bot_with_recorder(
    servers: Servers, clock: FakeClock, url: str, **sections: Any
) -> tuple[Api, Recorder]:
    api = await servers.start(clock, storage={"url": url}, **sections)
    recorder = Recorder()
    api.bot.on_outgoing(recorder, chat_prefix="rec:")
    return api, recorder


def at(hour: int, minute: int = 0, *, day: int = 21) -> datetime:
    """That wall-clock moment in Berlin (the test config's zone), as UTC."""
    from zoneinfo import ZoneInfo

    return datetime(2026, 11, day, hour, minute, 1, tzinfo=ZoneInfo("Europe/Berlin"))


async def say(api: Api, words: str, **fields: Any) -> str:
    replies = await api.say(words, chat_id=CHAT, **fields)
    return "\n".join(r["text"] for r in replies)


async def test_a_daily_summary_runs_as_its_creator_and_is_audited(
    database_url: str, servers: Servers, stub: StubLLM
) -> None:
    clock = FakeClock()
    api, recorder = await bot_with_recorder(servers, clock, database_url, llm=llm_section(stub))
    created = await say(api, "/remind every day at 18:00 /summary")
    assert "Reminder #1" in created and "▶ /summary" in created
    listed = (await api.client.get(f"/v1/chats/{CHAT}/reminders")).json()
    [reminder] = listed["reminders"] if isinstance(listed, dict) else listed
    assert reminder["action"] == {"command": "summary", "args": ""}
    await say(api, "the launch moves to friday", sender_id="u-bob", sender_name="Bob")
    stub.script(text("- Bob: the launch moves to Friday."))
    clock.set(at(18))
    await eventually(lambda: len(recorder.sent) == 1, within=10)
    [posted] = recorder.texts()
    assert posted.startswith("▶ /summary\n") and "launch moves to Friday" in posted
    [request] = stub.requests
    assert "the launch moves to friday" in str(request["messages"])

    # The outcome is written after the send (never before: a crash between the two
    # resends, it does not lose), so the recorder can see the message first.
    async def last_run() -> Any:
        return (await api.client.get(f"/v1/chats/{CHAT}/reminders")).json()[0]["last_run"]

    async def recorded() -> bool:
        return await last_run() is not None

    await eventually(recorded)
    assert (await last_run())["outcome"] == "sent"
    shown = await say(api, "/reminders")
    assert "▶ /summary" in shown and "(last run Sat 21 Nov 18:00: sent)" in shown
    audited = (await api.client.get("/v1/audit", params={"tool": "summary"})).json()
    [entry] = audited["entries"]
    assert (entry["chat_id"], entry["source"]) == (CHAT, "schedule")
    assert entry["sender_id"] == "u-alice"  # the creator, not anyone else


async def test_a_quiet_day_is_said_or_skipped_as_the_chat_chose(
    database_url: str, servers: Servers
) -> None:
    clock = FakeClock()
    api, recorder = await bot_with_recorder(servers, clock, database_url)
    await say(api, "/remind every day at 18:00 /summary")
    clock.set(at(18))
    await eventually(lambda: len(recorder.sent) == 1, within=10)
    assert recorder.texts()[0].startswith("▶ /summary\nQuiet day: nothing new since ")
    wrong = await say(api, "/settings digest_when_quiet maybe", sender_id="u-admin")
    assert wrong == (
        "That didn't work: digest_when_quiet is post or skip, e.g. /settings "
        "digest_when_quiet skip."
    )
    changed = await say(api, "/settings digest_when_quiet skip", sender_id="u-admin")
    assert "skip" in changed
    clock.set(at(18, day=22))
    history: list[dict[str, Any]] = []

    async def skipped() -> bool:
        history[:] = (await api.client.get(f"/v1/chats/{CHAT}/history")).json()
        return any(e["outcome"] == "skipped_quiet" for e in history)

    await eventually(skipped, within=10)
    assert len(recorder.sent) == 1  # nothing posted the second evening


async def test_without_a_model_a_summary_action_is_the_offline_digest(
    database_url: str, servers: Servers
) -> None:
    clock = FakeClock()
    api, recorder = await bot_with_recorder(servers, clock, database_url)
    await say(api, "/remind every day at 18:00 /summary")
    await say(api, "we agreed to ship on friday", sender_id="u-bob", sender_name="Bob")
    clock.set(at(18))
    await eventually(lambda: len(recorder.sent) == 1, within=10)
    [posted] = recorder.texts()
    assert "(No language model here: the offline digest.)" in posted
    assert "we agreed to ship on friday" in posted  # a decision, quoted


async def scheduled_rows(api: Api) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = (
        await api.client.get("/v1/audit", params={"tool": "summary"})
    ).json()["entries"]
    return [e for e in entries if e["source"] == "schedule"]


async def test_a_quiet_day_and_the_offline_digest_are_audited_as_scheduled_runs(
    database_url: str, servers: Servers
) -> None:
    clock = FakeClock()
    api, recorder = await bot_with_recorder(servers, clock, database_url)
    await say(api, "/remind every day at 18:00 /summary")
    clock.set(at(18))
    await eventually(lambda: len(recorder.sent) == 1, within=10)
    [quiet] = await scheduled_rows(api)
    assert (quiet["chat_id"], quiet["sender_id"], quiet["detail"]) == (CHAT, "u-alice", "quiet day")
    await say(api, "we agreed to ship on friday", sender_id="u-bob", sender_name="Bob")
    clock.set(at(18, day=22))
    await eventually(lambda: len(recorder.sent) == 2, within=10)
    assert "the offline digest" in recorder.texts()[1]
    offline, _ = await scheduled_rows(api)  # newest first
    assert offline["detail"] == "offline digest: No language model here"
    assert offline["outcome"] == "ok" and offline["arguments"] == {"command": "/summary"}


async def test_a_creator_no_longer_allowed_gets_told_instead_of_a_run(
    database_url: str, servers: Servers, stub: StubLLM
) -> None:
    clock = FakeClock()
    api, recorder = await bot_with_recorder(servers, clock, database_url, llm=llm_section(stub))
    await say(api, "/remind every day at 18:00 /summary")
    await say(api, "something to summarize", sender_id="u-bob", sender_name="Bob")
    switched = await say(api, "/tools off summary", sender_id="u-admin")
    assert "summary" in switched
    clock.set(at(18))
    await eventually(lambda: len(recorder.sent) == 1, within=10)
    [posted] = recorder.texts()
    assert "This reminder couldn't run /summary" in posted
    assert stub.requests == []  # nothing ran


@pytest.mark.parametrize(
    ("typed", "said"),
    [
        ("/remind every day at 9 /cancel 3", "/cancel can't run on a schedule"),
        ("/remind every day at 9 /settings remind_others admins", "can't run on a schedule"),
    ],
)
async def test_a_command_that_changes_things_is_not_scheduled(
    database_url: str, servers: Servers, typed: str, said: str
) -> None:
    api, _ = await bot_with_recorder(servers, FakeClock(), database_url)
    answer = await say(api, typed)
    assert said in answer and "/summary" in answer  # says what can be scheduled
    listed = (await api.client.get(f"/v1/chats/{CHAT}/reminders")).json()
    reminders = listed["reminders"] if isinstance(listed, dict) else listed
    assert reminders == []


async def test_words_that_only_look_like_a_command_stay_a_text(
    database_url: str, servers: Servers
) -> None:
    clock = FakeClock()
    api, recorder = await bot_with_recorder(servers, clock, database_url)
    created = await say(api, "/remind tomorrow at 9 /etc/hosts backup")
    assert "▶" not in created and "/etc/hosts backup" in created
    clock.set(at(9, day=22))
    await eventually(lambda: len(recorder.sent) == 1, within=10)
    assert recorder.texts()[0] == "⏰ Reminder for @Alice: /etc/hosts backup"
    # Fired and done: the dashboard's "Any status" still shows it; "active" does not.
    everything = (await api.client.get("/v1/reminders", params={"chat_id": CHAT})).json()
    assert [(r["short_id"], r["status"]) for r in everything] == [(1, "done")]
    active = (await api.client.get("/v1/reminders", params={"status": "active"})).json()
    assert active == []


async def test_a_late_action_says_when_it_was_due(database_url: str, servers: Servers) -> None:
    clock = FakeClock()
    api, recorder = await bot_with_recorder(servers, clock, database_url)
    await say(api, "/remind every day at 18:00 /summary")
    clock.set(at(18) + timedelta(minutes=20))  # down until 18:20: within the daily grace
    await eventually(lambda: len(recorder.sent) == 1, within=10)
    assert recorder.texts()[0].startswith("▶ /summary\n(scheduled 18:00, delivered 18:20")


async def test_a_summary_every_evening_in_plain_words_through_the_model(
    database_url: str, servers: Servers, stub: StubLLM
) -> None:
    from groupmate.testing.stub_llm import calls

    clock = FakeClock()
    api, _ = await bot_with_recorder(servers, clock, database_url, llm=llm_section(stub))
    arguments = {"when": "every day at 18:00", "content": "/summary"}
    stub.script(calls(("reminder_set", arguments)), text("Done: every evening at 6."))
    await say(api, "@groupmate post a summary of the day every evening at 6")
    listed = (await api.client.get(f"/v1/chats/{CHAT}/reminders")).json()
    [reminder] = listed
    assert reminder["action"] == {"command": "summary", "args": ""}
    assert reminder["rule"] == "every day at 18:00"
    [request, *_] = stub.requests
    offered = [tool["function"]["name"] for tool in request.get("tools", [])]
    assert "reminder_set" in offered


async def test_a_weekly_catchup_without_a_model_is_the_offline_catchup(
    database_url: str, servers: Servers
) -> None:
    clock = FakeClock()
    api, recorder = await bot_with_recorder(servers, clock, database_url)
    await say(api, "/remind every day at 18:00 /catchup")
    clock.advance(timedelta(minutes=5))  # Bob asks after Alice last spoke
    await say(api, "@Alice can you send the slides?", sender_id="u-bob", sender_name="Bob")
    clock.set(at(18))
    await eventually(lambda: len(recorder.sent) == 1, within=10)
    [posted] = recorder.texts()
    assert posted.startswith("▶ /catchup\n") and "offline digest" in posted
    assert "can you send the slides?" in posted


async def test_the_rest_api_takes_an_action_instead_of_a_content(
    database_url: str, servers: Servers
) -> None:
    api, _ = await bot_with_recorder(servers, FakeClock(), database_url)
    url = f"/v1/chats/{CHAT}/reminders"
    body = {"when": "every day at 18:00", "created_by": "u-alice"}
    action = {"command": "summary", "args": ""}
    made = await api.client.post(url, json={**body, "action": action})
    assert made.status_code == 201, made.text
    assert (made.json()["action"], made.json()["content"]) == (action, "/summary")
    both = await api.client.post(url, json={**body, "action": action, "content": "tea"})
    assert both.status_code == 422 and "content" in both.text
    bad = await api.client.post(url, json={**body, "action": {"command": ""}})
    assert bad.status_code == 422 and "action" in bad.text
    refused = await api.client.post(url, json={**body, "action": {"command": "cancel"}})
    assert refused.status_code in (400, 409, 422) and "can't run on a schedule" in refused.text


async def test_a_chinese_groups_offline_digest_is_in_chinese(
    database_url: str, servers: Servers
) -> None:
    clock = FakeClock()
    api, recorder = await bot_with_recorder(servers, clock, database_url)
    await say(api, "/提醒 每天晚上6点 /summary")
    await say(api, "我们决定周五上线", sender_id="u-wang", sender_name="王芳")
    await say(api, "好的", sender_id="u-li", sender_name="李雷")
    clock.set(at(18))
    await eventually(lambda: len(recorder.sent) == 1, within=10)
    [posted] = recorder.texts()
    assert "📋 离线摘要" in posted and "我们决定周五上线" in posted
