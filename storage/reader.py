"""`ReminderReader`: the read-only view of the reminders, settings and deliveries that
read tools, REST GET routes and plugins' services get. It holds the `ReminderService`
but exposes none of its writes, so whoever holds only a reader cannot create, change
or delete anything, nor change a chat's settings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from groupmate.storage import overview
from groupmate.storage.changes import HistoryEntry, Requester
from groupmate.storage.chat_rows import ChatRow
from groupmate.storage.reach import WaitingChat
from groupmate.storage.reminder_rows import ReminderView
from groupmate.storage.service import ReminderService
from groupmate.storage.vocabulary import ChatType, DeliveryOutcome, FinishedOutcome, ReminderAction

T = TypeVar("T")


class ReminderReader:
    """The reads of a `ReminderService`, and nothing else."""

    __slots__ = ("_service",)

    def __init__(self, service: ReminderService) -> None:
        self._service = service

    @property
    def default_timezone(self) -> str:
        return self._service.default_timezone

    @property
    def delivers(self) -> bool:
        """Whether this process delivers reminders (it has a sender and a scheduler)."""
        return self._service.scheduler is not None

    async def read(self, work: Callable[[Session], T]) -> T:
        """Run `work` in a read session of the database (a query of one's own)."""
        return await self._service.database.read(work)

    async def get(self, reminder_id: str) -> ReminderView:
        return await self._service.get(reminder_id)

    async def find(
        self,
        chat_id: str,
        reference: str,
        requester: Requester,
        *,
        may: ReminderAction = "change",
    ) -> ReminderView:
        """A live reminder of this chat that the requester may `may`."""
        return await self._service.find(chat_id, reference, requester, may=may)

    async def list_for_chat(
        self, chat_id: str, *, created_by: str | None = None, limit: int = 50
    ) -> tuple[list[ReminderView], int]:
        return await self._service.list_for_chat(chat_id, created_by=created_by, limit=limit)

    async def last_outcomes(
        self, reminder_ids: Sequence[str]
    ) -> dict[str, tuple[datetime, FinishedOutcome]]:
        return await self._service.last_outcomes(reminder_ids)

    async def last_run(self, reminder_id: str, before: datetime) -> datetime | None:
        return await self._service.last_run(reminder_id, before)

    async def finished_for_chat(self, chat_id: str, *, limit: int = 200) -> list[ReminderView]:
        return await self._service.finished_for_chat(chat_id, limit=limit)

    async def history(
        self, chat_id: str, *, limit: int = 10, created_by: str | None = None
    ) -> list[HistoryEntry]:
        return await self._service.history(chat_id, limit=limit, created_by=created_by)

    async def timezone_of(self, chat_id: str) -> str:
        return await self._service.timezone_of(chat_id)

    async def chat_row(self, chat_id: str) -> ChatRow:
        return await self._service.chats.chat_row(chat_id)

    async def chat_type_of(self, chat_id: str) -> ChatType:
        return await self._service.chats.chat_type_of(chat_id)

    async def settings_of(self, chat_id: str, *, cached: bool = False) -> dict[str, Any]:
        return await self._service.settings_of(chat_id, cached=cached)

    async def chat_summaries(self) -> list[overview.ChatSummary]:
        return await self._service.deliveries_admin.chat_summaries()

    async def deliveries(
        self,
        *,
        chat_id: str | None = None,
        outcome: DeliveryOutcome | None = None,
        limit: int = 100,
    ) -> list[overview.DeliveryRecord]:
        return await self._service.deliveries_admin.deliveries(
            chat_id=chat_id, outcome=outcome, limit=limit
        )

    async def scheduler_health(self) -> dict[str, Any]:
        return await self._service.deliveries_admin.scheduler_health()

    async def waiting(self) -> list[WaitingChat]:
        return await self._service.deliveries_admin.waiting()

    async def delivery_chat(self, delivery_id: int) -> str | None:
        return await self._service.deliveries_admin.delivery_chat(delivery_id)
