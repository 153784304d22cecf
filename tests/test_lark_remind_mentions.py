"""Lark reminders mention their people with Lark's own `<at user_id=…>` tags: a member's
"remind us" the member who asked, an admin's (the chat's owner) reminder for everyone
`<at user_id="all">` and the admin. Against the local Lark open API (tests/fake_lark.py)."""

from __future__ import annotations

from tests.fake_lark import BOT_OPEN_ID, OWNER, FakeLark, message_event, post_event, said
from tests.http_harness import Servers, make_due
from tests.test_lark import fake, start

__all__ = ["fake"]  # the fixture, shared with test_lark.py
BOT = (BOT_OPEN_ID, "groupmate")


async def test_remind_us_ats_the_member_who_asked_and_an_admins_ats_all(
    servers: Servers, fake: FakeLark
) -> None:
    api = await start(servers, fake)
    ask = message_event("@_user_1 /remind us in 2 hours stretch", mentions=(BOT,), sender="ou_bob")
    await post_event(fake, api.base_url, ask)
    assert "mentioning only you" in said((await fake.wait_sent(1))[0])
    ask = message_event("@_user_1 /remind everyone in 2 hours run", mentions=(BOT,), sender=OWNER)
    await post_event(fake, api.base_url, ask)
    assert "Reminder #2 for everyone" in said((await fake.wait_sent(2))[1])
    await make_due(api.bot)
    fired = sorted(said(m) for m in (await fake.wait_sent(4))[2:])
    # Reminders with buttons: cards, whose mentions are Lark's <at id=…> (all: everyone).
    assert fired == [
        "<at id=all></at> ⏰ Reminder for everyone (set by <at id=ou_ada></at>): run",
        "⏰ Reminder for <at id=ou_bob></at>: stretch",
    ]
