"""Two groupmate processes on one database each deliver their own chats' reminders.

`make run` (the web server) beside `make chat` (the terminal), as the startup banner
suggests, or a Telegram process beside a Slack one on PostgreSQL: a process claims only
the chats it delivers to. A reminder of a platform no running process serves waits (never
failed for it), and /healthz and the dashboard say so.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from sqlalchemy import select
from sqlalchemy.orm import Session

from groupmate.storage import NewReminder, Reach, ReminderService, Schedule, utc_now
from groupmate.storage.models import Reminder
from groupmate.storage.reach import within
from tests.conftest import FakeClock
from tests.http_harness import Servers
from tests.processes import serve
from tests.receiver import Receiver
from tests.test_cli import Terminal

# Past due already, but well within a one-time reminder's grace: whoever claims it sends it.
DUE_AGO = timedelta(seconds=20)


def _seed(url: str) -> dict[str, str]:
    """One due reminder each in the terminal's group chat, a playground chat and a
    Telegram chat (no process here serves Telegram); their ids by platform."""

    async def seed() -> dict[str, str]:
        due = utc_now() - DUE_AGO
        ids = {}
        async with ReminderService.open(url) as service:
            for platform, chat in (
                ("console", "console:group"),
                ("web", "web:room-1"),
                ("telegram", "tg:42"),
            ):
                new = NewReminder(
                    chat,
                    "group",
                    "u-1",
                    "Ann",
                    f"{platform} tea",
                    Schedule.once_at(due, "UTC"),
                    due,
                )
                ids[platform] = (await service.create(new)).id
        return ids

    return asyncio.run(seed())


def _eventually(check: Callable[[], Any], within: float = 20) -> Any:
    deadline = time.monotonic() + within
    while True:
        found = check()
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


@pytest.mark.slow
def test_each_process_claims_only_the_chats_it_delivers_to(
    database_url: str, tmp_path: Path
) -> None:
    ids = _seed(database_url)
    settings: dict[str, Any] = {
        "bot": {"timezone": "Europe/Berlin"},
        "storage": {"url": database_url},
        # Sweeps each second: a process that wrongly claimed would do so at once.
        "reminders": {"watchdog_interval": "1s"},
    }
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(settings))
    with serve(settings) as base_url, httpx.Client(base_url=base_url, timeout=10) as web:

        def deliveries() -> list[dict[str, Any]]:
            return list(web.get("/v1/deliveries").json())

        def sent_to(chat: str) -> bool:
            return any(d["chat_id"] == chat and d["outcome"] == "sent" for d in deliveries())

        # The web server delivers its playground's reminder...
        assert _eventually(lambda: sent_to("web:room-1")), deliveries()
        # ...and, a few sweeps later, has claimed nothing of the terminal's or Telegram's.
        time.sleep(3)
        assert [d["chat_id"] for d in deliveries()] == ["web:room-1"]
        health = web.get("/healthz").json()
        assert health["reminders_waiting"] == {"console": 1, "telegram": 1}
        waiting = web.get("/v1/waiting").json()
        assert sorted((w["platform"], w["chats"]) for w in waiting) == [
            ("console", ["console:group"]),
            ("telegram", ["tg:42"]),
        ]
        console = next(w for w in waiting if w["platform"] == "console")
        assert "no running groupmate process delivers there" in console["advice"]
        assert "`groupmate chat`" in console["advice"]

        # The terminal chat starts on the same database and delivers its own.
        with Terminal(config) as terminal:
            terminal.expect("console tea", within=30)
            assert _eventually(lambda: sent_to("console:group"))
            assert terminal.close() == 0
        assert "web tea" not in terminal.output  # the playground's stays the web server's

        assert web.get("/healthz").json()["reminders_waiting"] == {"telegram": 1}
        assert not [d for d in deliveries() if d["outcome"] == "failed"]
        telegram = web.get("/v1/chats/tg:42/reminders").json()
        assert [r["id"] for r in telegram] == [ids["telegram"]]  # still active: it waits
        assert not [d for d in deliveries() if d["chat_id"] == "tg:42"]


async def test_the_outbound_webhook_gets_only_the_webhooks_own_chats(
    servers: Servers, receiver: Receiver
) -> None:
    """The webhook delivers the chats of no platform (ids the API's callers chose); a
    terminal chat's reminder is not posted there but waits for the terminal."""
    clock = FakeClock()
    api = await servers.start(clock, adapters={"webhook": {"outbound_url": receiver.url}})
    await api.say("/remind in 1 minute stretch", chat_id="g1")
    await api.say("/remind in 1 minute tea", chat_id="console:group")
    clock.advance(timedelta(minutes=3))  # past "waiting" (two sweeps), within the grace
    assert api.bot.reminders is not None and api.bot.reminders.scheduler is not None
    await api.bot.reminders.scheduler.run_due()
    (call,) = await asyncio.to_thread(receiver.wait_for, 1, 15)
    assert call.body["chat_id"] == "g1" and "stretch" in call.body["text"]
    waiting = (await api.client.get("/v1/waiting")).json()
    assert [(w["platform"], w["chats"], w["reminders"]) for w in waiting] == [
        ("console", ["console:group"], 1)
    ]
    assert len(receiver.calls) == 1


@pytest.mark.parametrize(
    "reach",
    [
        Reach(("tg:", "console:")),
        Reach(("web:",), others=True, platforms=("tg:", "console:", "web:", "dc:")),
        Reach((), others=True, platforms=("tg:",)),
    ],
)
async def test_the_claims_filter_covers_exactly_the_chats_the_router_delivers(
    database_url: str, reach: Reach
) -> None:
    """What the claim query selects is what the router sends: case and LIKE's wildcards
    included ("TG:1" is no Telegram chat; "t_:1" and "%" are plain characters)."""
    chats = ["tg:1", "TG:1", "Tg:1", "console:group", "CONSOLE:x", "web:a", "g1", "t_:1", "%"]
    chats += ["dc:9", "tg", ""]
    due = utc_now() + timedelta(days=1)
    async with ReminderService.open(database_url) as service:
        for chat in chats:
            once = Schedule.once_at(due, "UTC")
            await service.create(NewReminder(chat, "group", "u-1", "Ann", "x", once, due))

        def selected(session: Session) -> set[str]:
            found = session.execute(
                select(Reminder.chat_id).where(within(reach, Reminder.__table__.c.chat_id))
            )
            return {row.chat_id for row in found}

        assert await service.database.read(selected) == {c for c in chats if reach.covers(c)}
