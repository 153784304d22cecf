"""The dashboard says why something did not work, next to the control, in words (not the
API's validation wording); offers only the actions that can work; refuses a chat it does
not know; and shows a retry's progress. In a real browser."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from playwright.async_api import Page, expect

from groupmate.storage import SendError
from tests.conftest import FakeClock, eventually
from tests.http_harness import Servers
from tests.test_web_dashboard import open_dashboard

pytestmark = pytest.mark.slow

MACHINE_WORDS = ("invalid request", "(arguments)", "HTTP ", "received")


async def test_each_failure_is_said_next_to_its_control(servers: Servers, page: Page) -> None:
    api = await servers.start(FakeClock())
    await api.say("/remind tomorrow at 9 water the plants", chat_id="web:group")
    await api.say("/remind every day at 8 stretch", chat_id="web:group")
    await open_dashboard(page, api, "reminders")
    rows = page.locator("main tbody tr")
    once = rows.filter(has_text="water the plants")
    daily = rows.filter(has_text="stretch")

    # Edit "at 3": the bot's question, by the form.
    await once.get_by_role("button", name="Edit reminder #1 in web:group").click()
    await page.get_by_label("New time").fill("at 3")
    await page.get_by_role("button", name="Save").click()
    said = page.locator("#edit-why")
    await expect(said).to_have_text("Did you mean 03:00 or 15:00? Write 3am or 3pm (or 15:00).")

    # Pause is offered only where it works: a one-time reminder has none.
    await expect(once.get_by_role("button", name="Pause")).to_have_count(0)
    await daily.get_by_role("button", name="Pause reminder #2 in web:group").click()
    await expect(daily).to_contain_text("paused")
    resume = daily.get_by_role("button", name="Resume reminder #2 in web:group")
    await expect(resume).to_be_visible()

    # Create "someday": why, in words.
    await page.locator("#new-chat").fill("web:group")
    await page.locator("#new-when").fill("someday")
    await page.locator("#new-content").fill("call mum")
    await page.get_by_role("button", name="Create").click()
    said = page.locator("#create-why")
    await expect(said).to_contain_text("I couldn't find a time in 'someday'.")
    for words in MACHINE_WORDS:
        assert words not in await said.inner_text()

    # A mistyped chat is refused: no chat of that name appears.
    await page.locator("#new-chat").fill("web:gruop")
    await page.locator("#new-when").fill("tomorrow at 10")
    await page.get_by_role("button", name="Create").click()
    await expect(said).to_have_text(
        "The bot knows no chat “web:gruop”. Pick one of its chats: web:group."
    )
    chats = (await api.client.get("/v1/chats")).json()
    assert [c["chat_id"] for c in chats] == ["web:group"]


async def test_a_retry_shows_its_progress(servers: Servers, page: Page) -> None:
    clock = FakeClock()
    api = await servers.start(clock)
    released = asyncio.Event()
    down = True

    async def telegram(message: object) -> str:
        if down:
            raise SendError("Telegram answered HTTP 502")
        await released.wait()  # back, but the platform takes its time
        return "m-1"

    api.bot.on_outgoing(telegram, chat_prefix="tg:")
    await api.say("/remind in 1 minute call home", chat_id="tg:42")  # Telegram is down
    clock.advance(timedelta(minutes=1, seconds=1))

    async def failed() -> bool:
        answer = await api.client.get("/v1/deliveries", params={"outcome": "failed"})
        return bool(answer.json())

    await eventually(failed, within=15)
    await open_dashboard(page, api, "deliveries?outcome=failed")
    row = page.locator("main tbody tr", has_text="call home")
    down = False
    await row.get_by_role("button", name="Retry delivery").click()
    await expect(row.locator(".why")).to_contain_text("Sending again… 1 s", timeout=5_000)
    await expect(row.get_by_role("button", name="Retry delivery")).to_be_disabled()
    released.set()
    await expect(page.locator("main tbody tr", has_text="call home")).to_have_count(0)


async def test_a_tool_run_that_does_not_fit_says_why_in_words(servers: Servers, page: Page) -> None:
    api = await servers.start(FakeClock())
    await api.say("/remind tomorrow at 9 tea", chat_id="web:group")
    await open_dashboard(page, api, "tools")
    await page.locator("#run-tool").select_option("reminder_set")
    await page.locator("#run-chat").fill("web:group")
    await page.locator("#run-arguments").fill('{"when": "someday", "content": "call mum"}')
    await page.get_by_role("button", name="Run").click()
    result = page.locator("#run-result")
    await expect(result).to_contain_text(
        "The arguments do not fit: I couldn't find a time in 'someday'."
    )
    for words in MACHINE_WORDS:
        assert words not in await result.inner_text()
