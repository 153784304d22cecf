"""`/calendar` end to end, on SQLite and PostgreSQL: the command makes a private link,
the served feed (`GET /calendar/<token>.ics`, no API token: calendar apps send none)
holds this chat's active reminders and nothing of another chat or a private chat,
revoking or replacing a link answers 404 at once, the whole-chat link is an admin's,
the token is in no log line, chat log row or audit row, and the feed read from the
store starts at the row's next fire time, across a DST change."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

import httpx
import icalendar
import pytest
import recurring_ical_events
from sqlalchemy import select

from groupmate.storage import NewReminder, ReminderService, Schedule
from groupmate.storage.calendar_feeds import FeedOwner
from groupmate.storage.ical import FeedWindow, feed_calendar
from groupmate.storage.models import CalendarFeed, ChatMessage
from tests.conftest import FakeClock
from tests.http_harness import Api, Servers
from tests.test_extras import without

PUBLIC = "https://bot.example.com/"
LINK = re.compile(r"https://bot\.example\.com/calendar/([A-Za-z0-9_-]{43})\.ics")


async def start(servers: Servers, database_url: str, **sections: Any) -> Api:
    webhook = {"public_url": PUBLIC, **sections.pop("webhook", {})}
    return await servers.start(
        FakeClock(), storage={"url": database_url}, adapters={"webhook": webhook}, **sections
    )


async def remind(api: Api, chat_id: str, content: str, **body: Any) -> dict[str, Any]:
    answer = await api.client.post(
        f"/v1/chats/{chat_id}/reminders",
        json={"created_by": "u-alice", "created_by_name": "Alice", "content": content, **body},
    )
    assert answer.status_code == 201, answer.text
    made: dict[str, Any] = answer.json()
    return made


async def link(api: Api, said: str = "/calendar", **fields: Any) -> tuple[str, str]:
    """The reply to `said` and the token of the link in it."""
    (reply,) = await api.say(said, **fields)
    found = LINK.search(reply["text"])
    assert found is not None, reply["text"]
    return reply["text"], found.group(1)


async def fetch(api: Api, token: str, method: str = "GET") -> httpx.Response:
    """The feed as a calendar app asks for it: no API token."""
    async with httpx.AsyncClient(base_url=api.base_url) as app:
        return await app.request(method, f"/calendar/{token}.ics")


def summaries(answer: httpx.Response) -> set[str]:
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "text/calendar; charset=utf-8"
    assert "no-store" in answer.headers["cache-control"]
    calendar = icalendar.Calendar.from_ical(answer.content)
    return {str(event["SUMMARY"]) for event in calendar.walk("VEVENT")}


async def test_a_members_link_shows_this_chats_reminders_and_no_other(
    servers: Servers, database_url: str
) -> None:
    api = await start(servers, database_url)
    await remind(api, "g1", "water the plants", type="daily", time="07:00")
    await remind(api, "g1", "standup", type="weekdays", time="09:30")
    paused = await remind(api, "g1", "paused plan", type="daily", time="08:00")
    assert (await api.client.post(f"/v1/chats/g1/reminders/{paused['id']}/pause")).is_success
    gone = await remind(api, "g1", "cancelled plan", type="daily", time="08:00")
    assert (await api.client.delete(f"/v1/chats/g1/reminders/{gone['id']}")).status_code == 204
    await remind(api, "g2", "another group's plan", type="daily", time="10:00")
    await remind(
        api, "dm-alice", "my private appointment", type="daily", time="11:00", chat_type="private"
    )

    text, token = await link(api)
    assert "posted here" in text and "/calendar revoke" in text
    answer = await fetch(api, token)
    assert summaries(answer) == {"water the plants", "standup"}
    head = await fetch(api, token, "HEAD")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == str(len(answer.content))

    # Alice's link in her private chat: its own reminders, and no notice about a group.
    text, private = await link(api, chat_id="dm-alice", chat_type="private")
    assert "Keep it private" in text and "posted here" not in text
    assert summaries(await fetch(api, private)) == {"my private appointment"}
    assert "my private appointment" not in (await fetch(api, token)).text


async def test_revoked_or_replaced_links_answer_404_at_once(
    servers: Servers, database_url: str
) -> None:
    api = await start(servers, database_url)
    await remind(api, "g1", "water the plants", type="daily", time="07:00")
    _, first = await link(api)
    text, second = await link(api)
    assert "replaces the earlier link" in text
    assert (await fetch(api, first)).status_code == 404
    assert summaries(await fetch(api, second)) == {"water the plants"}
    # Bob's link is his own: Alice revoking hers leaves his.
    _, bobs = await link(api, sender_id="u-bob", sender_name="Bob")

    (reply,) = await api.say("/calendar revoke")
    assert "stops working now" in reply["text"]
    assert (await fetch(api, second)).status_code == 404
    assert (await fetch(api, second, "HEAD")).status_code == 404
    assert (await fetch(api, bobs)).status_code == 200
    (reply,) = await api.say("/calendar revoke")
    assert reply["text"] == "You have no calendar link in this chat to revoke."

    for wrong in (second[:-1] + ("A" if second[-1] != "A" else "B"), "short", "x" * 43 + "!"):
        assert (await fetch(api, wrong)).status_code == 404
    async with httpx.AsyncClient(base_url=api.base_url) as app:
        assert (await app.get(f"/calendar/{bobs}")).status_code == 404  # no .ics

    # Deleting the chat's data deletes its links.
    assert (await api.client.delete("/v1/chats/g1")).is_success
    assert (await fetch(api, bobs)).status_code == 404


async def test_the_whole_chat_link_is_an_admins(servers: Servers, database_url: str) -> None:
    api = await start(servers, database_url)
    await remind(api, "g1", "water the plants", type="daily", time="07:00")
    (refusal,) = await api.say("/calendar chat")
    assert refusal["text"].startswith("Only a chat admin can make or revoke")
    (refusal,) = await api.say("/calendar chat revoke")
    assert refusal["text"].startswith("Only a chat admin can make or revoke")

    admin = {"sender_id": "u-admin", "sender_name": "Admin"}
    text, chat = await link(api, "/calendar chat", **admin)
    assert "for everyone here" in text and "/calendar chat revoke" in text
    _, own = await link(api, **admin)  # the admin's own link is another one
    assert summaries(await fetch(api, chat)) == {"water the plants"}
    (reply,) = await api.say("/calendar revoke chat", **admin)
    assert "stops working now" in reply["text"]
    assert (await fetch(api, chat)).status_code == 404
    assert (await fetch(api, own)).status_code == 200


async def test_without_a_public_address_no_link_is_made(
    servers: Servers, database_url: str
) -> None:
    api = await start(servers, database_url, webhook={"public_url": None})
    (reply,) = await api.say("/calendar")
    assert "adapters.webhook.public_url" in reply["text"]
    assert LINK.search(reply["text"]) is None
    with api.bot.database.read_session() as session:  # type: ignore[union-attr]
        assert session.execute(select(CalendarFeed.id)).first() is None


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_words_and_chinese(servers: Servers, database_url: str) -> None:
    api = await start(servers, database_url)
    (reply,) = await api.say("/calendar please")
    assert reply["text"].startswith("Usage: /calendar")
    text, _ = await link(api, "/日历")
    assert text.startswith("📅 你订阅这个聊天提醒的日历链接")
    (reply,) = await api.say("/日历 撤销")
    assert reply["text"].startswith("📅 已停用")


async def test_the_token_is_in_no_log(
    servers: Servers, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api = await start(servers, database_url)
    await remind(api, "g1", "water the plants", type="daily", time="07:00")
    _, token = await link(api)
    assert (await fetch(api, token)).status_code == 200
    audit = (await api.client.get("/v1/audit", params={"limit": 50})).json()["entries"]
    (row,) = [row for row in audit if row["tool"] == "calendar_feed"]
    assert (row["source"], row["outcome"], row["arguments"]) == ("command", "ok", {"action": ""})
    assert token not in repr(audit)
    with api.bot.database.read_session() as session:  # type: ignore[union-attr]
        logged = [text for (text,) in session.execute(select(ChatMessage.text))]
    assert any("/calendar/***.ics" in text for text in logged)
    assert not any(token in text for text in logged)
    # The bot's lines and its server's; not those of this test's HTTP client, which plays
    # the calendar app (the bot's own clients log at WARNING: bot.logs.QUIET_LOGGERS).
    lines = [r.getMessage() for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))]
    assert lines  # the capture works: the migrations, the scheduler
    assert not any(token in line for line in lines)


async def test_the_feed_starts_at_the_stores_next_fire_time_across_dst(
    reminders: ReminderService, clock: FakeClock
) -> None:
    """Through the store: a daily 02:30 Europe/Berlin reminder set the day before the
    spring gap; its feed's first occurrence is the row's next_fire_at (03:30 CEST, as the
    scheduler fires it), and a year of it is Schedule's own."""
    clock.set(datetime(2026, 3, 28, 12, 0, tzinfo=UTC))
    schedule = Schedule("daily", time(2, 30), "Europe/Berlin")
    first = schedule.first_after(clock())
    assert first == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    made = await reminders.create(
        NewReminder("g1", "group", "u-alice", "Alice", "stretch", schedule, first)
    )
    link = await reminders.feeds.make(FeedOwner("g1", "u-alice"))
    views = await reminders.feeds.open(link.token)
    assert views is not None and [view.id for view in views] == [made.id]
    body = feed_calendar(views, name="x", window=FeedWindow.around(clock()), describe=str)
    events = recurring_ical_events.of(icalendar.Calendar.from_ical(body))
    year = clock() + timedelta(days=365)
    found = sorted(event.start.astimezone(UTC) for event in events.between(clock(), year))
    assert found[0] == made.next_fire_at
    assert found == list(schedule.occurrences(clock(), year))


