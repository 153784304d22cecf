"""The words a chat reads about its reminders: the confirmation when one is set, in the
language the user wrote in; a rule in words (`describe_schedule`); and the message a
reminder is delivered as (`reminder_message`, which the scheduler is given).

A message with Chinese in it is answered in Chinese; any other in English. The facts are
the same in both: the short id, who it is for, the first time with the chat's zone, the
rule, and the content. Why storage refused a change is said in `reminder_refusals`.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.ack_words import waiting_line
from groupmate.function_calls.handlers.audience import describe_audience
from groupmate.function_calls.handlers.reminder_actions import shown
from groupmate.function_calls.handlers.repeat_words import (
    interval_words,
    interval_words_zh,
    limit_words,
)
from groupmate.function_calls.handlers.until_done_words import until_done_words
from groupmate.function_calls.language import is_chinese, language_of
from groupmate.function_calls.validation import InvalidArgumentsError
from groupmate.storage import Button, Member, OutgoingMessage, ReminderView
from groupmate.storage.deliveries import Claim
from groupmate.storage.recurrence import Schedule
from groupmate.storage.reminder_rows import Audience
from groupmate.storage.vocabulary import HistoryOutcome
from groupmate.storage.workdays import WorkCalendar

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_WEEKDAYS_ZH = "一二三四五六日"


def format_local(instant: datetime, zone: ZoneInfo, *, with_year: bool = False) -> str:
    """'Mon 24 Nov 09:00' in the given zone."""
    local = instant.astimezone(zone)
    return local.strftime("%a %d %b %Y %H:%M" if with_year else "%a %d %b %H:%M")


def confirmation(reminder: ReminderView, ctx: MessageContext, *, everyone_asked: bool) -> str:
    """'⏰ Reminder #3 for everyone set for Thu 26 Nov 09:00 (Europe/Berlin): …'."""
    first = reminder.next_fire_at
    assert first is not None  # a new reminder is active
    schedule = reminder.schedule
    if is_chinese(ctx.text):
        whom = describe_audience_zh(reminder.audience, ctx, everyone_asked=everyone_asked)
        rule = "" if schedule.kind == "once" else f"，{describe_rule(reminder, chinese=True)}"
        when = format_local_zh(first, ctx.zone, with_year=first.year != ctx.now().year)
        return (
            f"⏰ 已设置提醒 {reminder.label}{whom}：{when}（{ctx.timezone}）{rule}："
            f"{shown(reminder.content, reminder.action)}"
        )
    whom = describe_audience(reminder.audience, ctx, everyone_asked=everyone_asked)
    when = format_local(first, ctx.zone, with_year=first.year != ctx.now().year)
    rule = "" if schedule.kind == "once" else f", {describe_rule(reminder)}"
    return (
        f"⏰ Reminder {reminder.label}{whom} set for {when} ({ctx.timezone}){rule}: "
        f"{shown(reminder.content, reminder.action)}"
    )


def ordinal(number: int) -> str:
    """'1st', '22nd', '111th'."""
    if 10 <= number % 100 <= 20:
        return f"{number}th"
    return f"{number}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(number % 10, 'th') }"


def describe_schedule(schedule: Schedule) -> str:
    """The rule in words, with its limit: 'every Monday at 09:00', 'every 2 hours from
    09:00, 5 times (the last on Fri 27 Mar at 17:00)'."""
    return _rule(schedule) + limit_words(schedule)


def describe_rule(reminder: ReminderView, *, chinese: bool = False) -> str:
    """The reminder's rule in words; an "until done" one's says who must say done, and
    its cap and last time from its next one: 'every 10 minutes from 21:00 until someone
    says done (at most 12 times: the last on Wed 25 Nov at 22:50)'."""
    schedule, start = reminder.schedule, reminder.next_fire_at
    if reminder.ack is None or start is None:
        return describe_schedule_zh(schedule) if chinese else describe_schedule(schedule)
    rule = _rule_zh(schedule) if chinese else _rule(schedule)
    asker = reminder.created_by_name
    return rule + until_done_words(schedule, start, reminder.ack, asker, chinese=chinese)


