"""`DeliveryAdmin`: what the admin API and the dashboard read of the deliveries and the
chats, and the one thing they do to a delivery: send a failed one again."""

from __future__ import annotations

import functools
from typing import Any

from groupmate.storage import overview
from groupmate.storage.database import Database
from groupmate.storage.policy import DeliveryPolicy
from groupmate.storage.reach import WaitingChat, unclaimed_after, waiting_chats
from groupmate.storage.scheduler import Clock, ReminderScheduler
from groupmate.storage.vocabulary import DeliveryOutcome


class DeliveryAdmin:
    """The deliveries across chats, the scheduler's health, and the retry of one."""

    def __init__(
        self, database: Database, *, scheduler: ReminderScheduler | None, clock: Clock
    ) -> None:
        self.database = database
        self.scheduler = scheduler
        self._clock = clock

    async def chat_summaries(self) -> list[overview.ChatSummary]:
        return await self.database.read(overview.chat_summaries)

    async def deliveries(
        self,
        *,
        chat_id: str | None = None,
        outcome: DeliveryOutcome | None = None,
        limit: int = 100,
    ) -> list[overview.DeliveryRecord]:
        return await self.database.read(
            functools.partial(
                overview.delivery_records, chat_id=chat_id, outcome=outcome, limit=limit
            )
        )

    async def scheduler_health(self) -> dict[str, Any]:
        now = self._clock()
        return await self.database.read(functools.partial(overview.scheduler_counts, now=now))

    async def waiting(self) -> list[WaitingChat]:
        """Chats whose due reminders no running process has claimed: none delivers to
        them. They wait (never marked failed for it) until one that does starts."""
        policy = self.scheduler.policy if self.scheduler is not None else DeliveryPolicy()
        before = self._clock() - unclaimed_after(policy.watchdog_interval)
        return await self.database.read(functools.partial(waiting_chats, before=before))

    async def delivery_chat(self, delivery_id: int) -> str | None:
        """The chat a delivery belongs to; None when there is no such delivery."""
        return await self.database.read(
            functools.partial(overview.delivery_chat, delivery_id=delivery_id)
        )

    async def retry_delivery(self, delivery_id: int, chat_id: str) -> DeliveryOutcome:
        """Send a failed delivery again, now; its new outcome. Raises NotRetryableError
        (not failed, its reminder was deleted, or its chat is not delivered here) and
        RuntimeError without a sender."""
        if self.scheduler is None:
            raise RuntimeError("this process does not deliver reminders")
        reach = self.scheduler.reach()
        if reach is not None and not reach.covers(chat_id):
            raise overview.NotRetryableError(delivery_id, elsewhere=True)
        now = self._clock()
        policy = self.scheduler.policy
        claim = await self.database.write(
            functools.partial(
                overview.claim_failed_delivery,
                delivery_id=delivery_id,
                chat_id=chat_id,
                now=now,
                lease_until=now + policy.lease,
                late_after=policy.late_after,
            )
        )
        return await self.scheduler.deliver_now(claim)
