"""The REST API for reminders: GET round-trips what POST takes; PATCH, snooze, pause,
resume, history and the chat's reminder rules, with the same validation as the tools."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from tests.conftest import eventually
from tests.http_harness import Api, Servers
from tests.receiver import Receiver
from tests.test_reminders_v2 import fire_now

BOB = {"user_id": "u-bob", "name": "bob"}
BERLIN = ZoneInfo("Europe/Berlin")
_SERVER_FIELDS = (
    "id",
    "short_id",
    "rule",
    "timezone",
    "next_fire_at",
    "status",
    "snooze_of",
    "last_run",
    "last_at",
)


async def create(api: Api, chat_id: str = "g1", **body: Any) -> dict[str, Any]:
    """A reminder set through the REST API (by Alice unless `created_by` says)."""
    response = await api.client.post(
        f"/v1/chats/{chat_id}/reminders", json={"created_by": "u-alice", **body}
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def test_get_returns_what_post_takes(servers: Servers) -> None:
    api = await servers.start()
    first = await create(
        api,
        type="weekly",
        time="9:00",
        weekday=0,
        interval=2,
        content="send the report",
        who=["me", "@bob"],
        mentions=[BOB],
        created_by_name="Alice",
    )
    (listed,) = (await api.client.get("/v1/chats/g1/reminders")).json()
    assert listed == first
    assert {k: listed[k] for k in ("type", "time", "weekday", "day", "interval")} == {
        "type": "weekly",
        "time": "09:00",
        "weekday": 0,
        "day": None,
        "interval": 2,
    }
    assert listed["who"] == ["me", "@bob"] and listed["mentions"] == [BOB]
    assert listed["rule"] == "every 2 weeks on Monday at 09:00"
    assert (listed["timezone"], listed["status"], listed["created_by"]) == (
        "Europe/Berlin",
        "active",
        "u-alice",
    )
    fires = datetime.fromisoformat(listed["next_fire_at"])
    assert (fires.weekday(), fires.hour, fires.minute) == (0, 9, 0)
    assert fires.utcoffset() == fires.astimezone(BERLIN).utcoffset()

    # What GET says, POSTed again, is the same reminder (but a new one).
    again = {k: v for k, v in listed.items() if k not in _SERVER_FIELDS}
    copy = await create(api, **{**again, "created_by": "u-alice"})
    same = ("type", "time", "weekday", "interval", "content", "who", "mentions", "next_fire_at")
    assert {k: copy[k] for k in same} == {k: listed[k] for k in same}
    assert copy["short_id"] == 2

    one = (await api.client.get(f"/v1/chats/g1/reminders/{copy['short_id']}")).json()
    assert one == copy


async def test_once_reminder_time_round_trips_with_its_date(servers: Servers) -> None:
    api = await servers.start()
    day = (datetime.now(BERLIN) + timedelta(days=3)).date()
    created = await create(api, type="once", time=f"{day} 18:30", content="dinner")
    assert created["time"] == f"{day} 18:30" and created["who"] == ["me"]
    assert created["interval"] is None


async def test_patch_changes_time_rule_and_content_with_create_validation(
    servers: Servers,
) -> None:
    api = await servers.start()
    created = await create(api, type="daily", time="07:00", content="pills")
    url = f"/v1/chats/g1/reminders/{created['id']}"
    moved = await api.client.patch(url, json={"type": "weekly", "time": "10:15", "weekday": 4})
    assert moved.status_code == 200, moved.text
    body = moved.json()
    assert (body["rule"], body["content"], body["id"]) == (
        "every Friday at 10:15",
        "pills",
        created["id"],
    )
    fires = datetime.fromisoformat(body["next_fire_at"])
    assert (fires.weekday(), fires.hour, fires.minute) == (4, 10, 15)
    # The pending timer follows the change: the scheduler plans the new time.
    assert api.bot.reminders is not None
    stored = await api.bot.reminders.get(created["id"])
    assert stored.next_fire_at == fires.astimezone(UTC)

    renamed = await api.client.patch("/v1/chats/g1/reminders/1", json={"content": "vitamins"})
    assert (renamed.json()["content"], renamed.json()["rule"]) == (
        "vitamins",
        "every Friday at 10:15",
    )

    # A merge: only what is sent changes. A new time and day keep the weekly rule.
    merged = await api.client.patch(url, json={"time": "10:30", "weekday": 2})
    assert merged.status_code == 200, merged.text
    assert (merged.json()["type"], merged.json()["rule"]) == ("weekly", "every Wednesday at 10:30")
    merged = await api.client.patch(url, json={"weekday": 4, "time": "10:15"})
    assert merged.json()["rule"] == "every Friday at 10:15"
    # A rule in words without a time keeps the reminder's time (as /edit does).
    ruled = await api.client.patch(url, json={"when": "every monday"})
    assert (ruled.json()["rule"], ruled.json()["content"]) == ("every Monday at 10:15", "vitamins")
    merged = await api.client.patch(url, json={"weekday": 4, "time": "10:15"})
    bad = await api.client.patch(url, json={"type": "weekly", "time": "25:00"})
    assert bad.status_code == 422 and "25:00" in bad.text
    monthly = await api.client.patch(url, json={"type": "monthly", "time": "10:00"})
    assert monthly.status_code == 422 and "day" in monthly.text  # a new type starts afresh
    past = await api.client.patch(url, json={"type": "once", "time": "2020-01-01 10:00"})
    assert past.status_code == 422 and "past" in past.text
    empty = await api.client.patch(url, json={})
    assert empty.status_code == 422 and "nothing to change" in empty.text
    unknown = await api.client.patch(url, json={"colour": "red"})
    assert unknown.status_code == 422
    named = await api.client.patch(url, json={"reminder_id": "2", "content": "x"})
    assert named.status_code == 422
    missing = await api.client.patch("/v1/chats/g1/reminders/9", json={"content": "x"})
    assert missing.status_code == 404
    elsewhere = await api.client.patch(
        f"/v1/chats/g2/reminders/{created['id']}", json={"content": "x"}
    )
    assert elsewhere.status_code == 404
    assert (await api.client.get(url)).json()["content"] == "vitamins"  # nothing half-written


async def test_pause_resume_snooze_and_history_routes(servers: Servers, receiver: Receiver) -> None:
    api = await servers.start(adapters={"webhook": {"outbound_url": receiver.url}})
    created = await create(api, type="daily", time="07:00", content="pills")
    base = f"/v1/chats/g1/reminders/{created['short_id']}"
    early = await api.client.post(f"{base}/snooze")
    assert early.status_code == 409 and "hasn't gone off yet" in early.json()["error"]

    paused = (await api.client.post(f"{base}/pause")).json()
    assert (paused["status"], paused["next_fire_at"]) == ("paused", None)
    resumed = (await api.client.post(f"{base}/resume")).json()
    assert resumed["status"] == "active" and resumed["next_fire_at"] == created["next_fire_at"]

    await fire_now(api, 1)
    await asyncio.to_thread(receiver.wait_for, 1, 10)
    responses: list[httpx.Response] = []

    async def snoozes() -> bool:  # the delivery's outcome is written just after the send
        responses.append(await api.client.post(f"{base}/snooze", params={"minutes": 30}))
        return responses[-1].status_code == 200

    await eventually(snoozes, within=10, every=0.05)
    snoozed = responses[-1].json()
    assert snoozed is not None
    assert snoozed["reminder"]["rule"] == "every day at 07:00"  # the rule stays
    snooze = snoozed["snooze"]
    assert (snooze["type"], snooze["snooze_of"], snooze["content"]) == (
        "once",
        created["id"],
        "pills",
    )
    due = datetime.fromisoformat(snooze["next_fire_at"]) - datetime.now(UTC)
    assert timedelta(minutes=29) < due <= timedelta(minutes=30)
    too_long = await api.client.post(f"{base}/snooze", params={"minutes": 999_999})
    assert too_long.status_code == 422

    history = (await api.client.get("/v1/chats/g1/history")).json()
    assert [h["outcome"] for h in history] == ["snoozed", "sent"]
    assert history[1]["short_id"] == 1 and history[1]["content"] == "pills"
    once = await create(api, type="once", in_minutes=5, content="tea")
    refused = await api.client.post(f"/v1/chats/g1/reminders/{once['id']}/pause")
    assert refused.status_code == 409 and "fires only once" in refused.json()["error"]


async def test_chat_rules_for_reminding_others(servers: Servers) -> None:
    api = await servers.start()
    settings = (await api.client.get("/v1/chats/g1/settings")).json()
    assert (settings["remind_others"], settings["remind_everyone"]) == ("members", "admins")
    bad = await api.client.put("/v1/chats/g1/settings", json={"remind_others": "anyone"})
    assert bad.status_code == 422
    changed = await api.client.put("/v1/chats/g1/settings", json={"remind_others": "admins"})
    assert changed.json()["remind_others"] == "admins"
    assert changed.json()["timezone"] == "Europe/Berlin"  # untouched

    command = "/remind @bob tomorrow at 9 send the slides"
    (refused,) = await api.say(command, mentions=[BOB])
    assert refused["text"] == "Only a group admin can set reminders for other members in this chat."
    (allowed,) = await api.say(command, mentions=[BOB], sender_is_admin=True)
    assert "Reminder #1 for @bob (mentioning you too) set for" in allowed["text"]
    (stranger,) = await api.say(
        "/remind @carol tomorrow at 9 x", mentions=[BOB], sender_is_admin=True
    )
    assert "can't find @carol" in stranger["text"]

    await api.client.put("/v1/chats/g1/settings", json={"remind_others": "off"})
    (off,) = await api.say(command, mentions=[BOB], sender_is_admin=True)
    assert off["text"] == "Reminders for other members are turned off in this chat."
    listed = (await api.client.get("/v1/chats/g1/reminders")).json()
    assert len(listed) == 1  # the refusals stored nothing


async def test_follow_ups_and_quiet_digests_through_the_settings_route(servers: Servers) -> None:
    """PUT /settings takes what /settings does; a bad value anywhere changes nothing."""
    api = await servers.start()
    settings = (await api.client.get("/v1/chats/g1/settings")).json()
    shown = ("followup", "followup_seconds", "digest_when_quiet")
    assert tuple(settings[key] for key in shown) == ("off", 120, "post")
    both = {"followup": "on", "followup_seconds": 30, "digest_when_quiet": "skip"}
    changed = await api.client.put("/v1/chats/g1/settings", json=both)
    assert tuple(changed.json()[key] for key in shown) == ("on", 30, "skip")
    for bad in (
        {"followup": "off", "followup_seconds": 5},  # below the bound
        {"followup": "off", "timezone": "Mars/Base"},  # a zone that does not exist
        {"digest_when_quiet": "maybe"},
    ):
        refused = await api.client.put("/v1/chats/g1/settings", json=bad)
        assert refused.status_code == 422, bad
    settings = (await api.client.get("/v1/chats/g1/settings")).json()
    assert tuple(settings[key] for key in shown) == ("on", 30, "skip")  # nothing changed
    assert settings["timezone"] == "Europe/Berlin"


async def test_config_default_for_reminding_others(servers: Servers) -> None:
    api = await servers.start(reminders={"remind_others": "off", "remind_everyone": "members"})
    (off,) = await api.say("/remind @bob tomorrow at 9 x", mentions=[BOB])
    assert off["text"] == "Reminders for other members are turned off in this chat."
    # The team is the group, and reminding it is reminding others: refused, with why.
    (everyone,) = await api.say("/remind everyone tomorrow at 9 standup")
    assert everyone["text"] == (
        "Reminders for the group or other members are turned off in this chat."
    )
    assert (await api.client.get("/v1/chats/g1/reminders")).json() == []


async def test_openapi_describes_the_reminder_routes(servers: Servers) -> None:
    api = await servers.start()
    document = (await api.client.get("/openapi.json")).json()
    paths = document["paths"]
    item = "/v1/chats/{chat_id}/reminders/{reminder_id}"
    assert {"get", "patch", "delete"} <= set(paths[item])
    for action in ("snooze", "pause", "resume"):
        assert "post" in paths[f"{item}/{action}"]
    assert "get" in paths["/v1/chats/{chat_id}/history"]
    create_body = paths["/v1/chats/{chat_id}/reminders"]["post"]["requestBody"]
    schema = create_body["content"]["application/json"]["schema"]
    assert {"type", "time", "weekday", "day", "interval", "content", "who"} <= set(
        schema["properties"]
    )
    assert "created_by" in schema["required"]
    patch_schema = paths[item]["patch"]["requestBody"]["content"]["application/json"]["schema"]
    assert "reminder_id" not in patch_schema["properties"]
    out = document["components"]["schemas"]["ReminderOut"]["properties"]
    assert {"type", "time", "interval", "who", "mentions", "status", "next_fire_at"} <= set(out)