# A bot without the `calendar` extra, through the test kit, in a Python that can't find
# icalendar: /calendar says how to install it and makes no link; revoking still works;
# a link made before the extra was removed answers 503 with the pip line.
_WITHOUT_EXTRA = """
import asyncio
import httpx
from groupmate.bot.adapters.http import create_app
from groupmate.storage.calendar_feeds import FeedOwner
from groupmate.testing.bot import TestBot

async def main():
    config = {"adapters": {"webhook": {"public_url": "https://bot.example.com"}}}
    async with TestBot(config=config, tmp_path=".") as bot:
        for said in ("/calendar", "/calendar revoke"):
            print(*await bot.say(said), sep="\\n")
        made = await bot.app.reminders.feeds.make(FeedOwner("test-group", "u1"))
        transport = httpx.ASGITransport(create_app(bot.app))
        async with httpx.AsyncClient(transport=transport, base_url="http://bot") as client:
            answer = await client.get(f"/calendar/{made.token}.ics")
        print(answer.status_code, answer.text)

asyncio.run(main())
"""


def test_without_the_calendar_extra_the_reply_says_how_to_install_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXTRA],
        env=without(tmp_path, {"icalendar"}),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    made, revoked, served = done.stdout.strip().splitlines()
    assert made == (
        "I can't make calendar links here: this server lacks calendar support. An admin "
        'installs it with pip install "groupmate[calendar]" (the container image has it) '
        "and restarts groupmate."
    )
    assert revoked == "You have no calendar link in this chat to revoke."
    assert served == (
        '503 calendar feeds are not installed on this server: pip install "groupmate[calendar]"'
    )
    assert "Traceback" not in done.stderr
