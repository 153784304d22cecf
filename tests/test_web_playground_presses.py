"""The playground's buttons: real <button>s under the bot's messages (their labels as
text), a press POSTed as the person the page speaks as (never a sender the body claims),
with a nonce per press, and what the press said shown to the presser."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from playwright.async_api import Locator, Page, expect
from sqlalchemy import text

from groupmate.bot.presses import ButtonData
from groupmate.storage import Button, OutgoingMessage
from tests.conftest import FakeClock
from tests.http_harness import TOKEN, Api, Servers
from tests.scripted_presses import people, snoozes

pytestmark = pytest.mark.slow

AT = datetime(2026, 11, 28, 9, tzinfo=UTC)
AS_ALICE = {"as_user": "alice", "as_name": "Alice"}


def done(rid: str) -> str:
    return ButtonData("done", rid, AT).encode()


async def test_a_press_is_the_page_person_s_and_bad_ones_are_refused(servers: Servers) -> None:
    api = await servers.start()
    path = "/v1/chats/web:group/presses"
    press = {"data": done("r1"), "press_id": uuid.uuid4().hex}

    async def refused(
        status: int,
        *,
        params: dict[str, str] = AS_ALICE,
        json: dict[str, str] | None = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> str:
        answer = await api.client.post(
            path, params=params, json=json, content=content, headers=headers
        )
        assert answer.status_code == status, answer.text
        return str(answer.json()["error"])

    # The presser is the page's person (as_user), never a sender the body claims.
    assert "as_user" in await refused(422, params={}, json=press)
    await refused(422, json=press | {"sender_id": "u-admin"})
    assert "not one of the bot's buttons" in await refused(422, json=press | {"data": "poll:1"})
    await refused(422, json=press | {"press_id": "short"})
    # A form another site posts (text/plain, no preflight) is not read as a press.
    await refused(422, content=str(press).encode(), headers={"Content-Type": "text/plain"})
    answer = await api.client.post("/v1/chats/tg:-100/presses", params=AS_ALICE, json=press)
    assert answer.status_code == 404
    # Without the token: refused before the body is read, as every /v1 call.
    anonymous = await api.client.post(
        path, params=AS_ALICE, json=press, headers={"Authorization": "Bearer wrong"}
    )
    assert anonymous.status_code == 401
    ok = await api.client.post(path, params=AS_ALICE, json=press)
    assert ok.status_code == 200, ok.text
    assert set(ok.json()) == {"ok", "answer", "repeated", "update"}


async def open_playground(page: Page, api: Api) -> None:
    await page.goto(f"{api.base_url}/")
    await page.get_by_label("Token", exact=True).fill(TOKEN)
    await page.get_by_role("button", name="Open").click()
    await expect(page.locator("#live")).to_have_text("Live")


async def test_buttons_are_real_buttons_with_text_labels(servers: Servers, page: Page) -> None:
    api = await servers.start()
    await open_playground(page, api)
    assert api.bot.live is not None
    rows = (
        (Button("Done", done("r1")), Button("<b>Snooze</b>", "gm1:s:r1:1795856400")),
        (Button("Remind me too", ButtonData("me_too", "r1", AT).encode()),),
    )
    await api.bot.live.send(OutgoingMessage("web:group", "⏰ Reminder: tea", buttons=rows))
    message = page.locator("ol#messages li", has_text="Reminder: tea")
    group = message.get_by_role("group", name="Act on this message")
    await expect(group.get_by_role("button")).to_have_count(3)
    await expect(group.get_by_role("button", name="<b>Snooze</b>")).to_be_visible()
    assert await message.locator("b").count() == 0  # a label is text, never markup
    await group.get_by_role("button", name="Done").click()
    await expect(message.get_by_role("status")).not_to_have_text("")


async def acknowledgements(api: Api) -> int:
    assert api.bot.database is not None
    count = text("SELECT count(*) FROM acknowledgements")
    return int(await api.bot.database.read(lambda s: s.execute(count).scalar_one()))


async def test_a_press_acts_once_and_the_reminder_changes_in_place(
    servers: Servers, page: Page
) -> None:
    """Through the real bot: Alice's reminder arrives with the core's buttons; Bob's Done
    is refused (not his) with nothing changed; as an admin his Done is one
    acknowledgement, and the message changes in place, here and on another open page;
    the same press sent again (its nonce) is a replay."""
    clock = FakeClock()
    api = await servers.start(clock)
    await open_playground(page, api)
    other = await page.context.new_page()
    await open_playground(other, api)
    await page.get_by_label("Message as").fill("/remind in 1 minute stretch")
    await page.get_by_role("button", name="Send").click()
    await expect(page.locator("#reminders li:not(.hint)")).to_have_count(
        1
    )  # not "No reminders yet"
    clock.advance(timedelta(minutes=1, seconds=1))
    # Delivered now, not at the scheduler's next wake-up (late on a loaded machine).
    assert api.bot.reminders is not None and api.bot.reminders.scheduler is not None
    await api.bot.reminders.scheduler.run_due()
    reminder = page.locator("ol#messages li", has_text="Reminder for @Alice")
    buttons = reminder.get_by_role("group", name="Act on this message")
    await expect(buttons.get_by_role("button", name="Done")).to_be_visible(timeout=10_000)
    elsewhere = other.locator("ol#messages li", has_text="Reminder for @Alice")
    await expect(elsewhere.get_by_role("button", name="Done")).to_be_visible()

    await page.get_by_role("button", name="Bob", exact=True).click()
    await buttons.get_by_role("button", name="Done").click()
    await expect(reminder.get_by_role("status")).to_contain_text("only they or a group admin")
    await expect(reminder.get_by_role("status")).to_have_class("why error")
    assert await acknowledgements(api) == 0

    # As a group admin (the page's Admin switch), Bob may mark it done, as /done would.
    await page.get_by_label("Bob is an admin").check()
    async with page.expect_request(lambda r: "/presses?" in r.url) as sent:
        await buttons.get_by_role("button", name="Done").click()
    await expect(reminder).to_contain_text("✅ Done by Bob")
    await expect(elsewhere).to_contain_text("✅ Done by Bob")  # the live edit event
    await expect(elsewhere.get_by_role("button", name="Done")).to_have_count(0)
    assert await acknowledgements(api) == 1

    # The page's request again, with its nonce: a replay, nothing more.
    request = await sent.value
    again = await api.client.post(request.url, json=request.post_data_json)
    assert again.json()["repeated"] is True
    assert await acknowledgements(api) == 1


async def gone_off(page: Page, api: Api, clock: FakeClock, remind: str) -> Locator:
    """Alice's `remind` said on the playground, and gone off: the reminder's message."""
    await open_playground(page, api)
    await page.get_by_label("Message as").fill(remind)
    await page.get_by_role("button", name="Send").click()
    await expect(page.locator("#reminders li:not(.hint)")).to_have_count(
        1
    )  # not "No reminders yet"
    clock.advance(timedelta(minutes=1, seconds=1))
    # Delivered now, not at the scheduler's next wake-up (late on a loaded machine).
    assert api.bot.reminders is not None and api.bot.reminders.scheduler is not None
    await api.bot.reminders.scheduler.run_due()
    reminder = page.locator("ol#messages li", has_text="Reminder for @Alice")
    await expect(reminder.get_by_role("button", name="✅ Done")).to_be_visible(timeout=10_000)
    return reminder


async def test_snooze_10_min_pressed_snoozes_once_and_a_replay_does_nothing(
    servers: Servers, page: Page
) -> None:
    clock = FakeClock()  # 14:05 in Berlin
    api = await servers.start(clock)
    reminder = await gone_off(page, api, clock, "/remind in 1 minute stretch")
    async with page.expect_request(lambda r: "/presses?" in r.url) as sent:
        await reminder.get_by_role("button", name="💤 10 min").click()
    await expect(reminder).to_contain_text(re.compile(r"💤 Snoozed to 14:16 by Alice"))
    (snoozed,) = await snoozes(api.bot)  # one snooze
    request = await sent.value  # the page's request again, with its nonce
    again = await api.client.post(request.url, json=request.post_data_json)
    assert again.json()["repeated"] is True and await snoozes(api.bot) == [snoozed]


async def test_remind_me_too_pressed_adds_bob_once_and_a_new_press_takes_him_off(
    servers: Servers, page: Page
) -> None:
    clock = FakeClock()
    api = await servers.start(clock)
    reminder = await gone_off(page, api, clock, "/remind every day at 14:06 stretch")
    await page.get_by_role("button", name="Bob", exact=True).click()
    me_too = reminder.get_by_role("button", name="👍 Remind me too")
    async with page.expect_request(lambda r: "/presses?" in r.url) as sent:
        await me_too.click()
    await expect(reminder).to_contain_text("👍 Bob will be reminded too")
    assert await people(api.bot) == ["bob"]
    request = await sent.value
    again = await api.client.post(request.url, json=request.post_data_json)
    assert again.json()["repeated"] is True and await people(api.bot) == ["bob"]
    await me_too.click()  # a new press (a new nonce): off again
    await expect(reminder).to_contain_text("Bob won't be reminded")
    assert await people(api.bot) == []
