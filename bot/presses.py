"""Presses on a delivered reminder's buttons, and the reactions that stand for them.

A platform adapter turns a press (a Telegram `callback_query`, a Slack `block_actions`
payload, a Discord component interaction, a Lark card action, a DingTalk card callback,
the web playground's button) into a `Press`, and hands it to `BotHost.press`. The chat
and the person come from the platform's event, never from the button's data: the data
only names which reminder, which occurrence and what to do. The `PressOutcome` says what
to answer the presser (a toast, an ephemeral line) and how the message now reads.

Reactions (Matrix's ✅ 💤 👍, and any platform's where it reports them) reach the bot as
`IncomingReaction`s; the router reads `REACTION_PRESSES` for the ones on a delivered
reminder or on a reminder's confirmation.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Literal, get_args

from groupmate.storage import OutgoingMessage
from groupmate.storage.vocabulary import ChatType

PressAction = Literal["done", "snooze", "me_too"]
SnoozePreset = Literal["10m", "1h", "tomorrow"]  # tomorrow: 09:00 in the chat's zone
PRESS_ACTIONS: tuple[PressAction, ...] = get_args(PressAction)
SNOOZE_PRESETS: tuple[SnoozePreset, ...] = get_args(SnoozePreset)

# The reactions that act on a reminder, as the bot seeds them on a delivered one.
REACTION_PRESSES: dict[str, tuple[PressAction, SnoozePreset | None]] = {
    "✅": ("done", None),
    "💤": ("snooze", "1h"),
    "👍": ("me_too", None),
}

_PREFIX = "gm1"
# One letter per action in the data: a Telegram button carries at most 64 bytes.
_CODES: dict[tuple[PressAction, SnoozePreset | None], str] = {
    ("done", None): "d",
    ("snooze", "10m"): "s",
    ("snooze", "1h"): "h",
    ("snooze", "tomorrow"): "t",
    ("me_too", None): "m",
}
_ACTIONS = {code: key for key, code in _CODES.items()}
# An occurrence is named to the microsecond: a reminder set "in 10 minutes" goes off at a
# fraction of a second, and the store finds the occurrence by equality.
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class ButtonData:
    """What a button names: the reminder, its occurrence (None: a confirmation's button,
    before any occurrence) and the action. Encoded in the button; read back from a press
    as untrusted input (`decode` returns None for anything else)."""

    action: PressAction
    reminder_id: str
    occurrence: datetime | None = None
    preset: SnoozePreset | None = None

    def __post_init__(self) -> None:
        if (self.action, self.preset) not in _CODES:
            raise ValueError(f"no button for {self.action!r} with preset {self.preset!r}")
        _check_id(self.reminder_id)

    def encode(self) -> str:
        """`gm1:<action>:<reminder id>:<occurrence in epoch microseconds, or "">`."""
        return _encoded(self.reminder_id, self.occurrence, ((self.action, self.preset),))[0]

    @classmethod
    def encode_row(
        cls,
        reminder_id: str,
        occurrence: datetime | None,
        keys: tuple[tuple[PressAction, SnoozePreset | None], ...],
    ) -> tuple[str, ...]:
        """`encode()` of one reminder's buttons at once (a delivered reminder has five,
        for each of a burst's thousands of messages): the id checked once."""
        _check_id(reminder_id)
        return _encoded(reminder_id, occurrence, keys)

    @classmethod
    def decode(cls, data: str) -> ButtonData | None:
        """The data of one of our buttons, or None (another bot's, forged, malformed)."""
        parts = data.split(":")
        if len(parts) != 4 or parts[0] != _PREFIX or parts[1] not in _ACTIONS:
            return None
        action, preset = _ACTIONS[parts[1]]
        occurrence = None
        if parts[3]:
            if not parts[3].isdigit() or len(parts[3]) > 17:
                return None
            occurrence = _EPOCH + int(parts[3]) * _MICROSECOND
        try:
            return cls(action, parts[2], occurrence, preset)
        except ValueError:
            return None


def _check_id(reminder_id: str) -> None:
    if not reminder_id.isalnum() or len(reminder_id) > 40:
        raise ValueError("a reminder id is up to 40 letters and digits")


# Each action's leading part, "gm1:d", worked out once.
_HEADS = {key: f"{_PREFIX}:{code}" for key, code in _CODES.items()}


@lru_cache(maxsize=256)
def _micros(occurrence: datetime | None) -> str:
    # A burst's thousands of reminders share a handful of occurrences: each is
    # converted once rather than once per button.
    return "" if occurrence is None else str((occurrence - _EPOCH) // _MICROSECOND)


def _encoded(
    reminder_id: str,
    occurrence: datetime | None,
    keys: tuple[tuple[PressAction, SnoozePreset | None], ...],
) -> tuple[str, ...]:
    tail = f":{reminder_id}:{_micros(occurrence)}"
    return tuple(_HEADS[key] + tail for key in keys)


@dataclass(frozen=True, slots=True)
class Press:
    """One press of a button (or a reaction that stands for one), as the platform
    reported it. `press_id` is the platform's id of this interaction: a replay of it
    (a webhook retried, a double delivery) carries the same id and acts once."""

    chat_id: str  # the chat the message with the button is in (from the event)
    chat_type: ChatType
    sender_id: str  # who pressed (from the event, verified as the platform's events are)
    sender_name: str
    data: ButtonData
    press_id: str  # e.g. "tg:cb:4382…", "slack:<action_ts>:<user>", "discord:<interaction id>"
    message_id: str | None = None  # the platform's id of the message pressed on
    added: bool = True  # a reaction taken back: False (me too: off again)
    # The platform says the presser administers the chat (as `IncomingMessage`'s): they
    # may act on others' reminders there, as their /done would.
    sender_is_admin: bool = False


@dataclass(frozen=True, slots=True)
class PressOutcome:
    """What became of a press. `answer`: a short line for the presser alone (a toast, an
    ephemeral message; "" for none). `update`: the message as it now reads, buttons
    included, to edit in place where the platform can (None: leave it as it is).
    `repeated`: a replay of a press already acted on; nothing changed."""

    ok: bool
    answer: str
    update: OutgoingMessage | None = None
    repeated: bool = False
