"""A chat's `workdays` setting and the weekdays reminders that follow it.

The calendar is stored on each reminder (like its zone), so every computation of a next
occurrence, in any process, reads it from the row. Changing the setting changes it on
the chat's active weekdays reminders in the same transaction and moves their next
occurrence at once: `/reminders` shows the real next date straight after.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, select, update
from sqlalchemy.orm import Session

from groupmate.storage.chat_rows import update_chat_settings
from groupmate.storage.models import REMINDER_ACTIVE, REMINDER_PAUSED, Reminder
from groupmate.storage.reminder_moves import next_fire_values
from groupmate.storage.reminder_rows import ReminderView, schedule_of
from groupmate.storage.repository import by_next_fire, get_reminder
from groupmate.storage.vocabulary import SETTING_WORKDAYS, ChatType
from groupmate.storage.workdays import calendar_named

# The setting's value: a country code, or "off" for Monday to Friday even when the
# config's default (`reminders.workdays`) names a country; absent: that default.
WORKDAYS_OFF = "off"


def chat_workdays(settings: Mapping[str, Any], default: str | None) -> str | None:
    """The country code a chat's "every weekday" follows; None: Monday to Friday."""
    code = settings.get(SETTING_WORKDAYS, default)
    return None if code in (None, WORKDAYS_OFF) else str(code)


_reminders = cast(Table, Reminder.__table__)


def set_chat_calendar(
    session: Session, chat_id: str, chat_type: ChatType, country: str | None, now: datetime
) -> list[ReminderView]:
    """Store the chat's work-day calendar (None: Monday to Friday) and move its active
    weekdays reminders onto it. An occurrence already due stays due for the dispatcher.
    Returns the reminders that follow the new calendar."""
    calendar = calendar_named(country)
    code = calendar.country if calendar is not None else None
    setting = code if code is not None else WORKDAYS_OFF
    update_chat_settings(session, chat_id, chat_type, {SETTING_WORKDAYS: setting}, now)
    rows = session.execute(
        select(_reminders)
        .where(
            _reminders.c.chat_id == chat_id,
            _reminders.c.status.in_((REMINDER_ACTIVE, REMINDER_PAUSED)),
            _reminders.c.kind == "weekdays",
        )
        .with_for_update()
    ).all()
    for row in rows:
        values: dict[str, Any] = {"calendar": code, "updated_at": now}
        # A paused one follows the new calendar too, and gets its next time on resume.
        if row.status == REMINDER_ACTIVE and (row.next_fire_at is None or row.next_fire_at > now):
            schedule = schedule_of(row)
            values |= next_fire_values(replace(schedule, calendar=calendar).first_after(now))
        session.execute(
            update(_reminders)
            .where(_reminders.c.id == row.id)
            .values(version=_reminders.c.version + 1, **values)
        )
    moved = (row for row in rows if row.status == REMINDER_ACTIVE)
    return by_next_fire(get_reminder(session, row.id) for row in moved)
