"""A repeating reminder moved onto a new next time: by a new zone (`/tz`) or a new
work-day calendar (`/settings workdays`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from groupmate.storage.models import REMINDER_DONE


def next_fire_values(next_fire_at: datetime | None) -> dict[str, Any]:
    """The columns of a repeating reminder moved onto `next_fire_at`. None: its limit
    passed in the move (the new zone or calendar left no occurrence before its end), so
    it is done, kept for history, as a claim of its last occurrence would leave it: an
    active row without a next time would never fire nor end."""
    if next_fire_at is None:
        return {"next_fire_at": None, "status": REMINDER_DONE}
    return {"next_fire_at": next_fire_at}
