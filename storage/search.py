"""Finding what was said in one chat: the query language (`parse_query`) and
`MessageSearch`, which runs the units of storage.search_rows: search, the index's
batches (SQLite), and forgetting."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import TypeVar

from sqlalchemy.orm import Session

from groupmate.storage.database import Database
from groupmate.storage.errors import StorageError
from groupmate.storage.search_rows import (
    Asked,
    Forgotten,
    FoundMessage,
    SearchQuery,
    count_by,
    forget_chat,
    forget_sender,
    index_new,
    indexed_first,
    position_of,
    search,
)

__all__ = [
    "Asked",
    "Forgotten",
    "FoundMessage",
    "MessageSearch",
    "SearchQuery",
    "SearchReader",
    "index_new",
    "parse_query",
]

log = logging.getLogger(__name__)
T = TypeVar("T")
# New rows are indexed in batches of at most this many (see migration 0012).
_INDEX_BATCH = 20_000
_QUOTED = re.compile(r'"([^"]*)"|“([^”]*)”|(\S+)')
_FROM = re.compile(r"^from:@?(?P<who>\S+)$", re.IGNORECASE)


def parse_query(words: str) -> SearchQuery:
    """`launch "next friday" from:@alice` -> terms ("launch", "next friday"), sender
    "alice". Words are split on spaces; a quoted phrase is one term."""
    terms: list[str] = []
    sender: str | None = None
    for match in _QUOTED.finditer(words):
        phrase = match[1] if match[1] is not None else match[2]
        if phrase is not None:
            if phrase.strip():
                terms.append(" ".join(phrase.split()))
            continue
        word = match[3]
        named = _FROM.match(word)
        if named:
            sender = named["who"]
        else:
            terms.append(word)
    return SearchQuery(tuple(dict.fromkeys(terms)), sender)


class MessageSearch:
    """Search and forget over the chat log's database. Reads see every message this
    process logged before them (the write queue is flushed first)."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def _read(self, work: Callable[[Session], T]) -> T:
        await self._database.batches.flush()
        return await self._database.read(work)

    async def search(
        self,
        chat_id: str,
        query: SearchQuery,
        *,
        limit: int,
        offset: int = 0,
        before: int | None = None,
        said_before: datetime | None = None,
        asked: Asked | None = None,
    ) -> list[FoundMessage]:
        work = functools.partial(
            search,
            chat_id=chat_id,
            query=query,
            limit=limit,
            offset=offset,
            before=before,
            said_before=said_before,
            asked=asked,
        )
        if self._database.backend != "sqlite":
            return await self._read(work)
        # What was logged since the last batch is indexed first: a search finds
        # everything said before it.
        await self._database.batches.flush()
        return await self._database.write(functools.partial(indexed_first, work=work))

    async def index_new(self) -> int:
        """Index what was logged since the last time (SQLite); how many messages."""
        return await self._database.write(functools.partial(index_new, limit=_INDEX_BATCH))

    @contextlib.asynccontextmanager
    async def indexing(self, every: float = 1.0) -> AsyncIterator[None]:
        """While inside: new messages are indexed every `every` seconds, in batches, so
        that a search rarely has many to index first."""
        task = asyncio.create_task(self._index_periodically(every))
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _index_periodically(self, every: float) -> None:
        while True:
            try:
                indexed = await self.index_new()
            except StorageError as exc:  # the database is down: searches catch up later
                log.warning("search index not updated: %s", exc)
                indexed = 0
            if indexed < _INDEX_BATCH:  # else a backlog: the next batch at once
                await asyncio.sleep(every)
            else:
                await asyncio.sleep(0)

    async def position_of(self, chat_id: str, message_id: str) -> int | None:
        return await self._read(
            functools.partial(position_of, chat_id=chat_id, message_id=message_id)
        )

    async def count_by(self, chat_id: str, sender_id: str) -> int:
        return await self._read(functools.partial(count_by, chat_id=chat_id, sender_id=sender_id))

    async def forget_sender(self, chat_id: str, sender_id: str) -> Forgotten:
        await self._database.batches.flush()  # messages logged just before go too
        return await self._database.write(
            functools.partial(forget_sender, chat_id=chat_id, sender_id=sender_id)
        )

    async def forget_chat(self, chat_id: str) -> Forgotten:
        await self._database.batches.flush()
        return await self._database.write(functools.partial(forget_chat, chat_id=chat_id))


class SearchReader:
    """The read-only view of the search, for read routes and read tools: finding
    messages, never forgetting them."""

    __slots__ = ("_search",)

    def __init__(self, search: MessageSearch) -> None:
        self._search = search

    async def search(
        self,
        chat_id: str,
        query: SearchQuery,
        *,
        limit: int,
        offset: int = 0,
        before: int | None = None,
        said_before: datetime | None = None,
        asked: Asked | None = None,
    ) -> list[FoundMessage]:
        return await self._search.search(
            chat_id,
            query,
            limit=limit,
            offset=offset,
            before=before,
            said_before=said_before,
            asked=asked,
        )

    async def position_of(self, chat_id: str, message_id: str) -> int | None:
        return await self._search.position_of(chat_id, message_id)
