"""The words of "done" and "remind me too": the line a reminder that waits for people
shows (who has and who hasn't said done), the status lines a pressed message gets, and
the answers a done or a "me too" gives. English, or Chinese for a reminder (or a
message) written in Chinese (`function_calls.language`)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from groupmate.function_calls.language import Lang, PlainSentence
from groupmate.storage import Member
from groupmate.storage.acks import AckResult, MeTooResult, must_ack
from groupmate.storage.reminder_rows import Audience
from groupmate.storage.vocabulary import AckRule


def names(people: tuple[Member, ...], lang: Lang) -> str:
    return ("、" if lang == "zh" else ", ").join(m.name or m.user_id for m in people)


def waiting_line(
    rule: AckRule | None,
    audience: Audience,
    creator: Member,
    acked: tuple[Member, ...],
    lang: Lang,
) -> str:
    """ "Done: Alice · waiting for: Bob" for a reminder that waits for named people
    and has heard from some; "" for any other (nothing to tell apart)."""
    waiting_for = must_ack(rule, audience, creator)
    if len(waiting_for) < 2 and not acked:
        return ""
    done_ids = {m.user_id for m in acked}
    waiting = tuple(m for m in waiting_for if m.user_id not in done_ids)
    if not acked:
        return (
            "等待：" + names(waiting, lang)
            if lang == "zh"
            else f"Waiting for: {names(waiting, lang)}"
        )
    done = names(acked, lang)
    if lang == "zh":
        return f"已完成：{done}" + (f" · 等待：{names(waiting, lang)}" if waiting else "")
    return f"Done: {done}" + (f" · waiting for: {names(waiting, lang)}" if waiting else "")


def clock_time(at: datetime, zone: ZoneInfo) -> str:
    return at.astimezone(zone).strftime("%H:%M")


def done_status(name: str, at: datetime, zone: ZoneInfo) -> PlainSentence:
    """The status line a done adds to the reminder's message: "✅ Done by Alice 09:02"."""
    when = clock_time(at, zone)
    return PlainSentence(f"✅ Done by {name} {when}", f"✅ {name} 已完成 {when}")


def snoozed_status(name: str, until: datetime, zone: ZoneInfo) -> PlainSentence:
    """ "💤 Snoozed to 10:02 by Bob"."""
    when = clock_time(until, zone)
    return PlainSentence(f"💤 Snoozed to {when} by {name}", f"💤 {name} 推迟到 {when}")


def already_snoozed(until: datetime, zone: ZoneInfo) -> PlainSentence:
    when = clock_time(until, zone)
    return PlainSentence(f"Already snoozed to {when}.", f"已经推迟到 {when}。")


def done_answer(result: AckResult) -> PlainSentence:
    """What the person who said done is told."""
    label = result.reminder.label
    if not result.new:
        return PlainSentence(f"You already said done to {label}.", f"你已经对 {label} 说过完成了。")
    if result.ended:
        return PlainSentence(
            f"✅ {label} is done: it won't remind again.", f"✅ {label} 已完成，不会再提醒。"
        )
    if result.waiting:
        return PlainSentence(
            f"✅ Noted. {label} still waits for {names(result.waiting, 'en')}.",
            f"✅ 已记下。{label} 还在等：{names(result.waiting, 'zh')}。",
        )
    return PlainSentence(f"✅ {label} marked done.", f"✅ {label} 已标记完成。")


def me_too_status(on: bool, name: str) -> PlainSentence:
    """The status line "remind me too" adds: "👍 Bob will be reminded too"."""
    if on:
        return PlainSentence(f"👍 {name} will be reminded too", f"👍 {name} 也会收到提醒")
    return PlainSentence(f"{name} won't be reminded", f"{name} 不再收到提醒")


def me_too_answer(result: MeTooResult) -> PlainSentence:
    label = result.reminder.label
    if result.on:
        if not result.changed:
            return PlainSentence(
                f"You're already reminded by {label}.", f"{label} 已经会提醒你了。"
            )
        return PlainSentence(
            f"👍 You'll be reminded too, from the next time {label} goes off.",
            f"👍 从下一次起，{label} 也会提醒你。",
        )
    if not result.changed:
        return PlainSentence(f"{label} wasn't reminding you.", f"{label} 本来就不提醒你。")
    return PlainSentence(
        f"OK, {label} won't remind you any more.", f"好的，{label} 不会再提醒你了。"
    )
