"""The audit log: every executed tool call that changed state or reached outside the
bot, newest first when read. Rows ride the database's group commit, so a call costs no
transaction of its own; reads flush first, so they see this process's rows."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Table, delete, insert, select
from sqlalchemy.orm import Session

from groupmate.storage.database import Database
from groupmate.storage.models import AuditRow

_audit = cast(Table, AuditRow.__table__)
MAX_PAGE = 200


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One audited call. `id` is 0 until it is written. `auth`, `source`, `effect` and
    `outcome` hold the tools' words (`function_calls.vocabulary`: AuthMethod, CallSource,
    Effect, InvocationOutcome), which storage records without reading them."""

    at: datetime
    chat_id: str
    sender_id: str
    sender_name: str
    auth: str
    source: str
    tool: str
    effect: str
    outcome: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    target: str | None = None
    target_label: str | None = None
    detail: str | None = None
    id: int = 0

    def values(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "chat_id": self.chat_id,
            "sender_id": self.sender_id,
            "sender_name": self.sender_name[:255],
            "auth": self.auth,
            "source": self.source,
            "tool": self.tool,
            "effect": self.effect,
            "arguments": dict(self.arguments),
            "outcome": self.outcome,
            "target": self.target,
            "target_label": self.target_label,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """Which rows to read: all filters optional; `before` is the id to page back from."""

    chat_id: str | None = None
    tool: str | None = None
    tools: tuple[str, ...] | None = None  # any of these
    outcome: str | None = None
    target_label: str | None = None  # "#4": one reminder of the chat
    since: datetime | None = None
    before: int | None = None
    limit: int = 50


# Built once: a statement made per call is compiled (or looked up) per call.
_INSERT = insert(_audit)


def _insert(session: Session, rows: list[dict[str, Any]]) -> None:
    session.execute(_INSERT, rows)


def _page(session: Session, query: AuditQuery) -> list[AuditEntry]:
    statement = select(_audit).order_by(_audit.c.id.desc()).limit(min(query.limit, MAX_PAGE))
    if query.chat_id is not None:
        statement = statement.where(_audit.c.chat_id == query.chat_id)
    if query.tool is not None:
        statement = statement.where(_audit.c.tool == query.tool)
    if query.tools is not None:
        statement = statement.where(_audit.c.tool.in_(query.tools))
    if query.outcome is not None:
        statement = statement.where(_audit.c.outcome == query.outcome)
    if query.target_label is not None:
        statement = statement.where(_audit.c.target_label == query.target_label)
    if query.since is not None:
        statement = statement.where(_audit.c.at >= query.since)
    if query.before is not None:
        statement = statement.where(_audit.c.id < query.before)
    return [
        AuditEntry(
            at=row.at,
            chat_id=row.chat_id,
            sender_id=row.sender_id,
            sender_name=row.sender_name,
            auth=row.auth,
            source=row.source,
            tool=row.tool,
            effect=row.effect,
            outcome=row.outcome,
            arguments=row.arguments or {},
            target=row.target,
            target_label=row.target_label,
            detail=row.detail,
            id=row.id,
        )
        for row in session.execute(statement)
    ]


def _prune(session: Session, before: datetime) -> int:
    result = session.execute(delete(_audit).where(_audit.c.at < before))
    return int(getattr(result, "rowcount", 0) or 0)


class AuditLog:
    """Appends audit entries and reads them back; keeps `max_age` of them."""

    def __init__(self, database: Database, *, max_age: timedelta = timedelta(days=90)) -> None:
        self._database = database
        self.max_age = max_age

    async def record(self, entry: AuditEntry) -> None:
        """Queue the entry to ride the next group commit (the one of the message's own
        answer, as a rule), written within 50 ms at the latest (see
        storage.group_commit: a crash before it commits loses it, like a logged chat
        message)."""
        self._database.batches.ride(
            functools.partial(_insert, rows=[entry.values()]), what="audit entry"
        )

    async def page(self, query: AuditQuery) -> list[AuditEntry]:
        """Matching entries, newest first."""
        await self._database.batches.flush()
        return await self._database.read(functools.partial(_page, query=query))

    async def prune_expired(self, now: datetime) -> int:
        """Drop the entries older than `max_age`; run periodically."""
        return await self._database.write(functools.partial(_prune, before=now - self.max_age))


class AuditReader:
    """The read-only view of the audit log, for read tools: its pages, never a row."""

    __slots__ = ("_log",)

    def __init__(self, log: AuditLog) -> None:
        self._log = log

    async def page(self, query: AuditQuery) -> list[AuditEntry]:
        """Matching entries, newest first."""
        return await self._log.page(query)
