"""The reminders API the handlers and the HTTP routes use: database first, then timers."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

from groupmate.storage import ack_history, changes, overview, repository, targets
from groupmate.storage.calendar_feeds import CalendarFeeds
from groupmate.storage.changes import HistoryEntry, ReminderChange, Requester
from groupmate.storage.chat_data import ChatDataDeleted, delete_chat
from groupmate.storage.chat_settings import ZONE_CACHE_SIZE, ChatSettings
from groupmate.storage.clock import utc_now
from groupmate.storage.database import Database
from groupmate.storage.delivery_admin import DeliveryAdmin
from groupmate.storage.errors import (
    ReminderChangedError,
    ReminderNotFoundError,
    ReminderStateError,
)
from groupmate.storage.location import DEFAULT_URL
from groupmate.storage.outgoing import Sender
from groupmate.storage.policy import DeliveryPolicy
from groupmate.storage.recurrence import DEFAULT_RATE, RepeatRate
from groupmate.storage.recurrence import check_timezone as check_timezone  # re-exported
from groupmate.storage.reminder_acts import ReminderActs
from groupmate.storage.reminder_rows import NewReminder, ReminderView
from groupmate.storage.scheduler import (
    Act,
    Clock,
    Compose,
    DeliveryObserver,
    Reachable,
    ReminderScheduler,
)
from groupmate.storage.vocabulary import ChatType, FinishedOutcome, ReminderAction


class ReminderService:
    """Create, list and delete reminders; keep the scheduler's timers in step. A chat's
    zone and settings are `chats`' job; the deliveries' administration, `deliveries_admin`'s;
    the calendar links, `feeds`'."""

    def __init__(
        self,
        database: Database,
        *,
        scheduler: ReminderScheduler | None = None,
        default_timezone: str = "UTC",
        clock: Clock = utc_now,
        zone_cache_size: int = ZONE_CACHE_SIZE,
        rate: RepeatRate = DEFAULT_RATE,
    ) -> None:
        self.database = database
        # Every schedule saved, whoever made it (grammar, tools, REST, /edit), is checked
        # here against the chat's bounds: a flood can't come in by another door.
        self.rate = rate
        self.scheduler = scheduler
        self.chats = ChatSettings(
            database, default_timezone=default_timezone, clock=clock, cache_size=zone_cache_size
        )
        self.deliveries_admin = DeliveryAdmin(database, scheduler=scheduler, clock=clock)
        # Done, "remind me too", and presses already acted on.
        self.acts = ReminderActs(database, scheduler=scheduler, clock=clock)
        self.feeds = CalendarFeeds(database, clock=clock)
        self.default_timezone = self.chats.default_timezone
        self._clock = clock

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        url: str = DEFAULT_URL,
        *,
        sender: Sender | None = None,
        compose: Compose | None = None,
        act: Act | None = None,
        default_timezone: str = "UTC",
        policy: DeliveryPolicy | None = None,
        clock: Clock = utc_now,
        migrate: bool = True,
        observe: DeliveryObserver | None = None,
        reach: Reachable | None = None,
        rate: RepeatRate = DEFAULT_RATE,
    ) -> AsyncIterator[ReminderService]:
        """Open the store, apply migrations, and with a sender start delivering: each
        occurrence as the message `compose` writes (the wording is the caller's);
        `observe` is told each delivery's outcome; `reach` says which chats the sender
        delivers to (None: all), and only their occurrences are claimed."""
        if sender is not None and compose is None:
            raise TypeError("a sender needs compose: the message a reminder is sent as")
        database = Database(url)
        scheduler = None
        try:
            if migrate:
                # Alembic imported here, where a store is opened: not with the tools'
                # modules, which `groupmate check` imports to count their tokens.
                from groupmate.storage.migrate import upgrade

                await asyncio.to_thread(upgrade, database)
            if sender is not None and compose is not None:
                scheduler = ReminderScheduler(
                    database,
                    sender,
                    compose=compose,
                    act=act,
                    policy=policy,
                    clock=clock,
                    observe=observe,
                    reach=reach,
                )
                await scheduler.start()
            yield cls(
                database,
                scheduler=scheduler,
                default_timezone=default_timezone,
                clock=clock,
                rate=rate,
            )
        finally:
            if scheduler is not None:
                await scheduler.aclose()
            await database.aclose()

    async def last_run(self, reminder_id: str, before: datetime) -> datetime | None:
        """When the reminder last went off before `before` (None: never)."""
        return await self.database.read(
            functools.partial(overview.last_run, reminder_id=reminder_id, before=before)
        )

    async def timezone_of(self, chat_id: str) -> str:
        """The chat's IANA zone, or the bot's default when the chat never set one."""
        return await self.chats.timezone_of(chat_id)

    async def settings_of(self, chat_id: str, *, cached: bool = False) -> dict[str, Any]:
        """The chat's own settings (see `ChatSettings.settings_of`)."""
        return await self.chats.settings_of(chat_id, cached=cached)

    async def set_timezone(
        self, chat_id: str, chat_type: ChatType, timezone: str
    ) -> list[ReminderView]:
        """Change the chat's zone; returns the recurring reminders that moved with it."""
        moved = await self.chats.set_timezone(chat_id, chat_type, timezone)
        for reminder in moved:
            self._plan(reminder)
        return moved

    async def set_calendar(
        self, chat_id: str, chat_type: ChatType, country: str | None
    ) -> list[ReminderView]:
        """Make "every weekday" follow a country's work days (None: Monday to Friday);
        returns the weekdays reminders that moved with it (UnknownCalendarError)."""
        moved = await self.chats.set_calendar(chat_id, chat_type, country)
        for reminder in moved:
            self._plan(reminder)
        return moved

    async def create(self, new: NewReminder) -> ReminderView:
        """Store a new reminder; RepeatTooOftenError if its rule is over the rate."""
        self.rate.check(new.schedule)
        now = self._clock()
        reminder = await self.database.write(
            functools.partial(repository.create_reminder, new=new, now=now)
        )
        self._plan(reminder)
        return reminder

    async def get(self, reminder_id: str) -> ReminderView:
        return await self.database.read(
            functools.partial(repository.get_reminder, reminder_id=reminder_id)
        )

    async def list_for_chat(
        self, chat_id: str, *, created_by: str | None = None, limit: int = 50
    ) -> tuple[list[ReminderView], int]:
        """Active reminders of one chat, soonest first, and their total count."""
        return await self.database.read(
            functools.partial(
                repository.list_active, chat_id=chat_id, created_by=created_by, limit=limit
            )
        )

    async def last_outcomes(
        self, reminder_ids: Sequence[str]
    ) -> dict[str, tuple[datetime, FinishedOutcome]]:
        """Each reminder's latest finished occurrence and its outcome."""
        return await self.database.read(
            functools.partial(overview.last_outcomes, reminder_ids=list(reminder_ids))
        )

    async def finished_for_chat(self, chat_id: str, *, limit: int = 200) -> list[ReminderView]:
        """Done and cancelled reminders of one chat, the latest changed first."""
        return await self.database.read(
            functools.partial(overview.finished_reminders, chat_id=chat_id, limit=limit)
        )

    async def delete(
        self,
        chat_id: str,
        reference: str,
        requester: Requester,
    ) -> ReminderView:
        """Cancel one reminder of this chat by short or full id.

        In a group, only its creator or an admin may; in a private chat only its owner.
        """
        now = self._clock()

        def cancel(session: Session) -> ReminderView:
            reminder = changes.locate(session, chat_id, reference, requester, may="delete")
            if not repository.cancel_reminder(session, reminder, now):
                raise ReminderNotFoundError(reminder.short_id, "finished")
            changes.cancel_snoozes(session, reminder.id, now)
            return reminder

        reminder = await self.database.write(cancel)
        if self.scheduler is not None:
            self.scheduler.unplan(reminder.id)
        return reminder

    async def find(
        self,
        chat_id: str,
        reference: str,
        requester: Requester,
        *,
        may: ReminderAction = "change",
    ) -> ReminderView:
        """A live reminder of this chat that the requester may `may` (read only)."""
        return await self.database.read(
            functools.partial(
                changes.locate,
                chat_id=chat_id,
                reference=reference,
                requester=requester,
                for_update=False,
                may=may,
            )
        )

    async def update(
        self,
        chat_id: str,
        reference: str,
        requester: Requester,
        change: ReminderChange,
        *,
        expected_version: int | None = None,
    ) -> ReminderView:
        """Edit a live reminder; with `expected_version`, only if nothing changed since.
        RepeatTooOftenError if the new rule is over the rate."""
        if change.schedule is not None:
            self.rate.check(change.schedule)
        now = self._clock()

        def edit(session: Session) -> ReminderView:
            reminder = changes.locate(session, chat_id, reference, requester)
            if expected_version is not None and reminder.version != expected_version:
                raise ReminderChangedError(reminder.short_id)
            schedule = change.schedule
            if reminder.snooze_of and schedule is not None and schedule.kind != "once":
                # A snooze fires once; its rule is the one of the reminder it snoozes.
                root = repository.get_reminder(session, reminder.snooze_of)
                raise ReminderStateError(reminder.short_id, "snooze_rule", root.short_id)
            return changes.apply_change(session, reminder, change, now)

        reminder = await self.database.write(edit)
        self._plan(reminder)
        return reminder

    async def set_paused(
        self, chat_id: str, reference: str, requester: Requester, *, paused: bool
    ) -> ReminderView:
        now = self._clock()

        def run(session: Session) -> ReminderView:
            reminder = changes.locate(
                session, chat_id, reference, requester, may="pause" if paused else "resume"
            )
            if reminder.schedule.kind == "once" and paused:
                raise ReminderStateError(reminder.short_id, "once_pause")
            return changes.set_paused(session, reminder, paused, now)

        reminder = await self.database.write(run)
        self._plan(reminder)
        return reminder

    async def snooze(
        self,
        chat_id: str,
        requester: Requester,
        until: datetime,
        *,
        reference: str | None = None,
        message_id: str | None = None,
        recent: timedelta = timedelta(hours=1),
    ) -> tuple[ReminderView, ReminderView]:
        """Fire a delivered reminder again at `until`; returns (the reminder, its snooze).

        Which reminder: `reference`; else the one the platform message `message_id` was;
        else the one reminder delivered in this chat within `recent` (refused if several).
        """
        now = self._clock()

        def run(session: Session) -> tuple[ReminderView, ReminderView]:
            target = targets.delivered_target(
                session,
                chat_id,
                requester,
                now,
                reference=reference,
                message_id=message_id,
                recent=recent,
                may="snooze",
            )
            reminder = changes.locate(session, chat_id, target.id, requester, may="snooze")
            # A snooze that went off snoozes its reminder again, unless that was deleted.
            root = (
                changes.locate(session, chat_id, reminder.snooze_of, requester, may="snooze")
                if reminder.snooze_of
                else reminder
            )
            if changes.delivered_in(session, root) is None:
                raise ReminderStateError(root.short_id, "not_delivered")
            return root, changes.snooze(session, root, until, now, requester)

        root, snoozed = await self.database.write(run)
        self._plan(snoozed)
        return root, snoozed

    async def history(
        self, chat_id: str, *, limit: int = 10, created_by: str | None = None
    ) -> list[HistoryEntry]:
        return await self.database.read(
            functools.partial(
                ack_history.history, chat_id=chat_id, limit=limit, created_by=created_by
            )
        )

    async def delete_chat_data(self, chat_id: str) -> ChatDataDeleted:
        """Everything stored for one chat, plugins' values included (storage.chat_data);
        its reminders' timers are cleared. Rows of the chat still queued for writing
        are written first, so none comes back after."""
        await self.database.batches.flush()
        deleted = await self.database.write(functools.partial(delete_chat, chat_id=chat_id))
        self.chats.forget(chat_id)
        if self.scheduler is not None:
            for reminder_id in deleted.reminder_ids:
                self.scheduler.unplan(reminder_id)
        return deleted

    def _plan(self, reminder: ReminderView) -> None:
        if self.scheduler is not None:
            self.scheduler.plan(reminder.id, reminder.next_fire_at)