def _rule(schedule: Schedule) -> str:
    if schedule.kind == "interval":
        return interval_words(schedule)
    at = schedule.wall_time.strftime("%H:%M")
    step = schedule.interval
    if schedule.kind == "once":
        assert schedule.on_date is not None
        return f"once, on {schedule.on_date.strftime('%a %d %b %Y')} at {at}"
    if schedule.kind == "daily":
        return f"every {step} days at {at}" if step > 1 else f"every day at {at}"
    if schedule.kind == "weekdays":
        return workdays_words(schedule.calendar, f" at {at}")
    if schedule.kind == "weekly":
        assert schedule.weekday is not None
        name = WEEKDAY_NAMES[schedule.weekday]
        return f"every {step} weeks on {name} at {at}" if step > 1 else f"every {name} at {at}"
    assert schedule.day is not None
    shorter = " (or the month's last day)" if schedule.day > 28 else ""
    months = f"{step} months" if step > 1 else "month"
    return f"every {months} on the {ordinal(schedule.day)}{shorter} at {at}"


def workdays_words(calendar: WorkCalendar | None, at: str = "") -> str:
    """'every workday (China's calendar) at 09:00', 'every weekday at 09:00, skipping
    Germany's public holidays'; `at`: the time's words, if any."""
    if calendar is None:
        return f"every weekday (Mon-Fri){at}"
    if calendar.moves_work:
        return f"every workday ({calendar.country_name}'s calendar){at}"
    return f"every weekday{at}, skipping {calendar.country_name}'s public holidays"


def workdays_words_zh(calendar: WorkCalendar | None) -> str:
    if calendar is None:
        return "每个工作日（周一至周五）"
    if calendar.country == "CN":
        return "每个工作日（中国法定节假日）"
    return f"每个工作日（跳过{calendar.country}的公共假日）"


def format_local_zh(instant: datetime, zone: ZoneInfo, *, with_year: bool = False) -> str:
    """'11月26日 周四 09:00' in the given zone."""
    local = instant.astimezone(zone)
    year = f"{local.year}年" if with_year else ""
    weekday = _WEEKDAYS_ZH[local.weekday()]
    return f"{year}{local.month}月{local.day}日 周{weekday} {local:%H:%M}"


def describe_schedule_zh(schedule: Schedule) -> str:
    """The rule in Chinese, with its limit: '每周一 09:00', '每3天 20:00', '每月1号 09:00',
    '每2小时（09:00起），共5次（最后一次：3月27日 周五 17:00）'."""
    return _rule_zh(schedule) + limit_words(schedule, chinese=True)


def _rule_zh(schedule: Schedule) -> str:
    if schedule.kind == "interval":
        return interval_words_zh(schedule)
    at = schedule.wall_time.strftime("%H:%M")
    step = schedule.interval
    if schedule.kind == "once":
        day = schedule.on_date
        assert day is not None
        return f"一次，{day.year}年{day.month}月{day.day}日 {at}"
    if schedule.kind == "daily":
        return f"每{step}天 {at}" if step > 1 else f"每天 {at}"
    if schedule.kind == "weekdays":
        return f"{workdays_words_zh(schedule.calendar)} {at}"
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
        return f"（发在群里，只@你：{why}）" if left_out else ""
    names = [f"@{member.name or member.user_id}" for member in audience.mentions]
    also = ""
    if audience.creator:
        names.append("你")
    elif ctx.chat_type == "group":
        also = "，也会@你"
    note = f"，不@所有人：{why}" if left_out else ""
    return f"（提醒 {'和'.join(names)}{also}{note}）"


def refusal(error: InvalidArgumentsError, asked: str) -> str:
    """Why the user's own words can't be set. Our validators' sentences are written for
    users; the wording of the schema and of pydantic's own checks ("Input should be less
    than or equal to 527040") is not, and stays out."""
    reasons = "; ".join(dict.fromkeys(i.problem for i in error.issues if i.own_words))
    if is_chinese(asked):
        return f"没有设置提醒：{reasons or '这个时间没法设成提醒'}。"
    return f"Nothing is set: {reasons or 'that time is out of the range a reminder can have'}."


