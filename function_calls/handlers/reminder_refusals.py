"""Why storage refused: the sentence a user reads for each storage error.

Storage raises typed errors whose fields say what went wrong (`storage.errors`); this is
the one place they become sentences, in the language of the user's message: Chinese
when it has Chinese in it, else English (`PlainSentence.for_message`). Every caller that
answers a user with a storage error goes through `refusal_text`: the tools' `refused`,
the slash commands, the REST routes' error bodies.
"""

from __future__ import annotations

from datetime import timedelta

from groupmate.function_calls.internal_text import STORAGE_DOWN, PlainSentence
from groupmate.storage import (
    AckNotNeededError,
    InvalidTimezoneError,
    MeTooError,
    ReminderChangedError,
    ReminderNotFoundError,
    ReminderPermissionError,
    ReminderStateError,
    RepeatTooOftenError,
    SnoozeTargetError,
    StorageError,
)
from groupmate.storage.vocabulary import ReminderAction

__all__ = ["refusal_sentence", "refusal_text", "unknown_zone"]

_ACTIONS_ZH: dict[ReminderAction, str] = {
    "change": "修改",
    "delete": "删除",
    "pause": "暂停",
    "resume": "恢复",
    "snooze": "推迟",
    "done": "标记完成",
}
_SHOWN_LABELS = 5  # several reminders went off: the newest this many are named


def refusal_text(exc: StorageError, asked: str) -> str:
    """What the user is told about `exc`, in the language they wrote `asked` in."""
    return refusal_sentence(exc).for_message(asked)


def refusal_sentence(exc: StorageError) -> PlainSentence:
    """`exc` in words, in English and in Chinese. A storage error without a sentence of
    its own (unreachable, misconfigured) is the database being down."""
    if isinstance(exc, SnoozeTargetError):
        return _snooze_target(exc)
    if isinstance(exc, ReminderNotFoundError):
        return _not_found(exc)
    if isinstance(exc, ReminderPermissionError):
        return _not_allowed(exc)
    if isinstance(exc, ReminderStateError):
        return _state(exc)
    if isinstance(exc, ReminderChangedError):
        return PlainSentence(
            f"Reminder #{exc.short_id} changed (or fired) just now; nothing was edited. "
            "Please try again.",
            f"提醒 #{exc.short_id} 刚刚被改动（或刚刚响过），这次什么都没有修改。请再试一次。",
        )
    if isinstance(exc, InvalidTimezoneError):
        return PlainSentence(
            f"{unknown_zone(exc.name)}.",
            f"{exc.name!r} 不是已知的时区；请使用 IANA 时区名，例如 Asia/Shanghai。",  # noqa: RUF001
        )
    if isinstance(exc, RepeatTooOftenError):
        return _too_often(exc)
    if isinstance(exc, AckNotNeededError):
        who = ", ".join(exc.waiting) or "others"
        return PlainSentence(
            f"Reminder #{exc.short_id} waits for {who} to say done.",
            f"提醒 #{exc.short_id} 在等 {'、'.join(exc.waiting) or '别人'} 说完成。",
        )
    if isinstance(exc, MeTooError):
        return _me_too(exc)
    return STORAGE_DOWN


_ME_TOO: dict[str, tuple[str, str]] = {
    "off": ("its setter turned “remind me too” off for it", "设置者关闭了“也提醒我”"),
    "private": ("it is a private chat's", "这是私聊的提醒"),
    "everyone": ("it already reminds everyone", "它已经提醒所有人"),
    "own": ("it is your own reminder: it reminds you already", "这是你自己的提醒，已经会提醒你"),
    "rules": (
        "this chat's rules keep members from adding people to reminders",
        "这个聊天的规则不允许成员给提醒添加人",
    ),
}


def _me_too(exc: MeTooError) -> PlainSentence:
    english, chinese = _ME_TOO[exc.problem]
    return PlainSentence(
        f"I can't add you to reminder #{exc.short_id}: {english}.",
        f"无法把你加到提醒 #{exc.short_id}：{chinese}。",
    )


def _too_often(exc: RepeatTooOftenError) -> PlainSentence:
    """The chat's limits, said as numbers the user can act on."""
    if exc.every < exc.minimum:
        minutes = exc.minimum // timedelta(minutes=1)
        return PlainSentence(
            f"That repeats too often: the shortest repeat here is every {minutes} minutes.",
            f"重复得太频繁了：这里最短每{minutes}分钟一次。",
        )
    return PlainSentence(
        f"That would fire {exc.per_day} times a day; the most here is {exc.max_per_day}. "
        "Use a longer step, or hours (e.g. 'every hour from 9 to 17').",
        f"这样每天会提醒{exc.per_day}次，这里最多{exc.max_per_day}次。"
        "请把间隔调长，或限定时段（例如“每小时 9点到17点”）。",
    )


def unknown_zone(name: str) -> str:
    """Why `name` is no time zone, as an argument's problem (a hint may follow it)."""
    return f"{name!r} is not a known time zone; use an IANA name such as Europe/Berlin"


