"""For the platform adapters' button tests: a delivered group reminder's buttons (as a
platform is handed them), a running bot's reminders made due, its acknowledgements
counted, and its SQLite file held by another writer for a while (a slow press)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import text, update

from groupmate.bot.press_buttons import reminder_buttons
from groupmate.storage import Button
from groupmate.storage.models import Reminder
from tests.http_harness import Api

DUE = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
Rows = tuple[tuple[Button, ...], ...]


def group_buttons(reminder: str = "7", occurrence: datetime = DUE) -> Rows:
    """A delivered group reminder's buttons as the bot composes them: Done and the three
    snoozes, then Remind me too."""
    return reminder_buttons(reminder, occurrence, lang="en", me_too=True)


async def acknowledgements(api: Api) -> int:
    assert api.bot.reminders is not None
    count = await api.bot.reminders.database.read(
        lambda session: session.execute(text("SELECT count(*) FROM acknowledgements")).scalar_one()
    )
    return int(count)


async def due_now(api: Api) -> None:
    """Every reminder falls due a second ago, on a whole second: this branch's
    ButtonData names an occurrence in whole seconds (main's names it to the microsecond,
    6f71c92), and the store finds an occurrence by equality."""
    due = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=1)
    assert api.bot.reminders is not None
    await api.bot.reminders.database.write(
        lambda session: session.execute(update(Reminder).values(next_fire_at=due))
    )


@contextmanager
def hold_database(path: Path, *, seconds: float) -> Iterator[None]:
    """Another writer holds the SQLite file for `seconds` (from entering): the bot's
    writes wait for it (its busy timeout is 30 s), as behind a long transaction."""
    busy = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    busy.execute("BEGIN EXCLUSIVE")
    release = threading.Timer(seconds, lambda: busy.execute("COMMIT"))
    release.start()
    try:
        yield
    finally:
        release.join()
        busy.close()
