"""`ChatSettings`: each chat's zone, settings and type, as every message reads them
(through a short-lived cache) and as the settings tools change them."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, TypeVar

from groupmate.storage import chat_calendar, chat_rows, repository
from groupmate.storage.database import Database
from groupmate.storage.recurrence import check_timezone
from groupmate.storage.reminder_rows import ReminderView
from groupmate.storage.scheduler import Clock
from groupmate.storage.vocabulary import ChatType
from groupmate.storage.workdays import work_calendar

# A chat's zone (and, for the budget check, its settings) is read for every message.
# Cached this long, a change made by another process (or straight in the database) shows
# within seconds; this process's own changes are seen at once.
ZONE_CACHE_SECONDS = 10.0
ZONE_CACHE_SIZE = 10_000
_ZONE_TTL = timedelta(seconds=ZONE_CACHE_SECONDS)
T = TypeVar("T")


class ChatSettings:
    """The chats' rows: zone, settings and type, read through the zone cache."""

    def __init__(
        self,
        database: Database,
        *,
        default_timezone: str,
        clock: Clock,
        cache_size: int = ZONE_CACHE_SIZE,
    ) -> None:
        self.database = database
        self.default_timezone = check_timezone(default_timezone)
        # The config's `reminders.workdays` (checked there): for chats that set none.
        self.default_workdays: str | None = None
        self._clock = clock
        # Every message needs its chat's zone; a short-lived cache spares a query each.
        # chat id -> (stored zone and settings, when they were read); oldest reads first.
        self._chats: dict[str, tuple[chat_rows.ChatRow, datetime]] = {}
        self._cache_size = max(cache_size, 0)
        # Bumped by every change of a chat's row, so a read that raced one is not cached.
        self._zone_changes = 0

    async def timezone_of(self, chat_id: str) -> str:
        """The chat's IANA zone, or the bot's default when the chat never set one."""
        return (await self.chat_row(chat_id)).timezone or self.default_timezone

    async def chat_row(self, chat_id: str) -> chat_rows.ChatRow:
        """The chat's own zone (None: the bot's default), settings and type, as every
        message reads them: up to the zone cache's age old (see `settings_of`)."""
        now = self._clock()
        cached = self._chats.get(chat_id)
        # A clock that went backwards also ends an entry, rather than stretching its life.
        if cached is not None and cached[1] <= now < cached[1] + _ZONE_TTL:
            return cached[0]
        changes = self._zone_changes
        stored = await self.database.read(functools.partial(chat_rows.chat_row, chat_id=chat_id))
        if changes == self._zone_changes and self._cache_size:
            self._chats.pop(chat_id, None)  # re-inserted at the end: the newest read
            while len(self._chats) >= self._cache_size:
                del self._chats[next(iter(self._chats))]
            self._chats[chat_id] = (stored, now)
        return stored

    async def chat_type_of(self, chat_id: str) -> ChatType:
        """The type the chat was stored with; a chat never stored is taken for a group."""
        stored = (await self.chat_row(chat_id)).chat_type
        return "private" if stored == "private" else "group"

    async def settings_of(self, chat_id: str, *, cached: bool = False) -> dict[str, Any]:
        """The chat's own settings (not the bot's defaults). `cached` allows an answer
        up to the zone cache's age (a per-message check); else they are read now."""
        if cached:
            return dict((await self.chat_row(chat_id)).settings)
        return await self.database.read(functools.partial(chat_rows.chat_settings, chat_id=chat_id))

    def forget(self, chat_id: str) -> None:
        """The chat's row changed here: the next read goes to the database."""
        self._chats.pop(chat_id, None)
        self._zone_changes += 1

    async def update_settings(
        self, chat_id: str, chat_type: ChatType, values: chat_rows.SettingsChange
    ) -> dict[str, Any]:
        """Merge into the chat's settings; a None value removes a key. `values` may be a
        function of the current settings, run under the row's lock."""
        return await self._write_settings(
            chat_rows.update_chat_settings, chat_id, chat_type, values=values
        )

    async def _write_settings(
        self, change: Callable[..., T], chat_id: str, chat_type: ChatType, **values: Any
    ) -> T:
        """Run `change` on the chat's row, with the cache forgotten around the write."""
        self.forget(chat_id)
        try:
            return await self.database.write(
                functools.partial(
                    change, chat_id=chat_id, chat_type=chat_type, now=self._clock(), **values
                )
            )
        finally:
            # Again after the write: a read meanwhile (another chat's message, a REST
            # call) may have cached the old settings.
            self.forget(chat_id)

    async def set_timezone(
        self, chat_id: str, chat_type: ChatType, timezone: str
    ) -> list[ReminderView]:
        """Change the chat's zone; returns the recurring reminders that moved with it
        (their timers are the caller's to move)."""
        check_timezone(timezone)
        now = self._clock()
        moved = await self.database.write(
            functools.partial(
                repository.set_chat_timezone,
                chat_id=chat_id,
                chat_type=chat_type,
                timezone=timezone,
                now=now,
            )
        )
        self.forget(chat_id)
        return moved

    async def set_calendar(
        self, chat_id: str, chat_type: ChatType, country: str | None
    ) -> list[ReminderView]:
        """Follow a country's work days (None: Monday to Friday) in "every weekday";
        returns the reminders that moved with it (their timers are the caller's to move).
        Raises UnknownCalendarError for a code no calendar has."""
        if country is not None:
            country = work_calendar(country).country
        return await self._write_settings(
            chat_calendar.set_chat_calendar, chat_id, chat_type, country=country
        )
