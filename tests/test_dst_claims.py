"""Daylight-saving transitions through claim_due, on SQLite and PostgreSQL.

A daily 02:30 Europe/Berlin reminder is claimed by the dispatcher on a fake clock that
steps through each night in ten-minute steps: exactly one delivery per local day, each
claimed at its UTC instant. In the spring gap 02:30 does not exist and fires at 03:30
CEST; in the autumn overlap 02:30 happens twice and fires at the first one only.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from groupmate.storage import ReminderService
from tests.conftest import FakeClock, Outbox
from tests.test_delivery import deliveries, make, scheduler

BERLIN = ZoneInfo("Europe/Berlin")
STEP = timedelta(minutes=10)


def utc(year: int, month: int, day: int, hour: int, minute: int) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def nights(first: datetime, count: int) -> Iterator[datetime]:
    """22:00 to 04:00 UTC of `count` nights, every ten minutes: 00:00-06:00 in Berlin."""
    for night in range(count):
        moment = first + timedelta(days=night)
        end = moment + timedelta(hours=6)
        while moment <= end:
            yield moment
            moment += STEP


CASES = {
    "spring-gap": (
        utc(2026, 3, 27, 22, 0),
        [
            utc(2026, 3, 28, 1, 30),  # 02:30 CET
            utc(2026, 3, 29, 1, 30),  # 02:30 does not exist: 03:30 CEST
            utc(2026, 3, 30, 0, 30),  # 02:30 CEST
        ],
        utc(2026, 3, 31, 0, 30),  # next
    ),
    "autumn-overlap": (
        utc(2026, 10, 23, 22, 0),
        [
            utc(2026, 10, 24, 0, 30),  # 02:30 CEST
            utc(2026, 10, 25, 0, 30),  # the first 02:30 (CEST); not the second at 01:30 UTC
            utc(2026, 10, 26, 1, 30),  # 02:30 CET
        ],
        utc(2026, 10, 27, 1, 30),  # next
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
async def test_daily_0230_berlin_is_claimed_once_per_local_day(
    reminders: ReminderService, clock: FakeClock, outbox: Outbox, case: str
) -> None:
    first_night, expected, following = CASES[case]
    clock.set(first_night - timedelta(hours=1))
    reminder = await make(reminders, clock, "daily", time(2, 30))
    assert reminder.next_fire_at == expected[0]
    for moment in nights(first_night, len(expected)):
        clock.set(moment)
        await scheduler(reminders).run_due()
    rows = await deliveries(reminders, reminder)
    assert [(row.occurrence, row.claimed_at, row.outcome) for row in rows] == [
        (instant, instant, "sent") for instant in expected
    ]
    assert [message.occurrence for message in outbox.messages] == expected
    local_days = [instant.astimezone(BERLIN).date() for instant in expected]
    assert len(set(local_days)) == len(expected)
    assert all("after downtime" not in text for text in outbox.texts())
    (stored,), _ = await reminders.list_for_chat("chat-1")
    assert stored.next_fire_at == following  # each claim moved the row on
