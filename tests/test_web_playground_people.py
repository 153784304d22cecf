"""The playground acts as the person selected, in a real browser: its side panel has
that person's rights (the same the chat commands have), deleting asks first, an admin
switch per person, the time zone editable by an admin, and the audit says truthfully
who did it and how (here with no token configured: no auth)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Dialog, Page, expect

from tests.conftest import FakeClock, eventually
from tests.http_harness import Api, Servers

pytestmark = pytest.mark.slow


async def open_playground(page: Page, api: Api) -> None:
    await page.goto(f"{api.base_url}/")
    await expect(page.locator("#live")).to_have_text("Live")


async def say(page: Page, text: str) -> None:
    await page.get_by_label("Message as").fill(text)
    await page.get_by_role("button", name="Send").click()


async def audit(api: Api, tool: str) -> list[dict[str, Any]]:
    answer = await api.client.get("/v1/audit", params={"tool": tool})
    entries: list[dict[str, Any]] = answer.json()["entries"]
    return entries


async def test_the_side_panel_acts_as_the_person_speaking(servers: Servers, page: Page) -> None:
    api = await servers.start(FakeClock(), adapters={"webhook": {"token": None}})
    await open_playground(page, api)
    await say(page, "/remind tomorrow at 9 water the plants")  # Alice's
    row = page.locator("#reminders li", has_text="water the plants")
    await expect(row).to_have_count(1)

    # Bob may not delete Alice's reminder, as `/cancel` would refuse him; he is asked
    # first, and saying no sends nothing.
    await page.get_by_role("button", name="Bob", exact=True).click()
    asked: list[str] = []

    async def dismiss(dialog: Dialog) -> None:
        asked.append(dialog.message)
        await dialog.dismiss()

    page.once("dialog", dismiss)
    await row.get_by_role("button", name="Delete reminder #1").click()
    await eventually(lambda: asked == ["Delete reminder #1 (“water the plants”) as Bob?"])
    assert await audit(api, "reminder_delete") == []

    page.once("dialog", lambda dialog: dialog.accept())
    await row.get_by_role("button", name="Delete reminder #1").click()
    await expect(row.locator(".why")).to_have_text(
        "Reminder #1 was set by Alice; only they or a group admin can delete it."
    )
    listed = (await api.client.get("/v1/chats/web:group/reminders")).json()
    assert [r["content"] for r in listed] == ["water the plants"]

    # Bob made an admin may; the audit names him, the playground, and no auth.
    await page.get_by_label("Bob is an admin").check()
    page.once("dialog", lambda dialog: dialog.accept())
    await row.get_by_role("button", name="Delete reminder #1").click()
    await expect(row).to_have_count(0)
    assert (await api.client.get("/v1/chats/web:group/reminders")).json() == []
    done, refused = await audit(api, "reminder_delete")
    for entry, outcome in ((done, "ok"), (refused, "refused")):
        assert (entry["sender_id"], entry["sender_name"], entry["source"], entry["auth"]) == (
            "bob",
            "Bob",
            "playground",
            "none",
        )
        assert entry["outcome"] == outcome

    # The admin changes the time zone on the right; /tz works for him too.
    await page.get_by_label("Time zone", exact=True).fill("Asia/Tokyo")
    await page.get_by_role("button", name="Change").click()
    await expect(page.locator("#zone .why")).to_have_text("Now Asia/Tokyo.")
    settings = (await api.client.get("/v1/chats/web:group/settings")).json()
    assert settings["timezone"] == "Asia/Tokyo"
    await say(page, "/tz America/New_York")
    await expect(page.locator("ol#messages li.bot").last).to_contain_text("America/New_York")
    settings = (await api.client.get("/v1/chats/web:group/settings")).json()
    assert settings["timezone"] == "America/New_York"

    # Not an admin: the zone is shown, with who may change it, and /tz is refused.
    await page.get_by_label("Bob is an admin").uncheck()
    await expect(page.locator("#zone")).to_contain_text(
        "Time zone: America/New_York. Only an admin can change it"
    )
    await expect(page.get_by_role("button", name="Change")).to_have_count(0)
    await say(page, "/tz UTC")
    await expect(page.locator("ol#messages li.bot").last).to_contain_text(
        "Only a group admin can change this chat's time zone."
    )

    # The dashboard's audit says the same in words.
    await page.goto(f"{api.base_url}/admin#audit")
    audited = page.locator("main tbody tr", has_text="reminder_delete").first
    await expect(audited).to_contain_text("Bob (bob)")
    await expect(audited).to_contain_text("playground")
    await expect(audited).to_contain_text("no auth (insecure)")
