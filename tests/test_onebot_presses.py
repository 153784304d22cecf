"""QQ has no buttons: the reply words act on a delivered reminder, through the OneBot
fake in OneBot v11's published shapes (a `reply` segment naming the bot's message id),
once, also when the implementation delivers the same event twice."""

from __future__ import annotations

import time
from typing import Any

import pytest
from sqlalchemy import text as sql

from tests.http_harness import Api, Servers
from tests.onebot_client import at, reply, text
from tests.scripted_presses import snoozes
from tests.test_onebot import ALICE, BOB, BOT_A, GROUP, account, fire_now, sent_text, start

CHAT = f"qq:group:{GROUP}"


async def acknowledgements(api: Api) -> int:
    assert api.bot.database is not None
    count = sql("SELECT count(*) FROM acknowledgements")
    return int(await api.bot.database.read(lambda s: s.execute(count).scalar_one()))


def group_event(message_id: int, user_id: int, name: str, message: list[Any]) -> dict[str, Any]:
    """A group message event as OneBot v11 publishes it (onebot-11, event/message.md:
    "群消息"), with a fixed message_id, so that it can be delivered twice."""
    return {
        "time": int(time.time()),
        "post_type": "message",
        "message_type": "group",
        "sub_type": "normal",
        "message_id": message_id,
        "group_id": GROUP,
        "user_id": user_id,
        "anonymous": None,
        "message": message,
        "raw_message": "",
        "font": 0,
        "sender": {"user_id": user_id, "nickname": name, "card": "", "role": "member"},
    }


async def test_reply_words_act_once_on_a_delivered_reminder(servers: Servers) -> None:
    api = await start(servers)
    assert api.bot.reminders is not None
    qq = await account(api)
    await qq.group_message(GROUP, ALICE, [at(BOT_A), text(" /remind every day at 9:00 tea")])
    confirmation = await qq.next_action()
    assert "Reminder #1 set" in sent_text(confirmation)
    await fire_now(api, CHAT, 1)
    delivered = await qq.next_action()
    assert "Reminder for" in sent_text(delivered)

    # Bob's "done": not his reminder to mark done; nothing changes.
    bob = [reply(delivered["message_id"]), text("done")]
    await qq.group_message(GROUP, BOB, bob, nickname="Bob")
    assert "only they or a group admin" in sent_text(await qq.next_action())
    assert await acknowledgements(api) == 0

    # Alice's "好了", delivered twice by the implementation: acted on once.
    event = group_event(880_001, ALICE, "Alice", [reply(delivered["message_id"]), text("好了")])
    await qq.post(event)
    answer = await qq.next_action()
    assert answer["params"]["message"][0] == {"type": "reply", "data": {"id": "880001"}}
    assert sent_text(answer) == "✅ #1 已标记完成。"  # answered in the words it was told
    await qq.post(event)
    with pytest.raises(TimeoutError):
        await qq.next_action(within=1.5)
    assert await acknowledgements(api) == 1

    # Bob's "remind me too" in reply to the confirmation (its id reported by the
    # adapter): he is mentioned from the next time on.
    again = [reply(confirmation["message_id"]), text("remind me too")]
    await qq.group_message(GROUP, BOB, again, nickname="Bob")
    await qq.next_action()
    (view,), _ = await api.bot.reminders.list_for_chat(CHAT)
    assert [m.user_id for m in view.audience.mentions] == [f"qq:{BOB}"]


async def test_a_reply_snooze_10m_snoozes_once_also_when_delivered_twice(
    servers: Servers,
) -> None:
    api = await start(servers)
    assert api.bot.reminders is not None
    qq = await account(api)
    await qq.group_message(GROUP, ALICE, [at(BOT_A), text(" /remind every day at 9:00 tea")])
    await qq.next_action()
    await fire_now(api, CHAT, 1)
    delivered = await qq.next_action()
    event = group_event(
        880_002, ALICE, "Alice", [reply(delivered["message_id"]), text("snooze 10m")]
    )
    await qq.post(event)
    assert sent_text(await qq.next_action()).startswith("💤 Snoozed #1 until ")
    (snoozed,) = await snoozes(api.bot)  # one snooze
    await qq.post(event)  # the same message id again: nothing more
    with pytest.raises(TimeoutError):
        await qq.next_action(within=1.5)
    assert await snoozes(api.bot) == [snoozed]  # the same one, unchanged
