"""The words a chat reads, above storage: each rule in English and Chinese, who a
reminder is for, and why storage refused, in the user's language."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from groupmate.function_calls.handlers.audience import describe_audience
from groupmate.function_calls.handlers.reminder_refusals import refusal_text
from groupmate.function_calls.handlers.reminder_words import (
    describe_audience_zh,
    describe_schedule,
    describe_schedule_zh,
    format_local_zh,
    ordinal,
)
from groupmate.function_calls.internal_text import STORAGE_DOWN
from groupmate.storage import (
    InvalidTimezoneError,
    Member,
    ReminderChangedError,
    ReminderNotFoundError,
    ReminderPermissionError,
    ReminderStateError,
    SnoozeTargetError,
    StorageError,
    StorageUnavailableError,
)
from groupmate.storage.recurrence import Schedule
from groupmate.storage.reminder_rows import Audience
from tests.conftest import make_ctx

BERLIN = ZoneInfo("Europe/Berlin")
ZONE = "Europe/Berlin"


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
        " for this chat, mentioning only you (only group admins can mention everyone here)"
    )
    assert describe_audience(chat, admin, everyone_asked=True) == (
        " for this chat, mentioning only you (mentioning everyone is turned off in this chat)"
    )
    assert describe_audience_zh(chat, member, everyone_asked=True) == (
        "（发在群里，只@你：只有管理员可以@所有人）"
    )
    # For someone else: the one who set it is mentioned too, and told so.
    others = Audience(mentions=(Member("u-bob", "Bob"),), creator=False)
    assert describe_audience(others, member) == " for @Bob (mentioning you too)"
    assert describe_audience_zh(others, member) == "（提醒 @Bob，也会@你）"
    assert describe_audience(Audience(), member) == ""


DESCRIBE: list[tuple[Schedule, str]] = [
    (Schedule("weekly", time(9, 0), ZONE, weekday=0), "every Monday at 09:00"),
    (Schedule("weekly", time(18, 15), ZONE, weekday=6), "every Sunday at 18:15"),
    (Schedule("daily", time(9, 0), ZONE), "every day at 09:00"),
    (Schedule("weekdays", time(8, 30), ZONE), "every weekday (Mon-Fri) at 08:30"),
    (
        Schedule("monthly", time(10, 0), ZONE, day=31),
        "every month on the 31st (or the month's last day) at 10:00",
    ),
    (
        Schedule("monthly", time(10, 0), ZONE, day=29),
        "every month on the 29th (or the month's last day) at 10:00",
    ),
    (Schedule("monthly", time(7, 5), ZONE, day=1), "every month on the 1st at 07:05"),
    (Schedule("monthly", time(7, 5), ZONE, day=28), "every month on the 28th at 07:05"),
    (
        Schedule("once", time(9, 0), ZONE, on_date=date(2026, 11, 22)),
        "once, on Sun 22 Nov 2026 at 09:00",
    ),
]


@pytest.mark.parametrize(("schedule", "words"), DESCRIBE, ids=[words for _, words in DESCRIBE])
def test_describe(schedule: Schedule, words: str) -> None:
    assert describe_schedule(schedule) == words


def test_describe_monthly_mentions_the_last_day_only_when_it_can_clip() -> None:
    assert "last day" in describe_schedule(Schedule("monthly", time(9, 0), ZONE, day=31))
    assert "31st" in describe_schedule(Schedule("monthly", time(9, 0), ZONE, day=31))
    assert "last day" not in describe_schedule(Schedule("monthly", time(9, 0), ZONE, day=15))


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (1, "1st"),
        (2, "2nd"),
        (3, "3rd"),
        (4, "4th"),
        (11, "11th"),
        (12, "12th"),
        (13, "13th"),
        (21, "21st"),
        (22, "22nd"),
        (23, "23rd"),
        (31, "31st"),
        (111, "111th"),
    ],
)
def test_ordinal(number: int, expected: str) -> None:
    assert ordinal(number) == expected


# Each storage error, as the user reads it: (error, English, Chinese).
REFUSALS: list[tuple[StorageError, str, str]] = [
    (
        ReminderNotFoundError(3),
        "There is no active reminder #3 in this chat.",
        "这个聊天里没有进行中的提醒 #3。",
    ),
    (
        ReminderNotFoundError(None),
        "There is no such active reminder in this chat.",
        "这个聊天里没有这个进行中的提醒。",
    ),
    (
        ReminderNotFoundError(None, reference="tea"),
        "There is no active reminder 'tea' in this chat.",
        "这个聊天里没有进行中的提醒 'tea'。",
    ),
    (
        ReminderNotFoundError(3, "finished"),
        "Reminder #3 has just finished.",
        "提醒 #3 刚刚已经结束了。",
    ),
    (
        ReminderNotFoundError(3, "past_due"),
        "Reminder #3 was due at a time that has passed; edit it to give it a new time.",
        "提醒 #3 的时间已经过了；请修改它，给它一个新的时间。",  # noqa: RUF001
    ),
    (
        ReminderPermissionError(1, "Alice", "delete"),
        "Reminder #1 was set by Alice; only they or a group admin can delete it.",
        "提醒 #1 是 Alice 设置的；只有设置者或群管理员可以删除它。",  # noqa: RUF001
    ),
    (
        ReminderPermissionError(1, None, "snooze"),
        "Reminder #1 was set by someone else; only they or a group admin can snooze it.",
        "提醒 #1 是别人设置的；只有设置者或群管理员可以推迟它。",  # noqa: RUF001
    ),
    (
        ReminderStateError(1, "snooze_rule", root_short_id=1),
        "Reminder #1 is snoozed and fires once more; a snooze can't repeat. "
        "Set a repeating reminder with /remind.",
        "提醒 #1 已推迟，只会再响一次；推迟的提醒不能重复。要重复提醒，请用 /提醒 新设一个。",  # noqa: RUF001
    ),
    (
        ReminderStateError(4, "once_pause"),
        "Reminder #4 fires only once; cancel or edit it instead.",
        "提醒 #4 只响一次，不能暂停；请取消或修改它。",  # noqa: RUF001
    ),
    (
        ReminderStateError(5, "not_delivered"),
        "Reminder #5 hasn't gone off yet: there's nothing to snooze or mark done. "
        "Edit it to move it, or /cancel #5 to stop it.",
        "提醒 #5 还没有响过，没有可推迟或完成的。要改时间，请修改它；"  # noqa: RUF001
        "要停止，请用 /cancel #5。",
    ),
    (
        ReminderChangedError(6),
        "Reminder #6 changed (or fired) just now; nothing was edited. Please try again.",
        "提醒 #6 刚刚被改动（或刚刚响过），这次什么都没有修改。请再试一次。",
    ),
    (
        SnoozeTargetError("not_a_reminder"),
        "That message isn't a reminder I can snooze.",
        "那条消息不是我能推迟的提醒。",
    ),
    (
        SnoozeTargetError("several_match", labels=("#4", "#2")),
        "That message could be any of several reminders (#4, #2); say which one, "
        "e.g. /snooze #4 10m.",
        "那条消息可能是好几个提醒之一（#4、#2）；请说明是哪一个，例如 /snooze #4 10m。",  # noqa: RUF001
    ),
    (
        SnoozeTargetError("none_recent"),
        "No reminder went off here in the last hour; say which one, e.g. /snooze #3 10m.",
        "最近一小时里这里没有响过提醒；请说明是哪一个，例如 /snooze #3 10m。",  # noqa: RUF001
    ),
    (
        SnoozeTargetError("none_recent", window=timedelta(minutes=20)),
        "No reminder went off here in the last 20 minutes; say which one, e.g. /snooze #3 10m.",
        "最近 20 分钟里这里没有响过提醒；请说明是哪一个，例如 /snooze #3 10m。",  # noqa: RUF001
    ),
    (
        SnoozeTargetError("several_recent", labels=("#7", "#2", "#1", "#9", "#8", "#3")),
        "Several reminders went off recently (#7, #2, #1, #9, #8); say which one, "
        "e.g. /snooze #7 10m.",
        "最近响过好几个提醒（#7、#2、#1、#9、#8）；请说明是哪一个，例如 /snooze #7 10m。",  # noqa: RUF001
    ),
    (
        InvalidTimezoneError("Mars/Olympus"),
        "'Mars/Olympus' is not a known time zone; use an IANA name such as Europe/Berlin.",
        "'Mars/Olympus' 不是已知的时区；请使用 IANA 时区名，例如 Asia/Shanghai。",  # noqa: RUF001
    ),
    (
        StorageUnavailableError("the database is unavailable"),
        STORAGE_DOWN.english,
        STORAGE_DOWN.chinese,
    ),
]


@pytest.mark.parametrize(
    ("error", "english", "chinese"), REFUSALS, ids=[type(e).__name__ for e, _, _ in REFUSALS]
)
def test_each_storage_error_in_english_and_chinese(
    error: StorageError, english: str, chinese: str
) -> None:
    assert refusal_text(error, "delete #3") == english
    assert refusal_text(error, "") == english  # no message (the REST API): English
    assert refusal_text(error, "删除提醒3") == chinese
    # What the logs get is the developer's, not the sentence.
    assert str(error) not in (english, chinese)


def test_storage_keeps_its_errors_short_and_its_sentences_out() -> None:
    error = ReminderPermissionError(1, "Alice", "delete")
    assert (error.short_id, error.setter_name, error.action) == (1, "Alice", "delete")
    assert str(error) == "reminder #1: may not delete (set by 'Alice')"
    storage = Path(__file__).resolve().parent.parent / "storage"
    for path in sorted(storage.rglob("*.py")):
        source = path.read_text("utf-8")
        for sentence in ("⏰", "/snooze", "Please try again", "fit to show a user"):
            assert sentence not in source, f"{path.name} holds user wording: {sentence!r}"
