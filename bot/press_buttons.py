"""The buttons under a delivered reminder, and the scheduler's `Compose` that adds them:
Done; Snooze 10 min, 1 h, tomorrow 09:00; and, on a group's reminder that lets members
add themselves, Remind me too. Labels in the reminder's language (Chinese for one
written in Chinese: `function_calls.language`). A platform without buttons leaves them
out; its words and reactions act the same."""

from __future__ import annotations

from datetime import datetime

from groupmate.bot.presses import ButtonData, PressAction, SnoozePreset
from groupmate.function_calls.handlers.reminder_words import reminder_message
from groupmate.function_calls.language import Lang, language_of
from groupmate.storage import Button, OutgoingMessage
from groupmate.storage.deliveries import Claim

_LABELS: dict[tuple[PressAction, SnoozePreset | None], tuple[str, str]] = {
    ("done", None): ("✅ Done", "✅ 完成"),
    ("snooze", "10m"): ("💤 10 min", "💤 10分钟"),
    ("snooze", "1h"): ("💤 1 h", "💤 1小时"),
    ("snooze", "tomorrow"): ("💤 Tomorrow 9:00", "💤 明天9点"),
    ("me_too", None): ("👍 Remind me too", "👍 也提醒我"),
}
_ACT: tuple[tuple[PressAction, SnoozePreset | None], ...] = (
    ("done", None),
    ("snooze", "10m"),
    ("snooze", "1h"),
    ("snooze", "tomorrow"),
)
_ME_TOO: tuple[tuple[PressAction, SnoozePreset | None], ...] = (("me_too", None),)


# Each row set's labels in each language, worked out once: a burst composes thousands.
_SHOWN: dict[tuple[bool, Lang], tuple[str, ...]] = {
    (me_too, lang): tuple(_LABELS[key][lang == "zh"] for key in _ACT + _ME_TOO * me_too)
    for me_too in (False, True)
    for lang in ("en", "zh")
}


def reminder_buttons(
    reminder_id: str,
    occurrence: datetime | None,
    *,
    lang: Lang,
    act: bool = True,
    me_too: bool = False,
) -> tuple[tuple[Button, ...], ...]:
    """Row 1 (`act`): Done and the snoozes; row 2 (`me_too`): Remind me too."""
    keys = _ACT * act + _ME_TOO * me_too
    if not keys:
        return ()
    # One encoding for both rows: the id is checked and the occurrence written once.
    data = ButtonData.encode_row(reminder_id, occurrence, keys)
    labels = _SHOWN[me_too, lang][len(_ACT) * (not act) :]
    buttons = tuple(map(Button, labels, data))
    if act and me_too:
        return buttons[: len(_ACT)], buttons[len(_ACT) :]
    return (buttons,)


def offers_me_too(claim: Claim) -> bool:
    """A group's reminder for named people (not everyone) that lets members join."""
    return claim.chat_type == "group" and claim.me_too and not claim.audience.everyone


def compose_with_buttons(claim: Claim, now: datetime) -> OutgoingMessage:
    """`reminder_message`, with its buttons: the bot's `Compose`."""
    buttons = reminder_buttons(
        claim.reminder_id,
        claim.occurrence,
        lang=language_of(claim.content),
        me_too=offers_me_too(claim),
    )
    return reminder_message(claim, now, buttons)
