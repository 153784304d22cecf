"""The dashboard in a real browser: deliveries, editing a reminder, running a tool and a
model turn with its tool call; once with the stub LLM and once with none."""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.async_api import Page, Response, expect

from groupmate.storage import OutgoingMessage, SendError
from groupmate.testing.stub_llm import StubLLM, tool_then_answer
from tests.browser import ARTIFACTS
from tests.conftest import FakeClock, eventually
from tests.fake_slack import SIGNING_SECRET, FakeSlack
from tests.http_harness import TOKEN, Api, Servers, llm_section

pytestmark = pytest.mark.slow


async def open_dashboard(page: Page, api: Api, section: str = "") -> None:
    await page.goto(f"{api.base_url}/admin#{section}")
    await page.get_by_label("Token", exact=True).fill(TOKEN)
    await page.get_by_role("button", name="Open").click()
    await expect(page.get_by_role("dialog")).to_be_hidden()


async def test_dashboard_with_the_stub_llm(servers: Servers, page: Page, stub: StubLLM) -> None:
    clock = FakeClock()
    api = await servers.start(clock, llm=llm_section(stub))
    stub.fallback = tool_then_answer("reminder_list", {}, "Nothing is set yet.")
    await api.say("@groupmate which reminders are set?", chat_id="web:group")
    await api.say("/remind in 1 minute stand up", chat_id="web:group")
    clock.advance(timedelta(minutes=1, seconds=1))
    await open_dashboard(page, api, "deliveries")

    # The delivery in the history.
    rows = page.locator("main tbody tr")
    await expect(rows.filter(has_text="stand up")).to_have_count(1, timeout=10_000)
    await expect(rows.filter(has_text="stand up")).to_contain_text("sent")

    # Edit a reminder.
    await api.say("/remind tomorrow at 9 water the plants", chat_id="web:group")
    await page.get_by_role("button", name="Reminders").click()
    await page.get_by_role("button", name="Edit reminder #2 in web:group").click()
    await page.get_by_label("New time").fill("tomorrow at 10")
    await page.get_by_label("What").first.fill("water the ferns")
    await page.get_by_role("button", name="Save").click()
    row = rows.filter(has_text="water the ferns")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("10:00")

    # Run a tool from the tools page.
    await page.get_by_role("button", name="Tools").click()
    await page.locator("#run-tool").select_option("reminder_list")
    await page.locator("#run-chat").fill("web:group")
    await page.get_by_role("button", name="Run").click()
    await expect(page.locator("#run-result")).to_contain_text("water the ferns")

    # Switch a tool off in the chat, then read who did what in the audit log.
    await page.locator("#switch-chat").fill("web:group")
    await page.locator("#switch-tool").select_option("reminder_history")
    await page.locator("#switch-state").select_option("off")
    await page.get_by_role("button", name="Switch").click()
    await expect(page.locator("#switch-result")).to_contain_text("reminder_history")
    (refused,) = await api.say("/history", chat_id="web:group")
    assert refused["text"].startswith("That is switched off in this chat")
    await api.say("/remind in 5 minutes <b>tea</b>", chat_id="web:group")
    await page.get_by_role("button", name="Audit").click()
    await expect(rows.filter(has_text="chat_tools")).to_contain_text("REST API")
    await expect(rows.filter(has_text="reminder_update")).to_contain_text("REST API")
    typed = rows.filter(has_text="<b>tea</b>")  # the user's text, shown as text
    await expect(typed).to_contain_text("command")
    await expect(page.locator("main b")).to_have_count(0)
    await page.locator("#audit-tool").fill("chat_tools")
    await page.get_by_role("button", name="Filter").click()
    await expect(rows).to_have_count(1)

    # A model turn with its tool call.
    await page.get_by_role("button", name="Model activity").click()
    turn = rows.filter(has_text="which reminders are set?")
    await expect(turn).to_contain_text("reminder_list({}) → ")
    await expect(turn).to_contain_text("reminder_list: words: ")  # offered, and why
    await expect(turn).to_contain_text("There are no active reminders in this chat.")
    await page.screenshot(path=str(ARTIFACTS / "dashboard.png"), full_page=True)

    for section in ("Chats", "Usage", "Audit", "Status"):
        await page.get_by_role("button", name=section).click()
        await expect(page.locator("main h2")).to_have_text(section)
    await expect(page.locator("main pre")).to_contain_text("llm: ")
    assert TOKEN not in await page.content()


