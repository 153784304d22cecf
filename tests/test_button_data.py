"""A button's data: what it names survives the round trip exactly (an occurrence to the
microsecond, as the store finds it by equality), fits Telegram's 64 bytes, and anything
not ours reads as nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from groupmate.bot.presses import PRESS_ACTIONS, ButtonData

# A reminder set "in 10 minutes" goes off at a fraction of a second.
AT = datetime(2026, 11, 28, 14, 3, 7, 123457, tzinfo=UTC)
KEYS = [
    ("done", None),
    ("snooze", "10m"),
    ("snooze", "1h"),
    ("snooze", "tomorrow"),
    ("me_too", None),
]


@pytest.mark.parametrize(("action", "preset"), KEYS)
@pytest.mark.parametrize("occurrence", [AT, None])
def test_a_button_names_its_occurrence_exactly_within_64_bytes(
    action: str, preset: str | None, occurrence: datetime | None
) -> None:
    data = ButtonData(action, "f" * 40, occurrence, preset)  # type: ignore[arg-type]
    encoded = data.encode()
    assert len(encoded.encode()) <= 64
    assert ButtonData.decode(encoded) == data


def test_every_action_has_a_button() -> None:
    assert {action for action, _ in KEYS} == set(PRESS_ACTIONS)


@pytest.mark.parametrize(
    "data",
    [
        "",
        "gm1:d:abc",
        "gm2:d:abc:1",
        "gm1:x:abc:1",
        "gm1:d:ab-c:1",  # not letters and digits
        f"gm1:d:{'a' * 41}:1",
        "gm1:d:abc:-5",
        "gm1:d:abc:1e9",
        "gm1:d:abc:123456789012345678",  # past year 9999
        "gm1:d:abc:1:extra",
    ],
)
def test_data_that_is_not_ours_reads_as_nothing(data: str) -> None:
    assert ButtonData.decode(data) is None