def _not_found(exc: ReminderNotFoundError) -> PlainSentence:
    if exc.short_id is not None:
        label: str | None = f"#{exc.short_id}"
    else:
        label = None if exc.reference is None else repr(exc.reference)
    which, which_zh = (
        (f"Reminder {label}", f"提醒 {label} ") if label else ("That reminder", "这个提醒")
    )
    if exc.reason == "finished":
        return PlainSentence(f"{which} has just finished.", f"{which_zh}刚刚已经结束了。")
    if exc.reason == "past_due":
        return PlainSentence(
            f"{which} was due at a time that has passed; edit it to give it a new time.",
            f"{which_zh}的时间已经过了；请修改它，给它一个新的时间。",  # noqa: RUF001
        )
    if label is None:  # a full id: internal, not shown back
        return PlainSentence(
            "There is no such active reminder in this chat.",
            "这个聊天里没有这个进行中的提醒。",
        )
    return PlainSentence(
        f"There is no active reminder {label} in this chat.",
        f"这个聊天里没有进行中的提醒 {label}。",
    )


def _not_allowed(exc: ReminderPermissionError) -> PlainSentence:
    setter = exc.setter_name
    what = "mark it done" if exc.action == "done" else f"{exc.action} it"
    return PlainSentence(
        f"Reminder #{exc.short_id} was set by {setter or 'someone else'}; "
        f"only they or a group admin can {what}.",
        f"提醒 #{exc.short_id} 是{f' {setter} ' if setter else '别人'}设置的；"  # noqa: RUF001
        f"只有设置者或群管理员可以{_ACTIONS_ZH[exc.action]}它。",
    )


def _state(exc: ReminderStateError) -> PlainSentence:
    which = f"#{exc.short_id}"
    if exc.problem == "snooze_rule":
        # A one-time reminder that went off and was snoozed: the snooze, under the same
        # number, is all that is left of it.
        return PlainSentence(
            f"Reminder {which} is snoozed and fires once more; a snooze can't repeat. "
            "Set a repeating reminder with /remind.",
            f"提醒 {which} 已推迟，只会再响一次；推迟的提醒不能重复。"  # noqa: RUF001
            "要重复提醒，请用 /提醒 新设一个。",
        )
    if exc.problem == "once_pause":
        return PlainSentence(
            f"Reminder {which} fires only once; cancel or edit it instead.",
            f"提醒 {which} 只响一次，不能暂停；请取消或修改它。",  # noqa: RUF001
        )
    return PlainSentence(
        # Said to a snooze and to a done alike: neither has an occurrence to act on yet.
        f"Reminder {which} hasn't gone off yet: there's nothing to snooze or mark done. "
        f"Edit it to move it, or /cancel {which} to stop it.",
        f"提醒 {which} 还没有响过，没有可推迟或完成的。要改时间，请修改它；"  # noqa: RUF001
        f"要停止，请用 /cancel {which}。",
    )


def _snooze_target(exc: SnoozeTargetError) -> PlainSentence:
    """No reminder to snooze (or say done to), or several: say which, with an example."""
    done = exc.action == "done"

    def example(label: str) -> str:
        return f"/done {label}" if done else f"/snooze {label} 10m"

    if exc.problem == "not_a_reminder":
        if done:
            return PlainSentence("That message isn't a reminder.", "那条消息不是提醒。")
        return PlainSentence(
            "That message isn't a reminder I can snooze.",
            "那条消息不是我能推迟的提醒。",
        )
    if exc.problem == "several_recent" and exc.labels:
        shown = exc.labels[:_SHOWN_LABELS]
        return PlainSentence(
            f"Several reminders went off recently ({', '.join(shown)}); say which one, "
            f"e.g. {example(exc.labels[0])}.",
            f"最近响过好几个提醒（{'、'.join(shown)}）；请说明是哪一个，"  # noqa: RUF001
            f"例如 {example(exc.labels[0])}。",
        )
    if exc.problem == "several_match" and exc.labels:
        shown = exc.labels[:_SHOWN_LABELS]
        return PlainSentence(
            f"That message could be any of several reminders ({', '.join(shown)}); say "
            f"which one, e.g. {example(exc.labels[0])}.",
            f"那条消息可能是好几个提醒之一（{'、'.join(shown)}）；请说明是哪一个，"  # noqa: RUF001
            f"例如 {example(exc.labels[0])}。",
        )
    window, window_zh = _window(exc.window)
    return PlainSentence(
        f"No reminder went off here in the last {window}; say which one, e.g. {example('#3')}.",
        f"最近{window_zh}里这里没有响过提醒；请说明是哪一个，例如 {example('#3')}。",  # noqa: RUF001
    )


def _window(window: timedelta) -> tuple[str, str]:
    """'hour' / '一小时', '3 hours' / '3 小时', '20 minutes' / '20 分钟'."""
    minutes = max(1, round(window.total_seconds() / 60))
    if minutes % 60:
        return f"{minutes} minutes", f" {minutes} 分钟"
    hours = minutes // 60
    return ("hour", "一小时") if hours == 1 else (f"{hours} hours", f" {hours} 小时")
