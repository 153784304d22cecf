"""LLM token usage per chat and UTC day: recorded after every model turn (`UsageLog`),
read by the budget check before the next one (`UsageReader`, all a read tool gets)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date
from typing import Any, cast

from sqlalchemy import Table, func, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from groupmate.storage.database import Database
from groupmate.storage.models import LLMUsage


@dataclass(frozen=True, slots=True)
class Spent:
    """Tokens used on one UTC day, prompt and completion together."""

    chat: int
    total: int  # every chat


def _add_tokens(insert: Any) -> Any:
    """INSERT the day's row, or add to it if there is one: one statement, so that two
    writers of the same chat and day never race (built once, per dialect)."""
    statement = insert(_usage)
    counters = ("prompt_tokens", "completion_tokens", "requests", "estimated_requests")
    return statement.on_conflict_do_update(
        index_elements=[_usage.c.chat_id, _usage.c.day],
        set_={name: _usage.c[name] + statement.excluded[name] for name in counters},
    )


_usage = cast(Table, LLMUsage.__table__)
_ADD = {"sqlite": _add_tokens(sqlite_insert), "postgresql": _add_tokens(postgresql_insert)}


def _record(
    session: Session,
    chat_id: str,
    day: date,
    prompt: int,
    completion: int,
    requests: int,
    estimated: int,
) -> None:
    values = {
        "chat_id": chat_id,
        "day": day,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "requests": requests,
        "estimated_requests": estimated,
    }
    session.execute(_ADD[session.get_bind().dialect.name], values)


def _spent(session: Session, chat_id: str, day: date) -> Spent:
    tokens = LLMUsage.prompt_tokens + LLMUsage.completion_tokens
    chat = session.scalar(select(tokens).where(LLMUsage.chat_id == chat_id, LLMUsage.day == day))
    total = session.scalar(select(func.sum(tokens)).where(LLMUsage.day == day))
    return Spent(int(chat or 0), int(total or 0))


class UsageLog:
    def __init__(self, database: Database) -> None:
        self._database = database

    async def record(
        self,
        chat_id: str,
        day: date,
        *,
        prompt: int,
        completion: int,
        requests: int,
        estimated: int,
    ) -> None:
        """Add a turn's tokens; `estimated` counts its requests without reported usage.

        Queued in the group commit, not awaited: the answer the turn led to is written
        after it, so the tokens are committed by the time the chat has that answer."""
        await self._database.batches.write_soon(
            functools.partial(
                _record,
                chat_id=chat_id,
                day=day,
                prompt=prompt,
                completion=completion,
                requests=requests,
                estimated=estimated,
            ),
            what="token usage",
            urgent=True,
        )

    async def spent(self, chat_id: str, day: date) -> Spent:
        return await self._database.read(functools.partial(_spent, chat_id=chat_id, day=day))


class UsageReader:
    """The read of a `UsageLog`, and nothing else: a read tool checks the day's budget
    with it, and can't record tokens."""

    __slots__ = ("_usage",)

    def __init__(self, usage: UsageLog) -> None:
        self._usage = usage

    async def spent(self, chat_id: str, day: date) -> Spent:
        return await self._usage.spent(chat_id, day)
