"""Repeats within a day and repeat limits through the REST API: POST takes
`every_minutes`, `to`, `until` and `count`, GET gives them back in the same fields (with
the last occurrence), PATCH adds and removes a limit, and the bot's bounds
(`reminders.min_interval`, `reminders.max_per_day`) refuse a flood here too."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from tests.conftest import FakeClock
from tests.http_harness import Api, Servers
from tests.test_rest_reminders import create

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY_8 = datetime(2026, 11, 23, 8, 0, tzinfo=BERLIN)
URL = "/v1/chats/g1/reminders"


async def start(servers: Servers) -> Api:
    return await servers.start(
        clock=FakeClock(MONDAY_8.astimezone(UTC)),
        reminders={"min_interval": "15m", "max_per_day": 20},
    )


async def test_a_repeat_within_a_day_round_trips(servers: Servers) -> None:
    api = await start(servers)
    body: dict[str, Any] = {"type": "weekdays", "every_minutes": 60, "time": "09:00", "to": "17:00"}
    created = await create(api, **body, count=5, content="check the queue")
    assert {key: created[key] for key in (*body, "count", "until")} == {
        **body,
        "count": 5,
        "until": None,
    }
    assert created["rule"] == (
        "every hour from 09:00 to 17:00 on weekdays, 5 times (the last on Mon 23 Nov at 13:00)"
    )
    assert created["next_fire_at"] == "2026-11-23T09:00:00+01:00"
    assert created["last_at"] == "2026-11-23T13:00:00+01:00"
    fetched = (await api.client.get(f"{URL}/1")).json()
    assert fetched == created


async def test_patch_adds_and_removes_a_limit(servers: Servers) -> None:
    api = await start(servers)
    await create(api, type="daily", time="09:00", content="pills")
    limited = await api.client.patch(f"{URL}/1", json={"until": "2026-11-27"})
    assert limited.status_code == 200, limited.text
    assert (limited.json()["until"], limited.json()["last_at"]) == (
        "2026-11-27",
        "2026-11-27T09:00:00+01:00",
    )
    unlimited = await api.client.patch(f"{URL}/1", json={"no_limit": True})
    assert unlimited.status_code == 200, unlimited.text
    assert (unlimited.json()["until"], unlimited.json()["count"]) == (None, None)
    assert unlimited.json()["rule"] == "every day at 09:00"


async def test_floods_and_bad_limits_are_refused_and_nothing_is_stored(servers: Servers) -> None:
    api = await start(servers)
    base = {"created_by": "u-alice", "content": "spam"}
    too_often = await api.client.post(
        URL, json={**base, "type": "daily", "every_minutes": 10, "time": "09:00"}
    )
    assert too_often.status_code == 422
    assert "the shortest repeat here is every 15 minutes" in too_often.text
    too_many = await api.client.post(URL, json={**base, "type": "daily", "every_minutes": 60})
    assert too_many.status_code == 422
    assert "That would fire 24 times a day; the most here is 20." in too_many.text
    once = await api.client.post(
        URL, json={**base, "type": "once", "time": "2026-11-24 09:00", "count": 3}
    )
    assert once.status_code == 422 and "until and count are for repeating" in once.text
    backwards = await api.client.post(
        URL, json={**base, "type": "daily", "every_minutes": 60, "time": "17:00", "to": "09:00"}
    )
    assert backwards.status_code == 422 and "must be after time 17:00" in backwards.text
    ended = await api.client.post(
        URL, json={**base, "type": "daily", "time": "09:00", "until": "2026-11-20"}
    )
    assert ended.status_code == 422 and "ends before the next time it fires" in ended.text
    assert (await api.client.get(URL)).json() == []
