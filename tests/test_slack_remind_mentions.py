"""Slack reminders mention their people as Slack writes mentions: `<@U…>` for the member
who asked "remind us", and `<!channel>` with the admin who set it for everyone. Against
the local Slack Web API and signed Events API posts (tests/fake_slack.py)."""

from __future__ import annotations

from tests.conftest import eventually
from tests.fake_slack import BOT_USER, FakeSlack, message_event, post_event
from tests.http_harness import Servers, make_due
from tests.test_slack_mentions import fake, start

__all__ = ["fake"]  # the fixture, shared with test_slack_mentions.py


async def test_remind_us_mentions_the_member_who_asked_and_an_admins_the_channel(
    servers: Servers, fake: FakeSlack
) -> None:
    api = await start(servers, fake)
    ask = message_event(f"<@{BOT_USER}> /remind us in 2 hours stretch", user="UBOB")
    await post_event(api.base_url, ask)
    await eventually(lambda: len(fake.posted()) == 1, within=10)
    assert "mentioning only you" in fake.posted()[0]["text"]
    ask = message_event(f"<@{BOT_USER}> /remind everyone in 2 hours run", user="UADMIN")
    await post_event(api.base_url, ask)
    await eventually(lambda: len(fake.posted()) == 2, within=10)
    assert "Reminder #2 for everyone" in fake.posted()[1]["text"]
    await make_due(api.bot)
    await eventually(lambda: len(fake.posted()) == 4, within=10)
    assert sorted(body["text"] for body in fake.posted()[2:]) == [
        "<!channel> ⏰ Reminder for everyone (set by <@UADMIN>): run",
        "⏰ Reminder for <@UBOB>: stretch",
    ]
