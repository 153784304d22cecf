"""The confirmation a user reads when a reminder is set, in the language they wrote in.

A message with Chinese in it is answered in Chinese; any other in English. The facts are
the same in both: the short id, who it is for, the first time with the chat's zone, the
rule, and the content.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from function_calls.context import MessageContext
from function_calls.grammar import CJK
from function_calls.handlers.audience import describe_audience
from function_calls.validation import InvalidArgumentsError
from storage import ReminderView
from storage.recurrence import Schedule, format_local
from storage.repository import Audience

_WEEKDAYS_ZH = "一二三四五六日"


def confirmation(reminder: ReminderView, ctx: MessageContext, *, everyone_asked: bool) -> str:
    """'⏰ Reminder #3 for everyone set for Thu 26 Nov 09:00 (Europe/Berlin): …'."""
    first = reminder.next_fire_at
    assert first is not None  # a new reminder is active
    schedule = reminder.schedule
    if CJK.search(ctx.text):
        whom = describe_audience_zh(reminder.audience, ctx, everyone_asked=everyone_asked)
        rule = "" if schedule.kind == "once" else f"，{describe_schedule_zh(schedule)}"
        when = format_local_zh(first, ctx.zone, with_year=first.year != ctx.now().year)
        return (
            f"⏰ 已设置提醒 {reminder.label}{whom}：{when}（{ctx.timezone}）{rule}："
            f"{reminder.content}"
        )
    whom = describe_audience(reminder.audience, ctx, everyone_asked=everyone_asked)
    when = format_local(first, ctx.zone, with_year=first.year != ctx.now().year)
    rule = "" if schedule.kind == "once" else f", {schedule.describe()}"
    return (
        f"⏰ Reminder {reminder.label}{whom} set for {when} ({ctx.timezone}){rule}: "
        f"{reminder.content}"
    )


def format_local_zh(instant: datetime, zone: ZoneInfo, *, with_year: bool = False) -> str:
    """'11月26日 周四 09:00' in the given zone."""
    local = instant.astimezone(zone)
    year = f"{local.year}年" if with_year else ""
    weekday = _WEEKDAYS_ZH[local.weekday()]
    return f"{year}{local.month}月{local.day}日 周{weekday} {local:%H:%M}"


def describe_schedule_zh(schedule: Schedule) -> str:
    """The rule in Chinese: '每周一 09:00', '每3天 20:00', '每月1号 09:00'."""
    at = schedule.wall_time.strftime("%H:%M")
    step = schedule.interval
    if schedule.kind == "once":
        day = schedule.on_date
        assert day is not None
        return f"一次，{day.year}年{day.month}月{day.day}日 {at}"
    if schedule.kind == "daily":
        return f"每{step}天 {at}" if step > 1 else f"每天 {at}"
    if schedule.kind == "weekdays":
        return f"每个工作日（周一至周五） {at}"
    if schedule.kind == "weekly":
        assert schedule.weekday is not None
        name = f"周{_WEEKDAYS_ZH[schedule.weekday]}"
        return f"每{step}周的{name} {at}" if step > 1 else f"每{name} {at}"
    assert schedule.day is not None
    shorter = "（短月为最后一天）" if schedule.day > 28 else ""
    months = f"每{step}个月" if step > 1 else "每月"
    return f"{months}{schedule.day}号{shorter} {at}"


def describe_audience_zh(
    audience: Audience, ctx: MessageContext, *, everyone_asked: bool = False
) -> str:
    """describe_audience in Chinese: "（提醒所有人）", "（提醒 @Bob 和你）"."""
    if audience.everyone:
        return "（提醒所有人）"
    left_out = everyone_asked and ctx.chat_type == "group"
    why = "本群关闭了@所有人" if ctx.is_admin else "只有管理员可以@所有人"
    if not audience.mentions:
        return f"（发在群里，不@所有人：{why}）" if left_out else ""
    names = [f"@{member.name or member.user_id}" for member in audience.mentions]
    if audience.creator:
        names.append("你")
    note = f"，不@所有人：{why}" if left_out else ""
    return f"（提醒 {'和'.join(names)}{note}）"


def refusal(error: InvalidArgumentsError, asked: str) -> str:
    """Why the user's own words can't be set. Our validators' sentences are written for
    users; the wording of the schema and of pydantic's own checks ("Input should be less
    than or equal to 527040") is not, and stays out."""
    reasons = "; ".join(dict.fromkeys(i.problem for i in error.issues if i.own_words))
    if CJK.search(asked):
        return f"没有设置提醒：{reasons or '这个时间没法设成提醒'}。"
    return f"Nothing is set: {reasons or 'that time is out of the range a reminder can have'}."
