"""“Until done” through the REST API: POST takes `ack`, GET gives it back with the rule
in words (who must say done, the cap and the last time); a rule it can't have is refused
in words and nothing is stored."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from tests.conftest import FakeClock
from tests.http_harness import Api, Servers
from tests.test_rest_reminders import create

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY_8 = datetime(2026, 11, 23, 8, 0, tzinfo=BERLIN)
URL = "/v1/chats/g1/reminders"


async def start(servers: Servers) -> Api:
    return await servers.start(clock=FakeClock(MONDAY_8.astimezone(UTC)))


async def test_post_takes_ack_and_get_gives_it_back(servers: Servers) -> None:
    api = await start(servers)
    created = await create(
        api, type="once", time="2026-11-23 21:00", content="feed the cat", ack="anyone"
    )
    assert (created["ack"], created["every_minutes"], created["count"]) == ("anyone", 10, 12)
    assert created["rule"] == (
        "every 10 minutes from 21:00 until someone says done "
        "(at most 12 times: the last on Mon 23 Nov at 22:50)"
    )
    assert created["last_at"] == "2026-11-23T22:50:00+01:00"
    assert (await api.client.get(f"{URL}/1")).json() == created
    plain = await create(api, type="once", time="2026-11-23 21:00", content="call")
    assert plain["ack"] is None


async def test_a_rule_it_cannot_have_is_refused_in_words(servers: Servers) -> None:
    api = await start(servers)
    body = {"created_by": "u-alice", "content": "pills"}
    daily = await api.client.post(
        URL, json={**body, "type": "daily", "time": "09:00", "ack": "asker"}
    )
    assert daily.status_code == 422
    assert "can't go with a daily or weekly rule" in daily.text
    everyone = await api.client.post(
        URL, json={**body, "type": "once", "time": "2026-11-23 21:00", "ack": "each"}
    )
    assert everyone.status_code == 422
    assert "needs the people named" in everyone.text
    unknown = await api.client.post(
        URL, json={**body, "type": "once", "time": "2026-11-23 21:00", "ack": "someone"}
    )
    assert unknown.status_code == 422
    assert (await api.client.get(URL)).json() == []
