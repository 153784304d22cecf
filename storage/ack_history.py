"""A chat's reminder history with who said done: the deliveries and snoozes
(`changes.history`) and a line for each acknowledgement, newest first. Runs inside the
caller's transaction."""

from __future__ import annotations

from typing import cast

from sqlalchemy import Table, select
from sqlalchemy.orm import Session

from groupmate.storage import changes
from groupmate.storage.changes import HistoryEntry
from groupmate.storage.models import Acknowledgement, Reminder

_reminders = cast(Table, Reminder.__table__)
_acks = cast(Table, Acknowledgement.__table__)


def history(
    session: Session, chat_id: str, *, limit: int, created_by: str | None = None
) -> list[HistoryEntry]:
    """The chat's latest deliveries, snoozes and dones, newest first (`detail` of a
    done: who said it)."""
    entries = changes.history(session, chat_id, limit=limit, created_by=created_by)
    conditions = [_reminders.c.chat_id == chat_id]
    if created_by is not None:
        conditions.append(_reminders.c.created_by == created_by)
    rows = session.execute(
        select(_acks.c.at, _acks.c.name, _acks.c.user_id, _reminders.c.short_id)
        .add_columns(_reminders.c.content)
        .join(_reminders, _reminders.c.id == _acks.c.reminder_id)
        .where(*conditions)
        .order_by(_acks.c.at.desc(), _acks.c.id.desc())
        .limit(limit)
    ).all()
    entries += [
        HistoryEntry(row.at, row.short_id, row.content, "done", detail=row.name or row.user_id)
        for row in rows
    ]
    # A done said at the moment its reminder went off (a button pressed at once) is
    # listed above it: newest first, an answer after what it answers.
    entries.sort(key=lambda entry: (entry.at, entry.outcome == "done"), reverse=True)
    return entries[:limit]
