"""The playground in a real browser (Debian's chromium through Playwright), against the
bot's real HTTP API on 127.0.0.1."""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.async_api import Page, expect

from groupmate.storage.chatlog import LogEntry
from groupmate.testing.stub_llm import StubLLM, calls
from tests.browser import ARTIFACTS
from tests.conftest import FakeClock
from tests.http_harness import TOKEN, Api, Servers, llm_section

pytestmark = pytest.mark.slow


async def open_playground(page: Page, api: Api) -> None:
    await page.goto(f"{api.base_url}/")
    dialog = page.get_by_role("dialog")
    await expect(dialog).to_be_visible()
    await page.get_by_label("Token", exact=True).fill("wrong")
    await page.get_by_role("button", name="Open").click()
    await expect(dialog.get_by_role("alert")).to_have_text("That token is wrong. Try again.")
    await page.get_by_label("Token", exact=True).fill(TOKEN)
    await page.get_by_role("button", name="Open").click()
    await expect(dialog).to_be_hidden()
    await expect(page.locator("#live")).to_have_text("Live")


async def say(page: Page, text: str) -> None:
    await page.get_by_label("Message as").fill(text)
    await page.get_by_role("button", name="Send").click()


@pytest.mark.parametrize("with_llm", [False, True], ids=["offline", "stub-llm"])
async def test_group_chat_reminder_flow(
    servers: Servers, page: Page, stub: StubLLM, with_llm: bool
) -> None:
    clock = FakeClock()
    if with_llm:
        stub.script(calls(("reminder_set", {"when": "in 1 minute", "content": "stretch"})))
        api = await servers.start(clock, llm=llm_section(stub))
    else:
        api = await servers.start(clock)
    await open_playground(page, api)
    mode = "Natural language is on" if with_llm else "offline commands only"
    await expect(page.locator("#mode")).to_contain_text(mode)
    messages = page.locator("ol#messages li")

    # 1. Alice sets a reminder and sees the confirmation.
    asked = (
        "@groupmate remind us in 1 minute to stretch" if with_llm else "/remind in 1 minute stretch"
    )
    await say(page, asked)
    await expect(messages.last).to_contain_text("stretch")
    await expect(messages.last).to_have_class("bot")
    await expect(page.locator("#reminders li:not(.hint)")).to_have_count(
        1
    )  # not "No reminders yet"

    # 2. Bob sees Alice's message in the group's history.
    await page.get_by_role("button", name="Bob", exact=True).click()
    await expect(page.locator("#speaker")).to_have_text("Bob")
    await page.reload()
    await expect(messages.first).to_contain_text(f"Alice{asked}")

    # 3. The reminder arrives live, with no reload.
    before = await messages.count()
    clock.advance(timedelta(minutes=1, seconds=1))
    await expect(messages).to_have_count(before + 1, timeout=10_000)
    await expect(messages.last).to_contain_text("⏰")
    await expect(messages.last).to_contain_text("stretch")

    # 4. Delete a reminder from the side panel.
    await say(page, "/remind tomorrow at 9 water the plants")
    row = page.locator("#reminders li", has_text="water the plants")
    await expect(row).to_have_count(1)
    page.once("dialog", lambda dialog: dialog.accept())  # "Delete reminder #2 (…) as Bob?"
    await row.get_by_role("button", name="Delete reminder").click()
    await expect(row).to_have_count(0)
    listed = (await api.client.get("/v1/chats/web:group/reminders")).json()
    assert [r["content"] for r in listed] == []

    # User text is text: a <script> in a message is shown, never run.
    await say(page, "look <script>window.pwned = 1</script> @Alice")
    await expect(messages.filter(has_text="<script>window.pwned = 1</script>")).to_have_count(1)
    assert await page.evaluate("window.pwned") is None
    await expect(page.locator("mark.mention", has_text="@Alice").last).to_be_visible()
    if with_llm:
        await page.screenshot(path=str(ARTIFACTS / "playground.png"))


async def test_a_long_chat_opens_at_its_newest_page(servers: Servers, page: Page) -> None:
    api = await servers.start()
    assert api.bot.chatlog is not None
    clock = api.bot.clock
    for n in range(10_000):
        said = LogEntry(f"m{n}", "alice", "Alice", f"message {n}", clock())
        await api.bot.chatlog.append("web:group", said, answered=True)
    await open_playground(page, api)
    messages = page.locator("ol#messages li")
    await expect(messages).to_have_count(50)
    await expect(messages.last).to_contain_text("message 9999")
    await page.get_by_role("button", name="Show older messages").click()
    await expect(messages).to_have_count(100)
    await expect(messages.first).to_contain_text("message 9900")


async def test_people_and_a_phone_sized_screen(servers: Servers, page: Page) -> None:
    api = await servers.start()
    await page.set_viewport_size({"width": 390, "height": 844})
    await open_playground(page, api)
    await page.get_by_label("Add a person").fill("Carol")
    await page.keyboard.press("Enter")
    await expect(page.locator("#speaker")).to_have_text("Carol")
    await expect(page.get_by_role("button", name="Carol (private)")).to_be_visible()
    page.once("dialog", lambda dialog: dialog.accept("Caroline"))
    await page.get_by_role("button", name="Rename Carol").click()
    await expect(page.locator("#speaker")).to_have_text("Caroline")
    await page.get_by_role("button", name="Caroline (private)").click()
    await say(page, "/remind in 2 hours drink water")
    await expect(page.locator("#reminders li", has_text="drink water")).to_be_visible()
    # One column on a phone: nothing is wider than the screen.
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    private = (await api.client.get("/v1/chats")).json()
    assert any(
        c["chat_id"].startswith("web:dm:caroline") or c["chat_id"].startswith("web:dm:carol")
        for c in private
    )
