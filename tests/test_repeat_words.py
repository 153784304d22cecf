"""A repeat within a day and a repeat limit in words, English and Chinese: the rule, the
limit, and the date and time of the last occurrence, in the reminder's zone."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest

from groupmate.function_calls.handlers.reminder_refusals import refusal_text
from groupmate.function_calls.handlers.reminder_words import (
    confirmation,
    describe_schedule,
    describe_schedule_zh,
)
from groupmate.storage.errors import RepeatTooOftenError
from groupmate.storage.recurrence import Schedule, check_rate
from groupmate.storage.reminder_rows import ReminderView
from tests.conftest import make_ctx

BERLIN = "Europe/Berlin"
FRIDAY = date(2026, 3, 27)
WEEKDAYS = (0, 1, 2, 3, 4)


def every(step: timedelta, **fields: object) -> Schedule:
    return Schedule("interval", time(9), BERLIN, on_date=FRIDAY, every=step, **fields)  # type: ignore[arg-type]


CASES: list[tuple[Schedule, str, str]] = [
    (every(timedelta(hours=2)), "every 2 hours from 09:00", "每2小时（09:00起）"),
    (every(timedelta(minutes=30)), "every 30 minutes from 09:00", "每30分钟（09:00起）"),
    (every(timedelta(minutes=90)), "every 90 minutes from 09:00", "每90分钟（09:00起）"),
    (
        every(timedelta(hours=1), window_end=time(17), on_days=WEEKDAYS),
        "every hour from 09:00 to 17:00 on weekdays",
        "工作日 09:00至17:00 每小时",
    ),
    (
        every(timedelta(hours=1), window_end=time(12), on_days=(0, 2)),
        "every hour from 09:00 to 12:00 on Mon, Wed",
        "每周一、三 09:00至12:00 每小时",
    ),
    (
        every(timedelta(hours=2), count=5),
        "every 2 hours from 09:00, 5 times (the last on Fri 27 Mar at 17:00)",
        "每2小时（09:00起），共5次（最后一次：3月27日 周五 17:00）",
    ),
    (
        Schedule("daily", time(9), BERLIN, until=date(2026, 12, 4)),
        "every day at 09:00 until Fri 4 Dec (the last on Fri 4 Dec at 09:00)",
        "每天 09:00，直到2026年12月4日（最后一次：12月4日 周五 09:00）",
    ),
    (
        Schedule("weekly", time(9), BERLIN, weekday=0, until=date(2027, 3, 1)),
        "every Monday at 09:00 until Mon 1 Mar (the last on Mon 1 Mar at 09:00)",
        "每周一 09:00，直到2027年3月1日（最后一次：3月1日 周一 09:00）",
    ),
    (
        every(timedelta(hours=1), until=datetime(2026, 3, 27, 12, 30, tzinfo=UTC)),
        # 12:30 UTC is 13:30 in Berlin (winter time): the last step is 13:00.
        "every hour from 09:00 until Fri 27 Mar at 13:30 (the last on Fri 27 Mar at 13:00)",
        "每小时（09:00起），直到3月27日 周五 13:30（最后一次：3月27日 周五 13:00）",
    ),
    (Schedule("weekly", time(9), BERLIN, weekday=0), "every Monday at 09:00", "每周一 09:00"),
]


@pytest.mark.parametrize(("rule", "english", "chinese"), CASES, ids=[c[1] for c in CASES])
def test_the_rule_its_limit_and_its_last_occurrence_are_said(
    rule: Schedule, english: str, chinese: str
) -> None:
    assert describe_schedule(rule) == english
    assert describe_schedule_zh(rule) == chinese


def test_the_confirmation_says_the_rule_and_the_last_one() -> None:
    rule = every(timedelta(hours=2), count=5)
    first = rule.first_after(datetime(2026, 3, 27, tzinfo=UTC))
    assert first is not None
    reminder = ReminderView(
        id="r1",
        short_id=3,
        chat_id="chat-1",
        chat_type="group",
        created_by="u-alice",
        created_by_name="Alice",
        content="drink water",
        schedule=rule,
        status="active",
        next_fire_at=first,
        version=1,
        created_at=first,
    )
    ctx = make_ctx(text="remind me every 2 hours 5 times to drink water")
    assert confirmation(reminder, ctx, everyone_asked=False) == (
        "⏰ Reminder #3 set for Fri 27 Mar 09:00 (Europe/Berlin), every 2 hours from 09:00, "
        "5 times (the last on Fri 27 Mar at 17:00): drink water"
    )


@pytest.mark.parametrize(
    ("rule", "english", "chinese"),
    [
        (
            every(timedelta(minutes=2)),
            "That repeats too often: the shortest repeat here is every 5 minutes.",
            "重复得太频繁了：这里最短每5分钟一次。",
        ),
        (
            every(timedelta(minutes=10)),
            "That would fire 144 times a day; the most here is 48. Use a longer step, or "
            "hours (e.g. 'every hour from 9 to 17').",
            "这样每天会提醒144次，这里最多48次。"
            "请把间隔调长，或限定时段（例如“每小时 9点到17点”）。",
        ),
    ],
)
def test_a_repeat_over_the_limits_is_refused_in_the_users_words(
    rule: Schedule, english: str, chinese: str
) -> None:
    with pytest.raises(RepeatTooOftenError) as refused:
        check_rate(rule)
    assert refusal_text(refused.value, "every 2 minutes") == english
    assert refusal_text(refused.value, "每2分钟") == chinese
