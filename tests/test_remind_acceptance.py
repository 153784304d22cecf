"""Acceptance: plain phrasings sent through POST /v1/messages with no LLM, in a
Europe/Berlin chat, as users write them (slash commands, aliases, "remind me …" to the
bot, private chats). Each is either stored exactly as meant, read back through the REST
API, or refused with a clear reply and nothing stored. Never a wrong reminder."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from groupmate.function_calls.language import CJK
from tests.conftest import FakeClock
from tests.http_harness import Api, Servers

BERLIN = ZoneInfo("Europe/Berlin")
MONDAY = datetime(2026, 11, 23, 14, 10, tzinfo=BERLIN)  # a Monday afternoon
_chats = itertools.count(1)

# (message, rule or "" for one time, first local fire time, content)
EXACT: list[tuple[str, str, str, str]] = [
    ("/remind tomorrow at 9 call the dentist", "", "2026-11-24 09:00", "call the dentist"),
    ("/remind me tomorrow at 9 to call the dentist", "", "2026-11-24 09:00", "call the dentist"),
    ("/remind tomorrow 9:30 call the dentist", "", "2026-11-24 09:30", "call the dentist"),
    ("/remind at 9pm take out the trash", "", "2026-11-23 21:00", "take out the trash"),
    ("/remind tonight at 8 call mom", "", "2026-11-23 20:00", "call mom"),
    ("/remind next monday at 10am dentist", "", "2026-11-30 10:00", "dentist"),
    ("/remind on friday at 3pm pay invoices", "", "2026-11-27 15:00", "pay invoices"),
    ("/remind on dec 24 at 6pm dinner", "", "2026-12-24 18:00", "dinner"),
    ("/remind 2026-12-24 18:00 dinner", "", "2026-12-24 18:00", "dinner"),
    ("/remind 24.12. 18:00 dinner", "", "2026-12-24 18:00", "dinner"),
    ("/remind in 90 minutes stretch", "", "2026-11-23 15:40", "stretch"),
    ("/remind in 2 hours leave", "", "2026-11-23 16:10", "leave"),
    ("/remind in 3 days follow up", "", "2026-11-26 14:10", "follow up"),
    ("/remind at noon lunch", "", "2026-11-24 12:00", "lunch"),
    ("/remind at midnight deploy", "", "2026-11-24 00:00", "deploy"),
    ("/remind tomorrow at half past 9 call", "", "2026-11-24 09:30", "call"),
    ("/remind call the dentist tomorrow at 9", "", "2026-11-24 09:00", "call the dentist"),
    ("/remind tomorrow call the dentist", "", "2026-11-24 09:00", "call the dentist"),
    ("/remind the day after tomorrow at 9 call", "", "2026-11-25 09:00", "call"),
    ("@groupmate remind me in 10 minutes to check the oven", "", "2026-11-23 14:20",
     "check the oven"),
    ("/remind every day at 7 take pills", "every day at 07:00", "2026-11-24 07:00", "take pills"),
    ("/remind every weekday at 8:30 standup", "every weekday (Mon-Fri) at 08:30",
     "2026-11-24 08:30", "standup"),
    ("/remind us every Monday at 9 to send the report", "every Monday at 09:00",
     "2026-11-30 09:00", "send the report"),
    ("@groupmate remind us every monday at 9am to send the report", "every Monday at 09:00",
     "2026-11-30 09:00", "send the report"),
    ("/remind every friday at 5pm timesheets", "every Friday at 17:00", "2026-11-27 17:00",
     "timesheets"),
    ("/remind every month on the 1st at 9 pay rent", "every month on the 1st at 09:00",
     "2026-12-01 09:00", "pay rent"),
    ("/remind every 2 weeks on monday at 9 sprint review", "every 2 weeks on Monday at 09:00",
     "2026-11-30 09:00", "sprint review"),
    ("/remind every 3 days at 8 water plants", "every 3 days at 08:00", "2026-11-24 08:00",
     "water plants"),
    ("/remind every evening at 8 pills", "every day at 20:00", "2026-11-23 20:00", "pills"),
    ("/remind every other day at 9 run", "every 2 days at 09:00", "2026-11-24 09:00", "run"),
    ("/remind every month on the last day at 17:00 report",
     "every month on the 31st (or the month's last day) at 17:00", "2026-11-30 17:00", "report"),
    ("/提醒 明天上午9点 开会", "", "2026-11-24 09:00", "开会"),
    ("/提醒明天9点开会", "", "2026-11-24 09:00", "开会"),
    ("@groupmate 提醒我明天上午9点开会", "", "2026-11-24 09:00", "开会"),
    ("/提醒 明天下午3点 交报告", "", "2026-11-24 15:00", "交报告"),
    ("/提醒 今晚8点 看电影", "", "2026-11-23 20:00", "看电影"),
    ("/提醒 后天下午两点 开会", "", "2026-11-25 14:00", "开会"),
    ("/提醒 下周一上午10点 复盘", "", "2026-11-30 10:00", "复盘"),
    ("/提醒 12月24日晚上6点 聚餐", "", "2026-12-24 18:00", "聚餐"),
    ("/提醒 10分钟后 喝水", "", "2026-11-23 14:20", "喝水"),
    ("/提醒 2小时后 出门", "", "2026-11-23 16:10", "出门"),
    ("/提醒 半小时后 喝水", "", "2026-11-23 14:40", "喝水"),
    ("/提醒 每天早上7点 吃药", "every day at 07:00", "2026-11-24 07:00", "吃药"),
    ("/提醒 每周一上午9点 周会", "every Monday at 09:00", "2026-11-30 09:00", "周会"),
    ("/提醒 每月1号9点 交房租", "every month on the 1st at 09:00", "2026-12-01 09:00", "交房租"),
    ("/提醒 每个工作日早上8点半 站会", "every weekday (Mon-Fri) at 08:30", "2026-11-24 08:30",
     "站会"),
    ("/提醒 每两周周一上午9点 迭代会", "every 2 weeks on Monday at 09:00", "2026-11-30 09:00",
     "迭代会"),
    ("/提醒 每隔3天早上8点 浇花", "every 3 days at 08:00", "2026-11-24 08:00", "浇花"),
]  # fmt: skip

# (message, what the refusal says)
REFUSED: list[tuple[str, str]] = [
    ("/remind yesterday at 9 call", "in the past"),
    ("/remind 2020-01-01 10:00 old", "in the past"),
    ("/remind today at 9 stand up", "in the past"),
    ("/remind sometime soon call", "couldn't find when"),
    ("/remind at 3 call the plumber", "03:00 or 15:00"),
    ("/remind tomorrow afternoon gym", "At what time"),
    ("/remind every day at 7 and 19 pills", "One time per reminder"),
    ("/remind every weekday at 9 except friday standup", "Exceptions"),
    ("/remind next friday at 5pm drinks", "or the one after"),
    ("/remind next week call bob", "Which day"),
    ("/remind every 2 minutes drink water", "the shortest repeat here is every 5 minutes"),
    ("/remind tomorrow at 9", "What should I remind"),
    ("/提醒 昨天9点 开会", "过去"),
    ("/提醒 明天3点 开会", "03:00 or 15:00"),
    ("/提醒 每天9点和17点 吃药", "一个提醒只能有一个时间"),
]


async def say(api: Api, text: str, chat: str) -> str:
    (reply,) = await api.say(text, chat_id=chat)
    answer: str = reply["text"]
    return answer


def local(moment: str) -> str:
    return f"{datetime.fromisoformat(moment).astimezone(BERLIN):%Y-%m-%d %H:%M}"


async def test_every_phrasing_is_exact_or_refused(servers: Servers) -> None:
    # One bot for the whole corpus (each phrasing in a chat of its own): a failure lists
    # every phrasing that went wrong, not just the first.
    api = await servers.start(clock=FakeClock(MONDAY.astimezone(UTC)))
    wrong: list[str] = []
    for text, rule, first, content in EXACT:
        chat = f"g{next(_chats)}"
        answer = await say(api, text, chat)
        listed = (await api.client.get(f"/v1/chats/{chat}/reminders")).json()
        got = [
            (r["rule"] if r["type"] != "once" else "", local(r["next_fire_at"]), r["content"])
            for r in listed
        ]
        # Confirmed in the language the user wrote in.
        confirmed = (
            ("⏰ 已设置提醒 #1：", "⏰ Reminder #1") if CJK.search(text) else ("⏰ Reminder #1",)
        )
        if not answer.startswith(confirmed) or got != [(rule, first, content)]:
            wrong.append(f"{text!r}: stored {got}, answered {answer!r}")
    for text, why in REFUSED:
        chat = f"g{next(_chats)}"
        answer = await say(api, text, chat)
        listed = (await api.client.get(f"/v1/chats/{chat}/reminders")).json()
        if why not in answer or "⏰" in answer or listed:
            wrong.append(f"{text!r}: expected a refusal with {why!r}, answered {answer!r}")
    assert not wrong, "\n".join(wrong)
    assert len(EXACT) + len(REFUSED) >= 60


async def test_private_chat_takes_plain_words(servers: Servers) -> None:
    api = await servers.start(clock=FakeClock(MONDAY.astimezone(UTC)))
    (reply,) = await api.say(
        "remind me tomorrow at 7:30 to water the plants", chat_id="dm-1", chat_type="private"
    )
    assert reply["text"].startswith("⏰ Reminder #1 set for Tue 24 Nov 07:30")
    (zh,) = await api.say("提醒我每天晚上10点睡觉", chat_id="dm-1", chat_type="private")
    assert zh["text"].endswith("，每天 22:00：睡觉")
