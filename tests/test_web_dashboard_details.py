"""The dashboard's words and looks, in a real browser at a laptop's size and a phone's:
what a reminder's Next says once it ended, what a switch did, the budgets, empty tables,
headings, times as the bot writes them in the chat's zone, tables that fit or scroll
sideways with a cue. Screenshots of both sizes go to tests/artifacts/."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.async_api import Page, expect

from groupmate.function_calls.handlers.reminder_words import format_local
from tests.browser import ARTIFACTS
from tests.conftest import FakeClock, eventually
from tests.http_harness import Servers
from tests.test_web_dashboard import open_dashboard

pytestmark = pytest.mark.slow

BOTS_FORMAT = re.compile(r"^[A-Z][a-z]{2} \d{2} [A-Z][a-z]{2}( \d{4})? \d{2}:\d{2}$")


async def font_size(page: Page, selector: str) -> float:
    size = await page.locator(selector).first.evaluate("e => getComputedStyle(e).fontSize")
    return float(str(size).removesuffix("px"))


async def test_an_empty_dashboard_says_so(servers: Servers, page: Page) -> None:
    api = await servers.start(FakeClock())
    await open_dashboard(page, api, "chats")
    await expect(page.locator("main p.empty")).to_have_text(
        "No chats yet: one appears once someone writes to the bot."
    )
    for section, empty in (
        ("Reminders", "No reminders here yet."),
        ("Deliveries", "No deliveries yet."),
        ("Audit", "Nothing audited yet."),
    ):
        await page.get_by_role("button", name=section).click()
        await expect(page.locator("main p.empty")).to_have_text(empty)
    await page.get_by_role("button", name="Usage").click()
    await expect(page.locator("#budgets")).to_have_text(
        "Budgets: per chat per day, no limit; for all chats per day, no limit."
    )
    await expect(page.locator("main p.empty").first).to_have_text("No tokens spent yet.")
    await page.get_by_role("button", name="Status").click()
    await expect(page.locator("main h2")).to_have_text("Status")
    await expect(page.locator("main h3").first).to_have_text("Scheduler")
    assert await font_size(page, "main h2") > await font_size(page, "main h3")


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)], ids=["laptop", "phone"])
async def test_the_dashboards_words_times_and_tables(
    servers: Servers, page: Page, width: int, height: int
) -> None:
    clock = FakeClock()
    api = await servers.start(clock)
    await api.say("/tz Asia/Tokyo", chat_id="web:group", sender_id="u-admin")
    await api.say("/remind in 1 minute stand up", chat_id="web:group")
    await api.say("/remind tomorrow at 9 water the plants", chat_id="web:group")
    await api.say("/remind every day at 8 stretch <b>now</b>", chat_id="web:group")
    await api.say("/cancel #2", chat_id="web:group")
    clock.advance(timedelta(minutes=1, seconds=1))

    async def sent() -> bool:
        answer = await api.client.get("/v1/deliveries", params={"outcome": "sent"})
        return bool(answer.json())

    await eventually(sent, within=15)
    await page.set_viewport_size({"width": width, "height": height})
    await open_dashboard(page, api, "reminders")
    rows = page.locator("main tbody tr")

    # Next: when it fires; for one that ended, that it did.
    await expect(rows.filter(has_text="stand up").locator("td").nth(4)).to_have_text("done")
    cancelled = rows.filter(has_text="water the plants")
    await expect(cancelled.locator("td").nth(4)).to_have_text("cancelled")
    await expect(cancelled.get_by_role("button")).to_have_count(0)  # nothing applies
    daily = rows.filter(has_text="stretch")
    tomorrow_8 = (clock() + timedelta(days=1)).astimezone(ZoneInfo("Asia/Tokyo"))
    expected = format_local(tomorrow_8.replace(hour=8, minute=0), ZoneInfo("Asia/Tokyo"))
    await expect(daily.locator("td").nth(4)).to_have_text(expected)

    # A switch says what it did, and that every tool is on again.
    await page.get_by_role("button", name="Tools").click()
    await page.locator("#switch-chat").fill("web:group")
    await page.locator("#switch-tool").select_option("reminder_history")
    await page.locator("#switch-state").select_option("off")
    await page.get_by_role("button", name="Switch").click()
    await expect(page.locator("#switch-result")).to_have_text(
        "reminder_history is off in web:group. Switched off there: reminder_history."
    )
    await page.locator("#switch-state").select_option("on")
    await page.get_by_role("button", name="Switch").click()
    await expect(page.locator("#switch-result")).to_have_text(
        "reminder_history is on in web:group. Every tool is on there."
    )

    # The audit: times as the bot writes them, in the chat's zone; the table fits the
    # laptop's width and scrolls sideways, with a cue, on the phone.
    await page.get_by_role("button", name="Audit").click()
    first = rows.first
    await expect(first).to_contain_text("chat_tools")
    when = await first.locator("td").first.inner_text()
    assert BOTS_FORMAT.match(when), when
    at = datetime.fromisoformat(
        (await api.client.get("/v1/audit")).json()["entries"][0]["at"].replace("Z", "+00:00")
    )
    zone = ZoneInfo("Asia/Tokyo")
    assert when == format_local(at, zone, with_year=at.year != datetime.now(zone).year)
    box = page.locator("main .table .scroll")
    overflows = await box.evaluate("b => b.scrollWidth > b.clientWidth + 1")
    cue = page.locator("main .table .scroll-cue")
    if width >= 1280:
        assert not overflows
        table = await page.locator("main table").bounding_box()
        assert table is not None and table["x"] + table["width"] <= width
        await expect(cue).to_be_hidden()
    else:
        assert overflows
        await expect(cue).to_be_visible()
        await expect(cue).to_have_text("Wider than the screen: scroll the table sideways →")
    assert await page.evaluate("document.documentElement.scrollWidth") <= width
    await page.screenshot(path=str(ARTIFACTS / f"dashboard-{width}x{height}.png"))
