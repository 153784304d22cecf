"""What the DingTalk adapter sends, against the local DingTalk (tests/fake_dingtalk.py):
answers by session webhook (tried again when a send fails for a moment, the group API
only when DingTalk ended the session), reminders that notify their people on either
path, rate limits (waited out for answers, left to the reminder engine for reminders),
single chats, and a reminder that fell due while the bot was down."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from groupmate.storage import Member, OutgoingMessage, SendError
from tests.fake_dingtalk import CLIENT_ID, GROUP, FakeDingTalk
from tests.http_harness import Servers, delivered_ids, fell_due_while_down, make_due
from tests.test_dingtalk import fake, sent, start

__all__ = ["fake"]  # the fixture, shared with test_dingtalk.py


async def test_without_a_valid_webhook_answers_go_by_the_group_api_and_limits_wait(
    servers: Servers, fake: FakeDingTalk
) -> None:
    api = await start(servers, fake)
    # A message whose session webhook is about to expire: not used.
    fake.push(fake.message("/remind in 2 hours stretch", webhook_for=30))
    fake.rate_limited = 1  # the first robot send is answered 429, Retry-After: 1
    began = time.monotonic()
    (reply,) = await sent(fake, 1, within=15)
    assert time.monotonic() - began >= 1.0  # waited out, then sent once
    assert reply["via"] == "groupMessages/send"
    assert reply["body"]["openConversationId"] == GROUP and reply["body"]["robotCode"] == CLIENT_ID
    fake.qps_limited = 1  # DingTalk's own throttle: 403 QpsLimit, no Retry-After
    fake.push(fake.message("/reminders", webhook_for=30))
    assert "stretch" in (await sent(fake, 2, within=15))[1]["text"]
    fake.too_fast = 1  # a session webhook's "send too fast" (errcode 130101) waits too
    fake.push(fake.message("/reminders"))
    listing = (await sent(fake, 3, within=15))[2]
    assert listing["via"] == "session" and "stretch" in listing["text"]
    assert len(fake.sent()) == 3  # each once
    fake.end_sessions()  # the webhook is refused before its time: the group API instead
    fake.revoke()  # and DingTalk dropped the token early: 401 InvalidAuthentication, renewed
    await make_due(api.bot)
    fired = (await sent(fake, 4))[3]
    assert fired["via"] == "groupMessages/send" and "stretch" in fired["text"]
    assert fake.token_requests == 2
    assert api.bot.adapters[0].status()["last_error"] is None


async def test_an_answer_whose_webhook_send_fails_is_sent_again_by_the_webhook(
    servers: Servers, fake: FakeDingTalk
) -> None:
    """A 5xx may have been taken, a refused message says nothing of the session: neither
    drops the webhook for the group API. The message was acknowledged: the answer is
    tried again (1 s, 2 s)."""
    await start(servers, fake)
    fake.session_errors.append((500, {"errcode": -1, "errmsg": "系统繁忙"}))
    fake.push(fake.message("/reminders"))
    (first,) = await sent(fake, 1, within=15)
    fake.session_errors.append((200, {"errcode": 400013, "errmsg": "invalid content"}))
    fake.push(fake.message("/reminders"))
    second = (await sent(fake, 2, within=15))[1]
    assert (first["via"], second["via"]) == ("session", "session")
    assert not fake.session_errors
    await asyncio.sleep(0.3)
    assert len(fake.sent()) == 2


async def test_a_reminder_without_a_webhook_notifies_its_people_in_their_single_chats(
    servers: Servers, fake: FakeDingTalk, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    api = await start(servers, fake)
    for person in ("bob01", "carol01", ""):  # "": a guest from outside the org
        fake.push(fake.message("/reminders", sender=person, webhook_for=30))
    await sent(fake, 3)
    ask = "/remind @Bob @Carol @Guest in 2 hours stretch"
    fake.push(fake.message(ask, at=("bob01", "carol01", ""), webhook_for=30))
    assert "Reminder #1 for @Bob" in (await sent(fake, 4))[3]["text"]
    await make_due(api.bot)
    group, notice = (await sent(fake, 6))[4:6]
    # In the group, by the robot's own send: the names shown, no one notified by it...
    assert group["via"] == "groupMessages/send"
    assert group["text"].startswith("⏰ Reminder for @Bob")
    assert all(n in group["text"] for n in ("@Carol", "@Guest", "stretch"))
    # ...so each of its people in the org gets it in their single chat, in one request.
    assert notice["via"] == "oToMessages/batchSend"
    assert notice["body"]["userIds"] == ["alice01", "bob01", "carol01"]  # and who set it
    assert notice["text"].startswith("⏰ Reminder in Team: Reminder for @Bob")
    assert "1 mentioned people outside the org" in caplog.text  # the guest: by name only
    # The reminder's id is the group message's: quoting it snoozes it.
    await delivered_ids(api.bot)
    fake.push(fake.message("snooze 10m", sender="bob01", quote=group["text"], webhook_for=30))
    assert (await sent(fake, 7))[6]["text"].startswith("💤 Snoozed #1")


async def test_a_throttled_reminder_fails_at_once_and_the_engine_sends_it_later(
    servers: Servers, fake: FakeDingTalk
) -> None:
    """Inside a reminder's send no rate-limit sleep: the engine's backoff waits, so the
    send is one request (the engine cancels a send after 30 s)."""
    api = await start(servers, fake)
    fake.push(fake.message("/remind in 2 hours stretch", webhook_for=30))
    await sent(fake, 1)
    fake.qps_limited = 1
    await make_due(api.bot)
    fired = (await sent(fake, 2))[1]
    assert fired["via"] == "groupMessages/send" and "stretch" in fired["text"]
    [row] = (await api.client.get("/v1/deliveries")).json()
    assert (row["outcome"], row["attempts"]) == ("sent", 2)  # the first refused, at once
    await asyncio.sleep(0.3)  # the group's message once; Alice's own notice (for @Alice)
    routes = [m["via"] for m in fake.sent()]
    assert routes == ["groupMessages/send"] * 2 + ["oToMessages/batchSend"]


async def test_a_single_chat_is_private_and_its_reminders_reach_the_person(
    servers: Servers, fake: FakeDingTalk
) -> None:
    api = await start(servers, fake)
    # No @ in a single chat; the webhook lapses before the reminder is due.
    fake.push(fake.message("/remind in 2 hours drink water", private=True, webhook_for=30))
    (reply,) = await sent(fake, 1)
    assert reply["text"].startswith("⏰ Reminder #1")
    assert reply["via"] == "oToMessages/batchSend"  # the webhook too close to its expiry
    await servers.aclose()
    api = await start(servers, fake)  # the single chat's person comes from the database

    await make_due(api.bot)
    fired = (await sent(fake, 2))[1]
    assert fired["via"] == "oToMessages/batchSend" and "drink water" in fired["text"]
    assert fired["body"]["userIds"] == ["alice01"]
    # One that names its person: the single chat's message notifies, no second notice.
    alice = Member("dt:alice01", "Alice")
    ping = OutgoingMessage("dt:cidSINGLEalice01==", "⏰ Reminder for @Alice: tea", people=(alice,))
    await api.bot.adapters[0].send(ping)
    await asyncio.sleep(0.3)
    assert [m["via"] for m in fake.sent()[2:]] == ["oToMessages/batchSend"]


async def test_a_single_chat_with_someone_outside_the_org_is_refused_without_a_request(
    servers: Servers, fake: FakeDingTalk
) -> None:
    """oToMessages/batchSend takes staff ids only: a guest's single chat can't be
    reached once its webhook is gone."""
    api = await start(servers, fake)
    fake.push(fake.message("/reminders", sender="", private=True))
    await sent(fake, 1)  # by the webhook
    fake.end_sessions()  # it ends: only the robot's own send is left
    with pytest.raises(SendError, match="outside the org"):
        await api.bot.adapters[0].send(OutgoingMessage("dt:cidSINGLE==", "⏰ tea"))
    assert [m["via"] for m in fake.sent()] == ["session"]  # no batchSend tried


async def test_a_reminder_due_while_the_bot_was_down_comes_once_late_with_the_note(
    servers: Servers, fake: FakeDingTalk
) -> None:
    api = await start(servers, fake)
    fake.push(fake.message("/remind in 2 hours stretch"))
    await sent(fake, 1)
    await servers.aclose()
    fell_due_while_down(servers)
    api = await start(servers, fake)
    fired = (await sent(fake, 2))[1]
    assert fired["text"].startswith("⏰ Reminder for @Alice: stretch")
    assert "after downtime" in fired["text"]
    await asyncio.sleep(0.5)  # once in the group (its webhook went with the last run)...
    routes = [m["via"] for m in fake.sent()]
    assert routes == ["session", "groupMessages/send", "oToMessages/batchSend"]
    assert "after downtime" in fake.sent()[2]["text"]  # ...and once to Alice, who it's for
    assert api.bot.adapters[0].status()["state"] == "connected"


async def test_remind_us_ats_the_member_who_asked_and_an_admins_ats_everyone(
    servers: Servers, fake: FakeDingTalk
) -> None:
    api = await start(servers, fake)
    fake.push(fake.message("/remind us in 2 hours stretch", sender="bob01"))
    assert "mentioning only you" in (await sent(fake, 1))[0]["text"]
    fake.push(fake.message("/remind everyone in 2 hours run", admin=True))
    assert "Reminder #2 for everyone" in (await sent(fake, 2))[1]["text"]
    await make_due(api.bot)
    fired = {m["text"]: m["body"]["at"] for m in (await sent(fake, 4))[2:]}
    # The session webhook's own @: the person's id in the text and in atUserIds, and
    # isAtAll for everyone.
    assert fired == {
        "⏰ Reminder for @bob01: stretch": {
            "atUserIds": ["bob01"], "atDingtalkIds": [], "isAtAll": False,
        },
        "⏰ Reminder for everyone (set by @alice01): run": {
            "atUserIds": ["alice01"], "atDingtalkIds": [], "isAtAll": True,
        },
    }  # fmt: skip
