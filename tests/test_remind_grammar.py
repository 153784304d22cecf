"""The /remind grammar, case by case: exact rule, first local fire time and content, or a
refusal. Every case goes on through ReminderArgs (both validation stages) and its
`resolve`, so the table checks what would really be stored."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

import groupmate.function_calls.handlers  # noqa: F401  (registers the built-in tools)
from groupmate.function_calls import InvalidArgumentsError
from groupmate.function_calls.grammar import GrammarError, parse_reminder
from groupmate.function_calls.handlers import builtin_tools
from groupmate.function_calls.handlers.reminder_words import describe_schedule
from tests.conftest import make_ctx

BERLIN = ZoneInfo("Europe/Berlin")
SAT = datetime(2026, 11, 21, 14, 5, tzinfo=BERLIN)  # a Saturday afternoon
SUN_EVE = datetime(2026, 11, 22, 20, 30, tzinfo=BERLIN)  # a Sunday evening
SUN_LATE = datetime(2026, 11, 22, 21, 30, tzinfo=BERLIN)
BEFORE_9 = datetime(2026, 11, 23, 8, 59, tzinfo=BERLIN)  # Monday, just before 09:00
AFTER_9 = datetime(2026, 11, 23, 9, 1, tzinfo=BERLIN)  # Monday, just after 09:00
DST_SPRING = datetime(2026, 3, 28, 12, 0, tzinfo=BERLIN)  # the day before 02:00 -> 03:00
DST_AUTUMN = datetime(2026, 10, 24, 12, 0, tzinfo=BERLIN)  # the day before 03:00 -> 02:00


def stored(phrase: str, now: datetime) -> tuple[str, str, str]:
    """(rule, first local fire time, content) as reminder_set would store them."""
    parsed = parse_reminder(phrase, now)
    ctx = make_ctx(clock=lambda: now.astimezone(UTC))
    raw = parsed.arguments()
    raw.pop("who", None)
    args = builtin_tools().get("reminder_set").validate(raw, ctx)
    schedule, first = args.resolve(ctx)  # type: ignore[attr-defined]
    return describe_schedule(schedule), f"{first.astimezone(BERLIN):%Y-%m-%d %H:%M}", parsed.content


def once(moment: str) -> str:
    local = datetime.strptime(moment, "%Y-%m-%d %H:%M")
    return f"once, on {local:%a %d %b %Y} at {local:%H:%M}"


CASES: list[tuple[datetime, str, str, str, str]] = [
    # --- English, one time -----------------------------------------------------------
    (SAT, "tomorrow at 9 call the dentist", "", "2026-11-22 09:00", "call the dentist"),
    (SAT, "tomorrow 9:30 call the dentist", "", "2026-11-22 09:30", "call the dentist"),
    (SAT, "at 9pm take out the trash", "", "2026-11-21 21:00", "take out the trash"),
    (SUN_EVE, "at 9pm take out the trash", "", "2026-11-22 21:00", "take out the trash"),
    (SUN_LATE, "at 9pm take out the trash", "", "2026-11-23 21:00", "take out the trash"),
    (SAT, "tonight at 8 movie night", "", "2026-11-21 20:00", "movie night"),
    (SAT, "next monday at 10am dentist", "", "2026-11-23 10:00", "dentist"),
    (SUN_EVE, "next monday at 10am dentist", "", "2026-11-23 10:00", "dentist"),
    (BEFORE_9, "next monday at 10am dentist", "", "2026-11-30 10:00", "dentist"),
    (SAT, "on friday at 3pm pay the invoices", "", "2026-11-27 15:00", "pay the invoices"),
    (SAT, "friday 3pm pay the invoices", "", "2026-11-27 15:00", "pay the invoices"),
    (SAT, "on dec 24 at 6pm dinner", "", "2026-12-24 18:00", "dinner"),
    (SAT, "dec 24 6pm dinner", "", "2026-12-24 18:00", "dinner"),
    (SAT, "24 december at 18:00 dinner", "", "2026-12-24 18:00", "dinner"),
    (SAT, "on the 24th of december at 18:00 dinner", "", "2026-12-24 18:00", "dinner"),
    (SAT, "2026-12-24 18:00 xmas dinner", "", "2026-12-24 18:00", "xmas dinner"),
    (SAT, "2026-12-24T18:00 xmas dinner", "", "2026-12-24 18:00", "xmas dinner"),
    (SAT, "2026-12-24 xmas dinner", "", "2026-12-24 09:00", "xmas dinner"),
    (SAT, "in 90 minutes tea", "", "2026-11-21 15:35", "tea"),
    (SAT, "in 2 hours stretch", "", "2026-11-21 16:05", "stretch"),
    (SAT, "in 3 days water the plants", "", "2026-11-24 14:05", "water the plants"),
    (SAT, "in 10 mins tea", "", "2026-11-21 14:15", "tea"),
    (SAT, "in an hour call back", "", "2026-11-21 15:05", "call back"),
    (SAT, "in half an hour leave", "", "2026-11-21 14:35", "leave"),
    (SAT, "in an hour and a half check the oven", "", "2026-11-21 15:35", "check the oven"),
    (SAT, "in 1h30 check the oven", "", "2026-11-21 15:35", "check the oven"),
    (SAT, "in 2 hours and 15 minutes leave", "", "2026-11-21 16:20", "leave"),
    (SAT, "10 minutes from now tea", "", "2026-11-21 14:15", "tea"),
    (SAT, "in 1 week renew the permit", "", "2026-11-28 14:05", "renew the permit"),
    (SAT, "in 3 days at 9 follow up", "", "2026-11-24 09:00", "follow up"),
    (SAT, "tomorrow call the dentist", "", "2026-11-22 09:00", "call the dentist"),
    (SAT, "tomorrow morning at 7 gym", "", "2026-11-22 07:00", "gym"),
    (SAT, "tomorrow evening at 7 call grandma", "", "2026-11-22 19:00", "call grandma"),
    (SAT, "this afternoon at 4 pick up the kids", "", "2026-11-21 16:00", "pick up the kids"),
    (SAT, "at 5pm leave work", "", "2026-11-21 17:00", "leave work"),
    (SAT, "at 8:15pm feed the cat", "", "2026-11-21 20:15", "feed the cat"),
    (SAT, "at noon lunch", "", "2026-11-22 12:00", "lunch"),
    (SAT, "at midnight lock up", "", "2026-11-22 00:00", "lock up"),
    (SAT, "the day after tomorrow at 10 vet", "", "2026-11-23 10:00", "vet"),
    (SAT, "at 9 pm tomorrow call Ann", "", "2026-11-22 21:00", "call Ann"),
    (SAT, "tomorrow at half past 9 standup", "", "2026-11-22 09:30", "standup"),
    (SAT, "tomorrow at quarter to 10 standup", "", "2026-11-22 09:45", "standup"),
    (SAT, "on the 1st at 9 pay rent", "", "2026-12-01 09:00", "pay rent"),
    (SAT, "tomorrow at 9 to call the dentist", "", "2026-11-22 09:00", "call the dentist"),
    (SAT, "tomorrow at 9: call the dentist", "", "2026-11-22 09:00", "call the dentist"),
    (SAT, 'tomorrow at 9 "Call The Dentist"', "", "2026-11-22 09:00", "Call The Dentist"),
    (SAT, "me to call mom tomorrow at 9", "", "2026-11-22 09:00", "call mom"),
    (SAT, "call the dentist tomorrow at 9", "", "2026-11-22 09:00", "call the dentist"),
    (SAT, "pay the rent on dec 1 at 10am", "", "2026-12-01 10:00", "pay the rent"),
    (SAT, "book tickets for friday at 5pm", "", "2026-11-21 17:00", "book tickets for friday"),
    (SAT, "tomorrow at 9 2 coffees for the team", "", "2026-11-22 09:00", "2 coffees for the team"),
    # --- English, repeating ------------------------------------------------------------
    (SAT, "every day at 7 take pills", "every day at 07:00", "2026-11-22 07:00", "take pills"),
    (SAT, "daily at 7:30 walk", "every day at 07:30", "2026-11-22 07:30", "walk"),
    (SAT, "every morning at 7 meditate", "every day at 07:00", "2026-11-22 07:00", "meditate"),
    (SAT, "every evening at 7 journal", "every day at 19:00", "2026-11-21 19:00", "journal"),
    (
        SAT,
        "every night at 10 lock the door",
        "every day at 22:00",
        "2026-11-21 22:00",
        "lock the door",
    ),
    (
        SAT,
        "every weekday at 8:30 standup",
        "every weekday (Mon-Fri) at 08:30",
        "2026-11-23 08:30",
        "standup",
    ),
    (
        SUN_EVE,
        "weekdays at 9am standup",
        "every weekday (Mon-Fri) at 09:00",
        "2026-11-23 09:00",
        "standup",
    ),
    (
        SAT,
        "monday to friday at 8 standup",
        "every weekday (Mon-Fri) at 08:00",
        "2026-11-23 08:00",
        "standup",
    ),
    (
        SAT,
        "every monday at 9 send the report",
        "every Monday at 09:00",
        "2026-11-23 09:00",
        "send the report",
    ),
    (
        BEFORE_9,
        "every monday at 9 send the report",
        "every Monday at 09:00",
        "2026-11-23 09:00",
        "send the report",
    ),
    (
        AFTER_9,
        "every monday at 9 send the report",
        "every Monday at 09:00",
        "2026-11-30 09:00",
        "send the report",
    ),
    (
        SAT,
        "every friday at 5pm weekly review",
        "every Friday at 17:00",
        "2026-11-27 17:00",
        "weekly review",
    ),
    (
        SAT,
        "mondays at 9 send the report",
        "every Monday at 09:00",
        "2026-11-23 09:00",
        "send the report",
    ),
    (
        SAT,
        "every sunday at 6pm plan the week",
        "every Sunday at 18:00",
        "2026-11-22 18:00",
        "plan the week",
    ),
    (
        SUN_EVE,
        "every sunday at 6pm plan the week",
        "every Sunday at 18:00",
        "2026-11-29 18:00",
        "plan the week",
    ),
    (
        SAT,
        "every monday send the report",
        "every Monday at 09:00",
        "2026-11-23 09:00",
        "send the report",
    ),
    (SAT, "tomorrow at 9 daily standup notes", "", "2026-11-22 09:00", "daily standup notes"),
    (
        SAT,
        "every month on the 1st at 9 pay rent",
        "every month on the 1st at 09:00",
        "2026-12-01 09:00",
        "pay rent",
    ),
    (
        SAT,
        "monthly on the 15th at 10 invoices",
        "every month on the 15th at 10:00",
        "2026-12-15 10:00",
        "invoices",
    ),
    (
        SAT,
        "every month on the 31st at 9 close the books",
        "every month on the 31st (or the month's last day) at 09:00",
        "2026-11-30 09:00",
        "close the books",
    ),
    (
        SAT,
        "the 1st of every month at 9 rent",
        "every month on the 1st at 09:00",
        "2026-12-01 09:00",
        "rent",
    ),
    (
        SAT,
        "every 2 weeks on monday at 9 sprint planning",
        "every 2 weeks on Monday at 09:00",
        "2026-11-23 09:00",
        "sprint planning",
    ),
    (
        SAT,
        "every other week on friday at 4pm retro",
        "every 2 weeks on Friday at 16:00",
        "2026-11-27 16:00",
        "retro",
    ),
    (
        SAT,
        "every 3 days at 8 water the cactus",
        "every 3 days at 08:00",
        "2026-11-22 08:00",
        "water the cactus",
    ),
    (SAT, "every other day at 8 run", "every 2 days at 08:00", "2026-11-22 08:00", "run"),
    (
        SAT,
        "every 2 months on the 15th at 10 pay",
        "every 2 months on the 15th at 10:00",
        "2026-12-15 10:00",
        "pay",
    ),
    (
        SAT,
        "send the report every monday at 9",
        "every Monday at 09:00",
        "2026-11-23 09:00",
        "send the report",
    ),
    (
        SAT,
        "us every Monday at 9 to send the report",
        "every Monday at 09:00",
        "2026-11-23 09:00",
        "send the report",
    ),
    # --- Chinese ---------------------------------------------------------------------
    (SAT, "明天上午9点 开会", "", "2026-11-22 09:00", "开会"),
    (SAT, "明天上午9点开会", "", "2026-11-22 09:00", "开会"),
    (SAT, "明天下午3点 交报告", "", "2026-11-22 15:00", "交报告"),
    (SAT, "今晚8点 看电影", "", "2026-11-21 20:00", "看电影"),
    (SAT, "10分钟后 喝水", "", "2026-11-21 14:15", "喝水"),
    (SAT, "2小时后 休息一下", "", "2026-11-21 16:05", "休息一下"),
    (SAT, "半小时后 出发", "", "2026-11-21 14:35", "出发"),
    (SAT, "一个半小时后 开会", "", "2026-11-21 15:35", "开会"),
    (SAT, "3天后 续费", "", "2026-11-24 14:05", "续费"),
    (SAT, "后天下午2点 看牙", "", "2026-11-23 14:00", "看牙"),
    (SAT, "下周一上午10点 开会", "", "2026-11-23 10:00", "开会"),
    (BEFORE_9, "下周一上午10点 开会", "", "2026-11-30 10:00", "开会"),
    (SAT, "周五下午3点 交材料", "", "2026-11-27 15:00", "交材料"),
    (SAT, "12月24日晚上6点 聚餐", "", "2026-12-24 18:00", "聚餐"),
    (SAT, "2026年12月31日晚上11点 跨年", "", "2026-12-31 23:00", "跨年"),
    (SAT, "明天 开会", "", "2026-11-22 09:00", "开会"),
    (SAT, "明早7点 跑步", "", "2026-11-22 07:00", "跑步"),
    (SAT, "中午12点 吃饭", "", "2026-11-22 12:00", "吃饭"),
    (SAT, "明天9点半 开会", "", "2026-11-22 09:30", "开会"),
    # A bare hour is asked about only while both of its readings are ahead of now.
    (SUN_EVE, "at 7 gym", "", "2026-11-23 07:00", "gym"),
    (BEFORE_9, "at 9 standup", "", "2026-11-23 09:00", "standup"),
    (SAT, "at 7am gym", "", "2026-11-22 07:00", "gym"),
    (SAT, "at 07:00 gym", "", "2026-11-22 07:00", "gym"),
    (SAT, "at 11:30 gym", "", "2026-11-22 11:30", "gym"),  # HH:MM is the 24-hour clock
    (SAT, "我明天上午9点开会", "", "2026-11-22 09:00", "开会"),
    (SAT, "明天上午9点提醒我开会", "", "2026-11-22 09:00", "开会"),
    (SAT, "每天早上7点 吃药", "every day at 07:00", "2026-11-22 07:00", "吃药"),
    (SAT, "每天晚上10点 锁门", "every day at 22:00", "2026-11-21 22:00", "锁门"),
    (SAT, "每周一上午9点 周会", "every Monday at 09:00", "2026-11-23 09:00", "周会"),
    (SAT, "每周五下午5点 写周报", "every Friday at 17:00", "2026-11-27 17:00", "写周报"),
    (SAT, "每月1号9点 交房租", "every month on the 1st at 09:00", "2026-12-01 09:00", "交房租"),
    (
        SAT,
        "每月最后一天下午5点 结账",
        "every month on the 31st (or the month's last day) at 17:00",
        "2026-11-30 17:00",
        "结账",
    ),
    (
        SAT,
        "每个工作日早上8点半 站会",
        "every weekday (Mon-Fri) at 08:30",
        "2026-11-23 08:30",
        "站会",
    ),
    (SAT, "每隔3天早上8点 浇花", "every 3 days at 08:00", "2026-11-22 08:00", "浇花"),
    (
        SAT,
        "每两周周一上午9点 迭代会",
        "every 2 weeks on Monday at 09:00",
        "2026-11-23 09:00",
        "迭代会",
    ),
    # --- dates as Europeans and ISO users write them; compound delays ------------------
    (SAT, "24.12. 18:00 dinner", "", "2026-12-24 18:00", "dinner"),
    (SAT, "on 24.12.2026 at 6pm dinner", "", "2026-12-24 18:00", "dinner"),
    (SAT, "2026/12/24 18:00 dinner", "", "2026-12-24 18:00", "dinner"),
    (SAT, "Dec. 24 at 6 pm dinner", "", "2026-12-24 18:00", "dinner"),
    (
        SAT,
        "every fortnight on monday at 9 review",
        "every 2 weeks on Monday at 09:00",
        "2026-11-23 09:00",
        "review",
    ),
    (AFTER_9, "next monday at 10 plan", "", "2026-11-30 10:00", "plan"),
    (SAT, "1小时30分钟后 出门", "", "2026-11-21 15:35", "出门"),
    (SAT, "过2小时15分 出门", "", "2026-11-21 16:20", "出门"),
    # --- DST in Europe/Berlin ---------------------------------------------------------
    # 02:30 does not exist on 29 March: the rule keeps the words, it fires at 03:30.
    (
        DST_SPRING,
        "tomorrow at 02:30 check the backup",
        "once, on Sun 29 Mar 2026 at 02:30",
        "2026-03-29 03:30",
        "check the backup",
    ),
    (
        DST_SPRING,
        "every day at 9 take pills",
        "every day at 09:00",
        "2026-03-29 09:00",
        "take pills",
    ),
    (DST_SPRING, "in 1 day call back", "", "2026-03-29 12:00", "call back"),
    (DST_SPRING, "in 24 hours call back", "", "2026-03-29 13:00", "call back"),
    # 02:30 happens twice on 25 October: the first one counts.
    (DST_AUTUMN, "tomorrow at 02:30 check the backup", "", "2026-10-25 02:30", "check the backup"),
]


@pytest.mark.parametrize(
    ("now", "phrase", "rule", "first", "content"),
    CASES,
    ids=[f"{now:%a%H%M}-{phrase}" for now, phrase, *_ in CASES],
)
def test_phrase_becomes_exactly_this_reminder(
    now: datetime, phrase: str, rule: str, first: str, content: str
) -> None:
    expected_rule = rule or once(first)
    assert stored(phrase, now) == (expected_rule, first, content)


def test_the_autumn_overlap_fires_at_the_first_0230() -> None:
    parsed = parse_reminder("tomorrow at 02:30 check the backup", DST_AUTUMN)
    ctx = make_ctx(clock=lambda: DST_AUTUMN.astimezone(UTC))
    args = builtin_tools().get("reminder_set").validate(parsed.arguments(), ctx)
    _, first = args.resolve(ctx)  # type: ignore[attr-defined]
    assert first == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # 02:30 CEST, not CET


REFUSALS: list[tuple[datetime, str, str]] = [
    (SAT, "yesterday at 9 call", "past"),
    (SAT, "sometime soon call", "couldn't find when"),
    (SAT, "at 3 call the plumber", "03:00 or 15:00"),
    (SAT, "tomorrow at 3:30 call", "03:30 or 15:30"),
    (SAT, "tomorrow at 25 call", "not a time of day"),
    (SAT, "tomorrow at 9:75 call", "not a time of day"),
    (SAT, "tomorrow 9 call the dentist", "Is “9” a time"),
    (SAT, "tonight call mom", "At what time"),
    (SAT, "tomorrow afternoon call mom", "At what time"),
    (SAT, "tonight at 2 call", "doesn't fit"),
    (SAT, "tonight at 9am call", "contradicts"),
    (SAT, "every monday and thursday at 9 yoga", "One weekday per reminder"),
    (SAT, "every year on dec 24 xmas", "Yearly"),
    (SAT, "every week water plants", "which day"),
    (SAT, "next week call the bank", "Which day"),
    (SAT, "05/06 at 9 call", "day/month or month/day"),
    (SAT, "feb 30 at 9 call", "not a calendar date"),
    (SAT, "tomorrow at 9", "What should I remind"),
    (SAT, "in 30 seconds call", "shortest delay"),
    (SAT, "in 10 minutes at 5pm call", "couldn't understand the time “at 5pm call”"),
    (SAT, "in 3 days in 2 hours call", "can't be combined"),
    (SAT, "tomorrow today at 9 call", "two days"),
    (SAT, "tomorrow at midnight call", "Midnight at the start or the end"),
    (SAT, "on nov 21 at 10 call", "already passed"),
    (SAT, "昨天上午9点 开会", "过去"),
    (SAT, "明天3点 开会", "03:00 or 15:00"),
    # Past the morning reading today, before the evening one: tomorrow morning or tonight?
    (SAT, "at 7 call mom", "19:00 today or 07:00 tomorrow. Write “7pm” or “tomorrow at 7”"),
    (SAT, "at 7:30 call mom", "19:30 today or 07:30 tomorrow. Write “7:30pm”"),
    (SAT, "at 10 call mom", "22:00 today or 10:00 tomorrow"),
    (SAT, "9点半 开会", "21:30 today or 09:30 tomorrow. Write “晚上9点半” or “明天9点半”"),
    (SAT, "每周 开会", "哪一天"),
    (SAT, "明天下午 开会", "At what time"),
    (SAT, "明天上午9点 下周开会", "没看懂"),
    (SAT, "明天上午9点 25点开会", "two times"),
    # A second time, a second day, an exception or an end would land in the content.
    (SAT, "every day at 7 and 19 pills", "One time per reminder"),
    (SAT, "tomorrow at 9 or 10 call", "One time per reminder"),
    (SAT, "on friday or saturday at 9 call", "One time per reminder"),
    (SAT, "tomorrow at 9 and 5pm call", "One time per reminder"),
    (SAT, "every weekday at 9 except friday standup", "Exceptions"),
    (SAT, "every weekday at 9 but not on friday standup", "Exceptions"),
    (SAT, "every day at 9 for a week pills", "End a repeating reminder on a day"),
    (SAT, "every day at 9 for 3 days pills", "End a repeating reminder on a day"),
    (SAT, "every 0 days at 9 run", "every 1 to 52"),
    (AFTER_9, "next friday at 5pm drinks", "This Friday .27 Nov. or the one after .04 Dec."),
    (SAT, "每周一和周三上午9点 周会", "一个提醒只能有一个时间"),
    (SAT, "每天9点和17点 吃药", "一个提醒只能有一个时间"),
    (SAT, "明天上午9点或10点 开会", "一个提醒只能有一个时间"),
    (SAT, "每个工作日上午9点 除了周五 站会", "例外"),
]


@pytest.mark.parametrize(
    ("now", "phrase", "why"), REFUSALS, ids=[phrase for _, phrase, _ in REFUSALS]
)
def test_unclear_phrases_are_refused_with_the_reason(now: datetime, phrase: str, why: str) -> None:
    with pytest.raises(GrammarError, match=why.replace("?", r"\?")):
        parse_reminder(phrase, now)


@pytest.mark.parametrize(
    "phrase", ["today at 9 call", "2020-01-01 10:00 too late", "2026-11-21 14:05 call"]
)
def test_times_already_past_are_refused_by_validation(phrase: str) -> None:
    ctx = make_ctx(clock=lambda: SAT.astimezone(UTC))
    parsed = parse_reminder(phrase, SAT)
    with pytest.raises(InvalidArgumentsError, match="in the past"):
        builtin_tools().get("reminder_set").validate(parsed.arguments(), ctx)


def test_remind_others_and_everyone_are_read_from_the_front() -> None:
    bob = parse_reminder("@bob tomorrow at 9 to send the slides", SAT)
    assert bob.arguments()["who"] == ["@bob"]
    assert bob.content == "send the slides"
    both = parse_reminder("me and @bob friday at 5pm demo", SAT)
    assert both.arguments()["who"] == ["me", "@bob"]
    everyone = parse_reminder("everyone every monday at 9 standup", SAT)
    assert everyone.arguments()["who"] == ["everyone"]
    assert "who" not in parse_reminder("me tomorrow at 9 x", SAT).arguments()
    assert parse_reminder("大家 明天上午9点 开会", SAT).arguments()["who"] == ["everyone"]