async def test_dashboard_without_an_llm_and_a_failed_delivery(servers: Servers, page: Page) -> None:
    clock = FakeClock()
    secret = "s3cret-plugin-token"
    broken = {"module": "tests.plugin_fixtures.dice", "settings": {"sides": 1, "token": secret}}
    api = await servers.start(clock, plugins=[broken, "tests.plugin_fixtures.plain"])
    sent: list[str] = []
    down = True

    async def telegram(message: OutgoingMessage) -> str:
        if down:
            raise SendError("Telegram answered HTTP 502")
        sent.append(message.text)
        return "m-1"

    api.bot.on_outgoing(telegram, chat_prefix="tg:")
    await api.say("/remind in 1 minute call home", chat_id="tg:42")  # Telegram is down
    # No process here runs Slack: that one waits, and every page says so.
    await api.say("/remind in 1 minute stand up", chat_id="sl:C1")
    clock.advance(timedelta(minutes=1, seconds=1))

    async def failed() -> bool:
        answer = await api.client.get("/v1/deliveries", params={"outcome": "failed"})
        return bool(answer.json())

    await eventually(failed, within=15)
    await open_dashboard(page, api, "deliveries?outcome=failed")
    row = page.locator("main tbody tr", has_text="call home")
    await expect(row).to_contain_text("failed", timeout=15_000)
    clock.advance(timedelta(minutes=2))  # two watchdog sweeps: nobody claimed it
    await page.reload()
    await expect(page.get_by_role("status", name="Waiting reminders")).to_have_text(
        "1 reminder in Slack chats is waiting: no running groupmate process delivers there. "
        "Start a process with adapters.slack set on this database to send them; any past "
        "its grace window is recorded as missed."
    )
    down = False  # the platform is back
    await row.get_by_role("button", name="Retry delivery").click()
    await expect(page.locator("main tbody tr", has_text="call home")).to_have_count(0)
    assert sent and "call home" in sent[0]
    audited = (await api.client.get("/v1/audit", params={"tool": "delivery_retry"})).json()
    (retried,) = audited["entries"]
    assert (retried["chat_id"], retried["source"], retried["outcome"]) == (
        "tg:42",
        "dashboard",
        "ok",
    )
    await page.get_by_role("button", name="Model activity").click()
    await expect(page.locator("main h2")).to_have_text("Model activity")

    # A plugin that did not load says why on the status page; one that did, its tools.
    await page.get_by_role("button", name="Status").click()
    plugins = page.locator("table", has=page.locator("caption", has_text="Plugins"))
    dice = plugins.locator("tbody tr", has_text="dice")
    await expect(dice).to_contain_text("failed")
    await expect(dice).to_contain_text("plugins[0].settings.sides: Input should be greater than 1")
    await expect(plugins.locator("tbody tr", has_text="plain")).to_contain_text("split_bill")
    assert secret not in await page.content()


async def test_the_status_page_shows_each_adapters_state_and_no_secret(
    servers: Servers, page: Page
) -> None:
    fake = FakeSlack()
    fake.server.start()
    try:
        wrong = "xoxb-wrong-token-secret"
        slack = {"bot_token": wrong, "signing_secret": SIGNING_SECRET, "api_url": fake.api_url}
        api = await servers.start(adapters={"slack": slack})
        await eventually(lambda: api.bot.adapters[0].status()["state"] == "auth failed")
        await open_dashboard(page, api, "status")
        adapters = page.locator("table", has=page.locator("caption", has_text="Adapters"))
        row = adapters.locator("tbody tr", has_text="slack")
        await expect(row.locator("td").nth(1)).to_have_text("auth failed")
        await expect(row.locator("td").nth(2)).to_have_text("auth.test: invalid_auth")
        await expect(row).to_contain_text("mode: events")
        content = await page.content()
        assert wrong not in content and SIGNING_SECRET not in content
    finally:
        fake.server.stop()


async def test_the_pages_ask_for_nothing_that_is_not_there(servers: Servers, page: Page) -> None:
    """Every file the playground and the dashboard load, their icon too, is served:
    no 404 in a browser's console (the API's 401s before a token is typed are the
    pages' question for one)."""
    api = await servers.start(FakeClock())
    missing: list[str] = []

    def served(response: Response) -> None:
        if response.status >= 400 and "/v1/" not in response.url:
            missing.append(response.url)

    page.on("response", served)
    for path in ("/", "/admin"):
        await page.goto(f"{api.base_url}{path}")
        await page.wait_for_load_state("networkidle")
        icon = await page.locator("link[rel=icon]").get_attribute("href")
        assert icon is not None
        answer = await page.request.get(f"{api.base_url}{icon}")
        assert answer.status == 200 and answer.headers["content-type"] == "image/svg+xml"
    favicon = await page.request.get(f"{api.base_url}/favicon.ico")
    assert favicon.status == 200 and b"<svg" in await favicon.body()
    assert missing == []