def reminder_message(
    claim: Claim, now: datetime, buttons: tuple[tuple[Button, ...], ...] = ()
) -> OutgoingMessage:
    """The chat message for one occurrence, sent at `now`; in a group it mentions who it
    is for, and always the person who set it (in a muted group a mention is what still
    notifies), and everyone only when the reminder is for everyone (which only those
    the chat's rules allow, admins by default, can set). The scheduler's `Compose`; the
    bot's adds the `buttons` (bot.press_buttons)."""
    if claim.chat_type != "group":
        text = f"⏰ Reminder: {claim.content}" + late_note(claim, now)
        return _outgoing(claim, text + _waiting(claim), (), buttons)
    audience = claim.audience
    # The creator is the sender of the message that set it (stored from the message's
    # context); a row from before names no one else and is for its creator.
    creator = Member(claim.created_by, claim.created_by_name or claim.created_by)
    named = [
        Member(m.user_id, m.name or m.user_id)
        for m in audience.mentions
        if m.user_id != creator.user_id
    ]
    if audience.everyone:
        text = f"⏰ Reminder for everyone (set by @{creator.name}): {claim.content}"
        text += late_note(claim, now) + _waiting(claim)
        return _outgoing(claim, text, (creator,), buttons, everyone=True)
    mine = audience.creator or not named
    listed = [creator, *named] if mine else named
    names = ", ".join(f"@{m.name}" for m in listed)
    by = "" if mine else f" (set by @{creator.name})"
    text = f"⏰ Reminder for {names}{by}: {claim.content}" + late_note(claim, now)
    return _outgoing(claim, text + _waiting(claim), (creator, *named), buttons)


def _waiting(claim: Claim) -> str:
    """An "until done" reminder's line of who has and who hasn't said done (its acks
    come with the claim: read for these reminders alone)."""
    if claim.ack is None:
        return ""
    creator = Member(claim.created_by, claim.created_by_name or claim.created_by)
    lang = language_of(claim.content)
    line = waiting_line(claim.ack, claim.audience, creator, claim.acked, lang)
    return f"\n{line}" if line else ""


def _outgoing(
    claim: Claim,
    text: str,
    people: tuple[Member, ...],
    buttons: tuple[tuple[Button, ...], ...],
    *,
    everyone: bool = False,
) -> OutgoingMessage:
    return OutgoingMessage(
        chat_id=claim.chat_id,
        text=text,
        mentions=tuple(m.user_id for m in people),
        kind="reminder",
        reminder_id=claim.reminder_id,
        occurrence=claim.occurrence,
        people=people,
        everyone=everyone,
        buttons=buttons,
    )


def late_note(claim: Claim, now: datetime) -> str:
    """ "\n(scheduled 09:00, delivered 09:12 after downtime)" for a late occurrence, else
    nothing: the note a reminder (or a scheduled action's report) carries."""
    if not claim.late:
        return ""
    zone = ZoneInfo(claim.timezone)
    scheduled, delivered = claim.occurrence.astimezone(zone), now.astimezone(zone)
    due = (
        scheduled.strftime("%H:%M")
        if scheduled.date() == delivered.date()
        else format_local(claim.occurrence, zone)
    )
    return f"\n(scheduled {due}, delivered {delivered:%H:%M} after downtime)"


_OUTCOME_WORDS: dict[HistoryOutcome, str] = {
    "sent": "sent",
    "sent_late": "sent late",
    "skipped_missed": "skipped (the bot was down)",
    "skipped_quiet": "skipped (a quiet day)",
    "failed": "failed",
    "cancelled": "cancelled before sending",
    "snoozed": "snoozed",
    "done": "done",
}


def outcome_words(outcome: HistoryOutcome) -> str:
    """What became of an occurrence, in words: "sent late", "skipped (a quiet day)"."""
    return _OUTCOME_WORDS.get(outcome, outcome)
