"""Key-value state of platform adapters (a Matrix sync token, a device login), kept in
the bot's database so that a restart resumes where the last run stopped."""

from __future__ import annotations

from sqlalchemy.orm import Session

from groupmate.storage.database import Database
from groupmate.storage.models import AdapterState


async def load_state(database: Database, key: str) -> str | None:
    def read(session: Session) -> str | None:
        row = session.get(AdapterState, key)
        return None if row is None else row.value

    return await database.read(read)


async def save_state(database: Database, key: str, value: str) -> None:
    def write(session: Session) -> None:
        # merge: an insert the first time, an update after; the same on every backend.
        session.merge(AdapterState(key=key, value=value))

    await database.write(write)
