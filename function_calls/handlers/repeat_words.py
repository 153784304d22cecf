"""Repeats within a day and repeat limits in words, English and Chinese: "every 2 hours
from 09:00 to 17:00 on weekdays", "5 times (the last on Fri 27 Mar at 17:00)". The last
occurrence is always said with its date, as the same words are listed days later."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from groupmate.storage.recurrence import Schedule

_DAYS_EN = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_DAYS_ZH = "一二三四五六日"
_WORKWEEK = (0, 1, 2, 3, 4)
_HOUR = timedelta(hours=1)


def _step_en(every: timedelta) -> str:
    minutes = every // timedelta(minutes=1)
    if every == _HOUR:
        return "every hour"
    if minutes % 60 == 0:
        return f"every {minutes // 60} hours"
    return f"every {minutes} minutes"


def _step_zh(every: timedelta) -> str:
    minutes = every // timedelta(minutes=1)
    if every == _HOUR:
        return "每小时"
    return f"每{minutes // 60}小时" if minutes % 60 == 0 else f"每{minutes}分钟"


def interval_words(schedule: Schedule) -> str:
    """'every 2 hours from 09:00', 'every hour from 09:00 to 17:00 on weekdays'."""
    assert schedule.every is not None
    span = f"from {schedule.wall_time:%H:%M}"
    if schedule.window_end is not None:
        span += f" to {schedule.window_end:%H:%M}"
    days = schedule.on_days
    on = ""
    if days == _WORKWEEK:
        on = " on weekdays"
    elif days:
        on = " on " + ", ".join(_DAYS_EN[day] for day in days)
    return f"{_step_en(schedule.every)} {span}{on}"


def interval_words_zh(schedule: Schedule) -> str:
    """'工作日 09:00至17:00 每小时', '每2小时（09:00起）'."""
    assert schedule.every is not None
    days = schedule.on_days
    on = ""
    if days == _WORKWEEK:
        on = "工作日 "
    elif days:
        on = "每周" + "、".join(_DAYS_ZH[day] for day in days) + " "
    step = _step_zh(schedule.every)
    if schedule.window_end is None:
        return f"{on}{step}（{schedule.wall_time:%H:%M}起）"
    return f"{on}{schedule.wall_time:%H:%M}至{schedule.window_end:%H:%M} {step}"


def _when_en(instant: datetime, schedule: Schedule) -> str:
    local = instant.astimezone(schedule.zone)
    return f"{_day_en(local)} at {local:%H:%M}"


def _day_en(day: date) -> str:
    return f"{day:%a} {day.day} {day:%b}"


def _when_zh(instant: datetime, schedule: Schedule) -> str:
    local = instant.astimezone(schedule.zone)
    return f"{local.month}月{local.day}日 周{_DAYS_ZH[local.weekday()]} {local:%H:%M}"


def limit_words(schedule: Schedule, *, chinese: bool = False) -> str:
    """', 5 times (the last on Fri 27 Mar at 17:00)', ' until Fri 5 Dec (...)', or '';
    in Chinese '，共5次（最后一次：3月27日 周五 17:00）', '，直到2026年12月5日（…）'."""
    if not schedule.limited:
        return ""
    when = _when_zh if chinese else _when_en
    parts = []
    if schedule.count is not None:
        count = schedule.count
        parts.append(f"，共{count}次" if chinese else f", {count} times" if count > 1 else ", once")
    until = schedule.until
    if isinstance(until, datetime):
        parts.append(
            f"，直到{when(until, schedule)}" if chinese else f" until {when(until, schedule)}"
        )
    elif until is not None:
        day = f"{until.year}年{until.month}月{until.day}日" if chinese else _day_en(until)
        parts.append(f"，直到{day}" if chinese else f" until {day}")
    last = last_words(schedule, chinese=chinese)
    if last is None:
        parts.append("（已无剩余）" if chinese else " (none left)")
    else:
        parts.append(f"（最后一次：{last}）" if chinese else f" (the last on {last})")
    return "".join(parts)


def last_words(schedule: Schedule, *, chinese: bool = False) -> str | None:
    """When a limited schedule fires the last time: 'Fri 27 Mar at 17:00', '3月27日 周五
    17:00'; None when none is left."""
    last = schedule.last()
    if last is None:
        return None
    return (_when_zh if chinese else _when_en)(last, schedule)
