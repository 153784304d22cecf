"""The /remind grammar for repeats within a day and repeat limits, case by case, in
English and Chinese: the exact rule, first local fire time and content as reminder_set
would store them (through both validation stages and `resolve`), or a refusal that says
why. The near-misses are the point: "until I get home" and "5 times a day" are never read
as limits, and a time of day after the content stays the content's."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from groupmate.function_calls import InvalidArgumentsError
from groupmate.function_calls.grammar import GrammarError, asked_reminder, parse_reminder
from groupmate.function_calls.handlers import builtin_tools
from tests.conftest import make_ctx
from tests.test_remind_grammar import BERLIN, SAT, stored

MON = datetime(2026, 11, 23, 8, 0, tzinfo=BERLIN)  # a Monday, before the day's window
MAR = datetime(2026, 3, 10, 10, 0, tzinfo=BERLIN)  # in March: "until march" is unclear

# (now, phrase, rule in words, first local fire time, content)
CASES: list[tuple[datetime, str, str, str, str]] = [
    # --- English: repeats within a day ------------------------------------------------
    # Without hours, the first is one step from now (14:05), and the grid goes on.
    (SAT, "every 2 hours drink water", "every 2 hours from 16:05", "2026-11-21 16:05",
     "drink water"),
    (SAT, "every 30 minutes stretch", "every 30 minutes from 14:35", "2026-11-21 14:35",
     "stretch"),
    (SAT, "every 2h drink", "every 2 hours from 16:05", "2026-11-21 16:05", "drink"),
    (SAT, "every half hour from 10:00 to 12:00 look up", "every 30 minutes from 10:00 to 12:00",
     "2026-11-22 10:00", "look up"),
    (SAT, "every hour from 9 to 17 on weekdays check the queue",
     "every hour from 09:00 to 17:00 on weekdays", "2026-11-23 09:00", "check the queue"),
    (SAT, "on weekdays every hour from 9 to 17 check the queue",
     "every hour from 09:00 to 17:00 on weekdays", "2026-11-23 09:00", "check the queue"),
    # Mid-window on Saturday: the next step of today's window.
    (SAT, "every 90 minutes between 9am and 5pm stand up", "every 90 minutes from 09:00 to 17:00",
     "2026-11-21 15:00", "stand up"),
    # From a morning start, "to 5" can only be 17:00.
    (SAT, "every 2 hours from 9 to 5 drink", "every 2 hours from 09:00 to 17:00",
     "2026-11-21 15:00", "drink"),
    (SAT, "hourly drink water", "every hour from 15:05", "2026-11-21 15:05", "drink water"),
    (SAT, "every 2 hours starting at 9 drink", "every 2 hours from 09:00", "2026-11-21 15:00",
     "drink"),
    (SAT, "every 2 hours from 9 to water the plants", "every 2 hours from 09:00",
     "2026-11-21 15:00", "water the plants"),
    (SAT, "every 45 mins between 8 and 11 on mondays check",
     "every 45 minutes from 08:00 to 11:00 on Mon", "2026-11-23 08:00", "check"),
    # --- English: limits ----------------------------------------------------------------
    (SAT, "every day until Friday take pills",
     "every day at 09:00 until Fri 27 Nov (the last on Fri 27 Nov at 09:00)",
     "2026-11-22 09:00", "take pills"),
    # "until march": until March begins, so the last is in February.
    (SAT, "every monday until March send the report",
     "every Monday at 09:00 until Sun 28 Feb (the last on Mon 22 Feb at 09:00)",
     "2026-11-23 09:00", "send the report"),
    (SAT, "every day at 9 until the end of the month pills",
     "every day at 09:00 until Mon 30 Nov (the last on Mon 30 Nov at 09:00)",
     "2026-11-22 09:00", "pills"),
    (SAT, "every day until the end of december water the tree",
     "every day at 09:00 until Thu 31 Dec (the last on Thu 31 Dec at 09:00)",
     "2026-11-22 09:00", "water the tree"),
    (MAR, "every monday until the end of march send the report",
     "every Monday at 09:00 until Tue 31 Mar (the last on Mon 30 Mar at 09:00)",
     "2026-03-16 09:00", "send the report"),
    (SAT, "every 2 hours 5 times drink water",
     "every 2 hours from 16:05, 5 times (the last on Sun 22 Nov at 00:05)",
     "2026-11-21 16:05", "drink water"),
    (SAT, "every 2 hours, 3 times in all, drink",
     "every 2 hours from 16:05, 3 times (the last on Sat 21 Nov at 20:05)",
     "2026-11-21 16:05", "drink"),
    (SAT, "every day at 9 twice call mom",
     "every day at 09:00, 2 times (the last on Mon 23 Nov at 09:00)", "2026-11-22 09:00",
     "call mom"),
    (SAT, "every weekday at 8:30 until dec 4 standup",
     "every weekday (Mon-Fri) at 08:30 until Fri 4 Dec (the last on Fri 4 Dec at 08:30)",
     "2026-11-23 08:30", "standup"),
    (SAT, "every 30 minutes until 17:00 drink",
     "every 30 minutes from 14:35 until Sat 21 Nov at 17:00 (the last on Sat 21 Nov at 16:35)",
     "2026-11-21 14:35", "drink"),
    (SAT, "every day at 9 until friday 5 times pills",
     "every day at 09:00, 5 times until Fri 27 Nov (the last on Thu 26 Nov at 09:00)",
     "2026-11-22 09:00", "pills"),
    # The limit between the time and the content, or after the content: not the content.
    (SAT, "every day at 9 until Friday to take pills",
     "every day at 09:00 until Fri 27 Nov (the last on Fri 27 Nov at 09:00)",
     "2026-11-22 09:00", "take pills"),
    (SAT, "every day at 9 to take pills until Friday",
     "every day at 09:00 until Fri 27 Nov (the last on Fri 27 Nov at 09:00)",
     "2026-11-22 09:00", "take pills"),
    (SAT, "take pills every day at 9 until friday",
     "every day at 09:00 until Fri 27 Nov (the last on Fri 27 Nov at 09:00)",
     "2026-11-22 09:00", "take pills"),
    # Five in all, counted from the next one: mid-window, the count's last instant.
    (SAT, "every hour from 9 to 17, 5 times look up",
     "every hour from 09:00 to 17:00 until Sun 22 Nov at 10:00 (the last on Sun 22 Nov at 10:00)",
     "2026-11-21 15:00", "look up"),
    (MON, "every hour from 9 to 17, 5 times look up",
     "every hour from 09:00 to 17:00, 5 times (the last on Mon 23 Nov at 13:00)",
     "2026-11-23 09:00", "look up"),
    # --- Chinese ------------------------------------------------------------------------
    (SAT, "每隔两小时提醒我喝水", "every 2 hours from 16:05", "2026-11-21 16:05", "喝水"),
    (SAT, "每30分钟 起来走走", "every 30 minutes from 14:35", "2026-11-21 14:35", "起来走走"),
    (SAT, "每半小时 喝水", "every 30 minutes from 14:35", "2026-11-21 14:35", "喝水"),
    (SAT, "每隔一个半小时 休息", "every 90 minutes from 15:35", "2026-11-21 15:35", "休息"),
    (SAT, "每2小时 从9点开始 喝水", "every 2 hours from 09:00", "2026-11-21 15:00", "喝水"),
    (SAT, "每天9点起每2小时 喝水", "every 2 hours from 09:00", "2026-11-21 15:00", "喝水"),
    (SAT, "工作日每小时 9点到17点 看工单", "every hour from 09:00 to 17:00 on weekdays",
     "2026-11-23 09:00", "看工单"),
    (SAT, "从上午9点到下午5点每小时 喝水", "every hour from 09:00 to 17:00",
     "2026-11-21 15:00", "喝水"),
    (SAT, "每天提醒我吃药直到周五",
     "every day at 09:00 until Fri 27 Nov (the last on Fri 27 Nov at 09:00)",
     "2026-11-22 09:00", "吃药"),
    (SAT, "每天9点直到周五 吃药",
     "every day at 09:00 until Fri 27 Nov (the last on Fri 27 Nov at 09:00)",
     "2026-11-22 09:00", "吃药"),
    (SAT, "每天9点提醒我吃药，共3次",
     "every day at 09:00, 3 times (the last on Tue 24 Nov at 09:00)", "2026-11-22 09:00",
     "吃药"),
    (SAT, "每天9点 共3次 吃药",
     "every day at 09:00, 3 times (the last on Tue 24 Nov at 09:00)", "2026-11-22 09:00",
     "吃药"),
    (SAT, "每周一提醒我交周报直到3月",
     "every Monday at 09:00 until Sun 28 Feb (the last on Mon 22 Feb at 09:00)",
     "2026-11-23 09:00", "交周报"),
    (SAT, "每天早上8点提醒我吃药一直到月底",
     "every day at 08:00 until Mon 30 Nov (the last on Mon 30 Nov at 08:00)",
     "2026-11-22 08:00", "吃药"),
    (SAT, "每天提醒我吃药直到3月底",
     "every day at 09:00 until Wed 31 Mar (the last on Wed 31 Mar at 09:00)",
     "2026-11-22 09:00", "吃药"),
    # --- near-misses kept as what they are: content, not a limit -----------------------
    (SAT, "at 6pm wait until I get home", "", "2026-11-21 18:00", "wait until I get home"),
    (SAT, "every day at 9 study until 5pm", "every day at 09:00", "2026-11-22 09:00",
     "study until 5pm"),
    (SAT, "every day at 9 to feed the cat until I get home", "every day at 09:00",
     "2026-11-22 09:00", "feed the cat until I get home"),
    (SAT, "tomorrow at 9 take 3 times the dose", "", "2026-11-22 09:00",
     "take 3 times the dose"),
    (SAT, 'every day at 9 "stretch 3 times"', "every day at 09:00", "2026-11-22 09:00",
     "stretch 3 times"),
    (SAT, "每天提醒我坚持直到他回来", "every day at 09:00", "2026-11-22 09:00",
     "坚持直到他回来"),
    (SAT, "每天7点起床", "every day at 07:00", "2026-11-22 07:00", "起床"),
    # A span or a count that can't be an end stays what it is: the content's, or a total.
    (SAT, "in 2 hours for the meeting", "", "2026-11-21 16:05", "for the meeting"),
    (SAT, "every hour to walk for 10 minutes", "every hour from 15:05", "2026-11-21 15:05",
     "walk for 10 minutes"),
    (SAT, "每小时提醒我休息10分钟", "every hour from 15:05", "2026-11-21 15:05", "休息10分钟"),
    (SAT, "every 2 hours to stretch for 5 minutes", "every 2 hours from 16:05",
     "2026-11-21 16:05", "stretch for 5 minutes"),
    (SAT, "every day at 9 study for 2 hours", "every day at 09:00", "2026-11-22 09:00",
     "study for 2 hours"),
    (SAT, 'every hour "walk for an hour"', "every hour from 15:05", "2026-11-21 15:05",
     "walk for an hour"),
    (SAT, "每天提醒我学习2小时", "every day at 09:00", "2026-11-22 09:00", "学习2小时"),
    (SAT, "每小时提醒我小时候的事", "every hour from 15:05", "2026-11-21 15:05", "小时候的事"),
    (SAT, "每2小时提醒我3小时后吃药", "every 2 hours from 16:05", "2026-11-21 16:05",
     "3小时后吃药"),
    (SAT, "every day, 5 times drink",
     "every day at 09:00, 5 times (the last on Thu 26 Nov at 09:00)", "2026-11-22 09:00",
     "drink"),
    (SAT, "every hour on weekdays 5 times drink",
     "every hour from 00:05 on weekdays, 5 times (the last on Mon 23 Nov at 04:05)",
     "2026-11-23 00:05", "drink"),
    (SAT, "every day 5 times in all drink",
     "every day at 09:00, 5 times (the last on Thu 26 Nov at 09:00)", "2026-11-22 09:00",
     "drink"),
    (SAT, "每天共5次 喝水", "every day at 09:00, 5 times (the last on Thu 26 Nov at 09:00)",
     "2026-11-22 09:00", "喝水"),
    (SAT, "每2小时 共5次 喝水",
     "every 2 hours from 16:05, 5 times (the last on Sun 22 Nov at 00:05)", "2026-11-21 16:05",
     "喝水"),
    (SAT, "明天9点开始上班", "", "2026-11-22 09:00", "开始上班"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("now", "phrase", "rule", "first", "content"), CASES, ids=[case[1] for case in CASES]
)
def test_phrase_becomes_exactly_this_reminder(
    now: datetime, phrase: str, rule: str, first: str, content: str
) -> None:
    got_rule, got_first, got_content = stored(phrase, now)
    assert got_rule == rule if rule else got_rule.startswith("once, on ")
    assert (got_first, got_content) == (first, content)


FIVE_TIMES = "is how often, not how many in all. Say when, e.g. “every 2 hours from 9 to 17”"
UNTIL_DONE_DAILY = "can't go with a daily or weekly rule"
NO_STOP = (
    "doesn't say when to stop. End the repeat after a number of times or at a time of day, e.g."
)
NO_STOP_ZH = "没说从什么时候到什么时候。请用次数或时段，例如"
NO_END = "End a repeating reminder on a day or after a number of times"
NOT_AN_END = "I can't end a reminder on “{}”: give a day or date, e.g. “until Friday”"

# (now, phrase, what the refusal says)
REFUSALS: list[tuple[datetime, str, str]] = [
    # A count per day is how often: never read as that many in all.
    (SAT, "5 times a day take pills", f"“5 times a day” {FIVE_TIMES}"),
    (SAT, "every day at 9 5 times a day pills", f"“5 times a day” {FIVE_TIMES}"),
    (SAT, "every day at 9, 3 times a week pills", f"“3 times a week” {FIVE_TIMES}"),
    (SAT, "每天3次 吃药", "“每天3次”是每天几次，不是一共几次"),
    # After "until", no day: no limit, and not the content either.
    (SAT, "every day at 9 until I get home to feed the cat", NOT_AN_END.format("until I get home")),
    # "until done" is the until-done rule (tests/test_grammar_until_done.py), which a
    # daily rule can't have.
    (SAT, "every day at 9 until done to take pills", UNTIL_DONE_DAILY),
    (SAT, "every day at 9 to stretch until done", UNTIL_DONE_DAILY),
    (SAT, "每天9点提醒我吃药直到我说好了", "不能和每天、每周的规则一起用"),
    (SAT, "每天9点 直到我回家 吃药", "我没法按“直到我回家”结束提醒"),
    (MAR, "every monday until march send the report",
     "It is March now: until the end of March, or until next March?"),
    (SAT, "every day at 9 until november pills", "It is November now"),
    (SAT, "every day at 9 until yesterday pills", "Yesterday is in the past"),
    # After the content, a count may count the content, and a day with more is no day.
    (SAT, "every day at 9 to stretch 3 times",
     "Is “3 times” how many reminders in all? Then put it with the time: "
     "“every day at 9, 3 times, to …”"),
    (SAT, "每2小时提醒我喝水5次", "“5次”是一共几次吗？是的话请写“共5次”"),
    (SAT, "every day at 9 to take pills until friday evening",
     "A reminder ends on a day: write “until friday” before what to remind."),
    (SAT, "每天9点提醒我吃药直到周五下班", "提醒只能在某一天结束，请写“直到周五”"),
    # Limits and hours only for what repeats.
    (SAT, "tomorrow at 9 until friday call", "“until friday” is for a repeating reminder"),
    (SAT, "3 times drink water", "“3 times” is for a repeating reminder"),
    (SAT, "in 2 hours 3 times drink", "“3 times” is for a repeating reminder"),
    (SAT, "明天9点 共3次 开会", "“共3次”只用于重复的提醒"),
    (SAT, "from 9 to 17 check", "“from 9 to 17” needs a repeat within the day"),
    (SAT, "every hour from 17 to 9 check", "The hours end before they start (17:00 to 09:00)"),
    (SAT, "every hour in the afternoon check", "Between which hours?"),
    (SAT, "every 30 seconds spam", "Repeats are in minutes or hours"),
    (SAT, "每5秒 喝水", "最短按分钟重复"),
    (SAT, "every 24 hours spam", "For a day or more, use “every day at …”"),
    (SAT, "every 2 hours 5000 times drink", "“5000 times”: give 1 to 1000 times."),
    # The hours after the text: the reminder would start now, not at 9.
    (SAT, "every 2 hours to drink water starting at 9", "Put the hours with the repeat"),
    (SAT, "每2小时提醒我喝水，从9点开始", "Put the hours with the repeat"),
    (SAT, "every hour on the hour drink", "Say when the first one is"),
    (SAT, "every hour between 9 and lunch check", "Between 9 and when?"),
    # "for 2 hours" after a step: from when is not said, so it is no exact end; never
    # left in the content, where the repeat would never end. "for 3 days": no end either.
    (SAT, "every 30 minutes for 2 hours drink water",
     f"“for 2 hours” {NO_STOP} “every 30 minutes, 4 times” or “every 30 minutes until 17:00”"),
    (SAT, "every hour for 3 hours stretch", f"“for 3 hours” {NO_STOP} “every hour, 3 times”"),
    (SAT, "every 2 hours for an hour and a half stretch",
     f"“for an hour and a half” {NO_STOP} “every 2 hours until 17:00”"),
    # 2 hours is no whole number of 45 minutes: no count is offered.
    (SAT, "every 45 minutes for 2 hours stretch",
     f"“for 2 hours” {NO_STOP} “every 45 minutes until 17:00”"),
    (SAT, "every 30 minutes from 9 to 17 for 2h drink", f"“for 2h” {NO_STOP}"),
    # At the end, as long as the step or longer: the same (shorter: the content's, above).
    (SAT, "every 30 minutes to drink water for 2 hours.",
     f"“for 2 hours” {NO_STOP} “every 30 minutes, 4 times”"),
    (SAT, "every hour walk for an hour", f"“for an hour” {NO_STOP} “every hour until 17:00”"),
    (SAT, "every 30 minutes for 3 days drink", NO_END),
    (SAT, "every day for 2 weeks pills", NO_END),
    (SAT, "每隔30分钟提醒我喝水2小时", f"“2小时”{NO_STOP_ZH}“每隔30分钟，共4次”"),
    (SAT, "每隔30分钟提醒我2小时喝水", f"“2小时”{NO_STOP_ZH}“每隔30分钟，共4次”"),
    (SAT, "每隔30分钟 两个小时 喝水", f"“两个小时”{NO_STOP_ZH}"),
    (SAT, "每小时提醒我喝水，持续3小时", f"“持续3小时”{NO_STOP_ZH}“每小时，共3次”"),
    (SAT, "每小时提醒我休息两个小时", f"“两个小时”{NO_STOP_ZH}"),
    # A bare count right after a rule of days: a day's or all of them? Asked, not guessed.
    (SAT, "every day twice take pills",
     "Is “twice” on each day or in all? For a total, say “every day at 9, twice in all”"),
    (SAT, "every day 5 times drink water", "Is “5 times” on each day or in all?"),
    (SAT, "daily 3 times pills", "say “daily at 9, 3 times in all”"),
    (SAT, "every monday 3 times report", "say “every monday at 9, 3 times in all”"),
    (SAT, "at 9 every day five times pills", "Is “five times” on each day or in all?"),
    (SAT, "每天提醒我5次喝水", "“5次”是一天几次，还是一共几次？一共请写“每天9点，共5次”"),
    (SAT, "每天 5次 喝水", "“5次”是一天几次，还是一共几次？"),
    (SAT, "每周一 3次 交周报", "一共请写“每周一9点，共3次”"),
    (SAT, "每2小时 5次 喝水", "“5次”是一共几次吗？是的话请写“共5次”"),
    # A limit alone, after the text, is no time at all.
    (SAT, "wait until 5pm", "I couldn't find when."),
    (SAT, "stretch 3 times", "I couldn't find when."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("now", "phrase", "why"), REFUSALS, ids=[phrase for _, phrase, _ in REFUSALS]
)
def test_unclear_limits_are_refused_with_the_reason(now: datetime, phrase: str, why: str) -> None:
    with pytest.raises((GrammarError, InvalidArgumentsError)) as refused:
        stored(phrase, now)
    assert why in str(refused.value)


# (zone, now, phrase, first local fire time, the one after): one step of elapsed time
# across the DST change, as the grid counts, not of wall clock.
DST: list[tuple[str, datetime, str, str, str]] = [
    # Berlin springs forward at 02:00: two hours after 01:30 is 04:30.
    ("Europe/Berlin", datetime(2026, 3, 29, 1, 30, tzinfo=BERLIN), "every 2 hours drink",
     "2026-03-29 04:30", "2026-03-29 06:30"),
    # New York falls back at 02:00: two hours after 00:30 is 01:30, the second one.
    ("America/New_York", datetime(2026, 11, 1, 0, 30, tzinfo=ZoneInfo("America/New_York")),
     "every 2 hours drink", "2026-11-01 01:30", "2026-11-01 03:30"),
    # A window restarts at its wall-clock hour each day, whatever the offset.
    ("Europe/Berlin", datetime(2026, 3, 28, 18, 0, tzinfo=BERLIN),
     "every 4 hours from 9 to 17 check", "2026-03-29 09:00", "2026-03-29 13:00"),
]  # fmt: skip


@pytest.mark.parametrize(("zone", "now", "phrase", "first", "then"), DST, ids=[d[0] for d in DST])
def test_a_step_across_dst_is_elapsed_time(
    zone: str, now: datetime, phrase: str, first: str, then: str
) -> None:
    ctx = make_ctx(timezone=zone, clock=lambda: now.astimezone(UTC))
    raw = parse_reminder(phrase, now.astimezone(ZoneInfo(zone))).arguments()
    args = builtin_tools().get("reminder_set").validate(raw, ctx)
    schedule, fires = args.resolve(ctx)  # type: ignore[attr-defined]
    after = schedule.first_after(fires)
    local = ZoneInfo(zone)
    assert after is not None
    shown = (
        f"{fires.astimezone(local):%Y-%m-%d %H:%M}",
        f"{after.astimezone(local):%Y-%m-%d %H:%M}",
    )
    assert shown == (first, then)
    # Elapsed time between them is the step (the wall clock may say otherwise).
    assert after - fires == schedule.every


@pytest.mark.parametrize(
    "message",
    [
        "remind me to wait until I get home",
        "remind me to wait until 5pm",
        "remind me to stretch 3 times",
        "提醒我坚持直到他回来",
    ],
)
def test_a_chat_message_with_no_time_but_until_or_times_asks_for_no_reminder(message: str) -> None:
    # The model answers these (it may ask when); the grammar reads no reminder in them.
    assert asked_reminder(message, SAT) is None


@pytest.mark.parametrize(
    "message",
    [
        "remind me every 30 minutes for 2 hours to drink water",
        "remind me every hour for 3 hours to stretch",
        "remind me every 30 minutes to drink water for 2 hours",
        "remind me every day twice to take pills",
        "remind me every day 5 times to drink water",
        "每天提醒我5次喝水",
        "每隔30分钟提醒我喝水2小时",
    ],
)
def test_a_chat_message_with_an_end_or_count_that_is_not_exact_is_refused(message: str) -> None:
    # Before: a repeat without end ("for 2 hours" in the content) or a guessed total.
    with pytest.raises(GrammarError):
        asked_reminder(message, SAT)


# (refused, the form its refusal suggests, that form with the text, the rule it sets):
# the way out a refusal names reads exactly, with the end the refused words meant.
SUGGESTED: list[tuple[str, str, str, str]] = [
    ("every 30 minutes for 2 hours drink", "“every 30 minutes, 4 times”",
     "every 30 minutes, 4 times drink",
     "every 30 minutes from 14:35, 4 times (the last on Sat 21 Nov at 16:05)"),
    ("every day twice pills", "“every day at 9, twice in all”",
     "every day at 9, twice in all pills",
     "every day at 09:00, 2 times (the last on Mon 23 Nov at 09:00)"),
    ("每隔30分钟提醒我喝水2小时", "“每隔30分钟，共4次”", "每隔30分钟，共4次 喝水",
     "every 30 minutes from 14:35, 4 times (the last on Sat 21 Nov at 16:05)"),
    ("每天提醒我5次喝水", "“每天9点，共5次”", "每天9点，共5次 喝水",
     "every day at 09:00, 5 times (the last on Thu 26 Nov at 09:00)"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("refused", "form", "suggested", "rule"), SUGGESTED, ids=[case[0] for case in SUGGESTED]
)
def test_the_way_a_refusal_suggests_reads_exactly(
    refused: str, form: str, suggested: str, rule: str
) -> None:
    with pytest.raises(GrammarError) as asked:
        stored(refused, SAT)
    assert form in str(asked.value)
    assert stored(suggested, SAT)[0] == rule
