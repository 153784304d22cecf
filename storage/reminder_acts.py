"""`ReminderActs`: what people do to a reminder that went off, by a button, a reaction,
a reply or a command: say done, add themselves ("remind me too"), and the bookkeeping
that makes a replayed press act once. The words are written above storage."""

from __future__ import annotations

import functools
from datetime import datetime, timedelta

from groupmate.storage import acks, press_log, targets
from groupmate.storage.acks import Acked, AckResult, MeTooResult
from groupmate.storage.changes import Requester
from groupmate.storage.database import Database
from groupmate.storage.press_log import PastPress
from groupmate.storage.reminder_rows import ReminderView
from groupmate.storage.scheduler import Clock, ReminderScheduler
from groupmate.storage.vocabulary import AckVia

# Platforms retry a press within minutes; a day covers any retry and is little to keep.
PRESS_MEMORY = timedelta(days=1)


class ReminderActs:
    """Done, "remind me too", and presses already acted on (`service.acts`)."""

    def __init__(
        self, database: Database, *, scheduler: ReminderScheduler | None, clock: Clock
    ) -> None:
        self.database = database
        self.scheduler = scheduler
        self._clock = clock

    async def acknowledge(
        self,
        chat_id: str,
        requester: Requester,
        name: str,
        via: AckVia,
        *,
        reference: str | None = None,
        message_id: str | None = None,
        occurrence: datetime | None = None,
        recent: timedelta = timedelta(hours=1),
    ) -> AckResult:
        """`requester` is done with a delivered reminder (see `acks.acknowledge`): by
        reference, else the platform message it was, else the only recent one."""
        result = await self.database.write(
            functools.partial(
                acks.acknowledge,
                chat_id=chat_id,
                requester=requester,
                name=name,
                via=via,
                now=self._clock(),
                reference=reference,
                message_id=message_id,
                occurrence=occurrence,
                recent=recent,
            )
        )
        if result.ended and self.scheduler is not None:
            self.scheduler.unplan(result.reminder.id)
        return result

    async def me_too(
        self,
        chat_id: str,
        requester: Requester,
        name: str,
        on: bool | None,
        *,
        rules_allow: bool,
        reference: str | None = None,
        message_id: str | None = None,
    ) -> MeTooResult:
        """Add (on), take off (off) or toggle (None) `requester` among a group reminder's
        people, from its next occurrence on (MeTooError when refused)."""
        return await self.database.write(
            functools.partial(
                acks.me_too,
                chat_id=chat_id,
                requester=requester,
                name=name,
                on=on,
                now=self._clock(),
                rules_allow=rules_allow,
                reference=reference,
                message_id=message_id,
            )
        )

    async def allow_me_too(
        self, chat_id: str, reference: str, requester: Requester, *, allowed: bool
    ) -> ReminderView:
        """The asker's (or an admin's) switch: may members add themselves to it?"""
        return await self.database.write(
            functools.partial(
                acks.allow_me_too,
                chat_id=chat_id,
                reference=reference,
                requester=requester,
                allowed=allowed,
                now=self._clock(),
            )
        )

    async def confirmed_as(self, chat_id: str, reminder_id: str, message_id: str) -> None:
        """The platform's id of the message that confirmed a reminder, for 👍 on it."""
        await self.database.write(
            functools.partial(
                acks.set_confirmed_as,
                chat_id=chat_id,
                reminder_id=reminder_id,
                message_id=message_id,
            )
        )

    async def in_chat(self, chat_id: str, reminder_id: str) -> ReminderView | None:
        """The reminder a button names, if it is this chat's (see `targets.in_chat`)."""
        return await self.database.read(
            functools.partial(targets.in_chat, chat_id=chat_id, reminder_id=reminder_id)
        )

    async def pending_snooze(self, root_id: str) -> ReminderView | None:
        return await self.database.read(functools.partial(targets.pending_snooze, root_id=root_id))

    async def on_message(
        self, chat_id: str, message_id: str
    ) -> tuple[ReminderView, datetime | None] | None:
        """The reminder (and occurrence) a platform message is (see `targets.on_message`)."""
        return await self.database.read(
            functools.partial(targets.on_message, chat_id=chat_id, message_id=message_id)
        )

    async def created_since(self, chat_id: str, created_by: str, since: datetime) -> list[str]:
        return await self.database.read(
            functools.partial(
                targets.created_since, chat_id=chat_id, created_by=created_by, since=since
            )
        )

    async def acks_of(self, reminder_ids: list[str]) -> dict[str, list[Acked]]:
        """Every done said to these reminders, by reminder, in order."""
        return await self.database.read(functools.partial(acks.acks_of, reminder_ids=reminder_ids))

    async def take_press(self, press_id: str, chat_id: str) -> PastPress | None:
        """None: a first press, to act on; else what its first time answered."""
        return await self.database.write(
            functools.partial(
                press_log.take_press, press_id=press_id, chat_id=chat_id, now=self._clock()
            )
        )

    async def settle_press(self, press_id: str, ok: bool, answer: str) -> None:
        await self.database.write(
            functools.partial(press_log.settle_press, press_id=press_id, ok=ok, answer=answer)
        )

    async def prune_presses(self, now: datetime) -> int:
        """Forget presses older than PRESS_MEMORY (the hourly retention runs it)."""
        return await self.database.write(
            functools.partial(press_log.prune_presses, before=now - PRESS_MEMORY)
        )
