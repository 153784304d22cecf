"""A delivered group reminder's buttons, as the core composes them (Done, Remind me too;
the three snoozes), for the platform adapters' button tests."""

from __future__ import annotations

from datetime import UTC, datetime

from groupmate.bot.presses import ButtonData, PressAction, SnoozePreset
from groupmate.storage import Button

DUE = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)


def reminder_buttons(
    reminder: str = "7", occurrence: datetime = DUE
) -> tuple[tuple[Button, ...], ...]:
    def one(label: str, action: PressAction, preset: SnoozePreset | None = None) -> Button:
        return Button(label, ButtonData(action, reminder, occurrence, preset).encode())

    return (
        (one("✅ Done", "done"), one("👍 Remind me too", "me_too")),
        (
            one("10 min", "snooze", "10m"),
            one("1 h", "snooze", "1h"),
            one("Tomorrow", "snooze", "tomorrow"),
        ),
    )
