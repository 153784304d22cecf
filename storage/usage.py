"""LLM token usage per chat and UTC day: recorded after every model turn, read by the
budget check before the next one."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.database import Database
from storage.models import LLMUsage


@dataclass(frozen=True, slots=True)
class Spent:
    """Tokens used on one UTC day, prompt and completion together."""

    chat: int
    total: int  # every chat


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
        "prompt_tokens": LLMUsage.prompt_tokens + prompt,
        "completion_tokens": LLMUsage.completion_tokens + completion,
        "requests": LLMUsage.requests + requests,
        "estimated_requests": LLMUsage.estimated_requests + estimated,
    }
    where = (LLMUsage.chat_id == chat_id) & (LLMUsage.day == day)
    if session.execute(update(LLMUsage).where(where).values(**values)).rowcount:  # type: ignore[attr-defined]
        return
    try:
        with session.begin_nested():
            session.add(
                LLMUsage(
                    chat_id=chat_id,
                    day=day,
                    prompt_tokens=prompt,
                    completion_tokens=completion,
                    requests=requests,
                    estimated_requests=estimated,
                )
            )
    except IntegrityError:  # another writer inserted the row first: add to it
        session.execute(update(LLMUsage).where(where).values(**values))


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
        """Add a turn's tokens; `estimated` counts its requests without reported usage."""
        await self._database.write(
            functools.partial(
                _record,
                chat_id=chat_id,
                day=day,
                prompt=prompt,
                completion=completion,
                requests=requests,
                estimated=estimated,
            )
        )

    async def spent(self, chat_id: str, day: date) -> Spent:
        return await self._database.read(functools.partial(_spent, chat_id=chat_id, day=day))
