"""The confirmation in the user's language: each rule in Chinese, and who it is for."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from function_calls.handlers.audience import describe_audience
from function_calls.handlers.reminder_words import (
    describe_audience_zh,
    describe_schedule_zh,
    format_local_zh,
)
from storage import Member
from storage.recurrence import Schedule
from storage.repository import Audience
from tests.conftest import make_ctx

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize(
    ("schedule", "words"),
    [
        (
            Schedule("once", time(9), "Europe/Berlin", on_date=date(2026, 12, 24)),
            "一次，2026年12月24日 09:00",
        ),
        (Schedule("daily", time(7, 30), "Europe/Berlin"), "每天 07:30"),
        (
            Schedule("daily", time(20), "Europe/Berlin", on_date=date(2026, 11, 25), interval=3),
            "每3天 20:00",
        ),
        (Schedule("weekdays", time(8, 30), "Europe/Berlin"), "每个工作日（周一至周五） 08:30"),
        (Schedule("weekly", time(9), "Europe/Berlin", weekday=0), "每周一 09:00"),
        (Schedule("weekly", time(9), "Europe/Berlin", weekday=6), "每周日 09:00"),
        (
            Schedule(
                "weekly",
                time(9),
                "Europe/Berlin",
                on_date=date(2026, 11, 30),
                weekday=0,
                interval=2,
            ),
            "每2周的周一 09:00",
        ),
        (Schedule("monthly", time(9), "Europe/Berlin", day=1), "每月1号 09:00"),
        (Schedule("monthly", time(9), "Europe/Berlin", day=31), "每月31号（短月为最后一天） 09:00"),
    ],
)
def test_each_rule_in_chinese(schedule: Schedule, words: str) -> None:
    assert describe_schedule_zh(schedule) == words


def test_a_time_in_chinese_in_the_chats_zone() -> None:
    instant = datetime(2026, 11, 26, 8, 0, tzinfo=UTC)  # 09:00 in Berlin, a Thursday
    assert format_local_zh(instant, BERLIN) == "11月26日 周四 09:00"
    assert format_local_zh(instant, BERLIN, with_year=True) == "2026年11月26日 周四 09:00"


def test_who_it_is_for_in_both_languages() -> None:
    member, admin = make_ctx(is_admin=False), make_ctx(is_admin=True)
    bob = Audience(mentions=(Member("u-bob", "Bob"),), creator=True)
    assert describe_audience(bob, member) == " for @Bob and you"
    assert describe_audience_zh(bob, member) == "（提醒 @Bob和你）"
    assert describe_audience_zh(Audience(everyone=True), member) == "（提醒所有人）"
    # Asked for everyone, posted without the mention: the reason differs by role.
    chat = Audience(creator=False)
    assert describe_audience(chat, member, everyone_asked=True) == (
        " for this chat (posted without mentioning everyone: only group admins can mention "
        "everyone here)"
    )
    assert describe_audience(chat, admin, everyone_asked=True) == (
        " for this chat (posted without mentioning everyone: mentioning everyone is turned "
        "off in this chat)"
    )
    assert describe_audience_zh(chat, member, everyone_asked=True) == (
        "（发在群里，不@所有人：只有管理员可以@所有人）"
    )
    assert describe_audience(Audience(), member) == ""
