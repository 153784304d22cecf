"""The pages' layout in a real browser, at a laptop's size and a phone's: in the
playground only the messages scroll (the composer, the chats and the people stay in
view); the dashboard's tables fit, or scroll sideways in a box that says so."""

from __future__ import annotations

import pytest
from playwright.async_api import Locator, Page, expect

from groupmate.storage.chatlog import LogEntry
from tests.browser import ARTIFACTS
from tests.http_harness import TOKEN, Api, Servers

pytestmark = pytest.mark.slow

SIZES = [(1280, 800), (390, 844)]


async def in_view(page: Page, locator: Locator) -> None:
    """The element is wholly inside the window (not below or beside it)."""
    box = await locator.bounding_box()
    size = page.viewport_size
    assert box is not None and size is not None
    assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"], box
    assert box["x"] >= 0 and box["x"] + box["width"] <= size["width"], box


async def with_history(servers: Servers, messages: int) -> Api:
    api = await servers.start()
    assert api.bot.chatlog is not None
    clock = api.bot.clock
    for n in range(messages):
        text = f"message {n} " + "words " * (n % 7)
        said = LogEntry(f"history-{n}", "alice", "Alice", text, clock())
        await api.bot.chatlog.append("web:group", said, answered=True)
    return api


@pytest.mark.parametrize(("width", "height"), SIZES, ids=["laptop", "phone"])
async def test_only_the_messages_scroll(
    servers: Servers, page: Page, width: int, height: int
) -> None:
    api = await with_history(servers, 60)
    await api.say("/remind every day at 9 stretch", chat_id="web:group")
    await api.say("/remind tomorrow at 18:00 call mum", chat_id="web:group")
    await page.set_viewport_size({"width": width, "height": height})
    await page.goto(f"{api.base_url}/")
    await page.get_by_label("Token", exact=True).fill(TOKEN)
    await page.get_by_role("button", name="Open").click()
    await expect(page.locator("#live")).to_have_text("Live")
    messages = page.locator("ol#messages")
    await expect(messages.locator("li")).to_have_count(50)
    await expect(page.locator("#reminders li")).to_have_count(2)

    # The page itself does not scroll; the message list does, and shows its newest.
    page_scrolls = await page.evaluate(
        "document.scrollingElement.scrollHeight > document.scrollingElement.clientHeight"
        " || document.scrollingElement.scrollWidth > document.scrollingElement.clientWidth"
    )
    assert not page_scrolls
    assert await messages.evaluate("list => list.scrollHeight > list.clientHeight")
    for visible in (
        page.get_by_label("Message as"),
        page.get_by_role("button", name="Send"),
        page.locator("#chats"),
        page.locator("#people"),
        page.locator("#live"),
        messages.locator("li").last,
    ):
        await in_view(page, visible)

    # A message that did not go says so, in view.
    await page.route("**/v1/messages", lambda route: route.abort())
    await page.get_by_label("Message as").fill("hello")
    await page.get_by_role("button", name="Send").click()
    problem = page.locator("#problem")
    await expect(problem).to_have_text("Not sent: The bot cannot be reached: is it running?")
    await expect(messages.locator("li.unsent")).to_contain_text("(not sent)")
    await in_view(page, problem)
    await page.screenshot(path=str(ARTIFACTS / f"playground-{width}x{height}.png"))


FONTS = (
    "Noto Color Emoji",
    "Apple Color Emoji",
    "Segoe UI Emoji",
    "Noto Sans CJK SC",
    "PingFang SC",
    "Microsoft YaHei",
)


async def test_the_pages_name_an_emoji_and_a_cjk_font(servers: Servers, page: Page) -> None:
    """Reminders start with ⏰ and chats are often in Chinese: both pages' text, the
    messages too, asks for an emoji font and a CJK font of each desktop platform."""
    api = await servers.start()
    await api.say("/remind in 1 hour 喝水", chat_id="web:group")
    await page.goto(f"{api.base_url}/")
    await page.get_by_label("Token", exact=True).fill(TOKEN)
    await page.get_by_role("button", name="Open").click()
    message = page.locator("ol#messages li", has_text="喝水").last
    await expect(message).to_contain_text("⏰")
    style = "e => getComputedStyle(e).fontFamily"
    for element in (page.locator("body"), message, page.get_by_label("Message as")):
        family = await element.evaluate(style)
        assert all(f'"{font}"' in family for font in FONTS), family
    await page.goto(f"{api.base_url}/admin#reminders")
    row = page.locator("main tbody tr", has_text="喝水")
    await expect(row).to_have_count(1)
    for element in (page.locator("body"), row.locator("td").nth(2)):
        family = await element.evaluate(style)
        assert all(f'"{font}"' in family for font in FONTS), family
