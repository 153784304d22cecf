"""`WebSearch`: the search service tools use. Providers tried in order, answers cached
for `cache_ttl`, and each chat held to a number of searches an hour."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from groupmate.function_calls.search._types import (
    SearchAnswer,
    SearchError,
    SearchLimitError,
    SearchProvider,
)

log = logging.getLogger(__name__)

_WINDOW = 3600.0  # the per-chat limit counts searches in the last hour
_MAX_CHATS = 10_000  # chats whose recent searches are remembered


@dataclass(frozen=True, slots=True)
class _Cached:
    answer: SearchAnswer
    provider: str
    stored_at: float


@dataclass(frozen=True, slots=True)
class Found:
    """A search's answer, and which provider gave it (or that the cache did)."""

    answer: SearchAnswer
    provider: str
    cached: bool = False


def cache_key(query: str) -> str:
    """Queries that differ only in case and spacing are the same search."""
    return " ".join(query.casefold().split())


class WebSearch:
    def __init__(
        self,
        providers: Sequence[SearchProvider],
        *,
        cache_ttl: float = 600,
        cache_size: int = 256,
        per_chat_per_hour: int = 30,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not providers:
            raise ValueError("WebSearch needs at least one provider")
        self.providers = list(providers)
        self._ttl = cache_ttl
        self._size = cache_size
        self._limit = per_chat_per_hour
        self._clock = clock
        self._cache: OrderedDict[str, _Cached] = OrderedDict()
        self._recent: OrderedDict[str, deque[float]] = OrderedDict()

    @property
    def names(self) -> list[str]:
        return [provider.name for provider in self.providers]

    async def search(self, chat_id: str, query: str) -> Found:
        """The answer for `query`, from the cache or the first provider that answers.

        Raises SearchLimitError when the chat has used its searches for the hour (a
        cached answer costs nothing and is served anyway), and SearchError when every
        provider failed, naming each failure."""
        now = self._clock()
        key = cache_key(query)
        cached = self._cache.get(key)
        if cached is not None and now - cached.stored_at <= self._ttl:
            self._cache.move_to_end(key)
            return Found(cached.answer, cached.provider, cached=True)
        self._spend(chat_id, now)
        try:
            found = await self._first_answer(query)
        except SearchError:
            # A provider being down is not the chat's doing: the search is not counted.
            self._refund(chat_id, now)
            raise
        if found.answer.text or found.answer.sources:  # "nothing found" may change soon
            self._remember(key, found, self._clock())
        return found

    async def aclose(self) -> None:
        for provider in self.providers:
            await provider.aclose()

    async def _first_answer(self, query: str) -> Found:
        failures: list[SearchError] = []
        for provider in self.providers:
            try:
                answer = await provider.search(query)
            except SearchError as exc:
                log.warning("search provider %s failed: %s", provider.name, exc)
                failures.append(exc)
                continue
            return Found(answer, provider.name)
        if len(failures) == 1:
            raise failures[0]
        raise SearchError("; ".join(str(failure) for failure in failures))

    def _spend(self, chat_id: str, now: float) -> None:
        if self._limit <= 0:
            return
        recent = self._recent.setdefault(chat_id, deque())
        self._recent.move_to_end(chat_id)
        while recent and now - recent[0] >= _WINDOW:
            recent.popleft()
        if len(recent) >= self._limit:
            wait = _WINDOW - (now - recent[0])
            minutes = max(1, round(wait / 60))
            raise SearchLimitError(
                f"this chat has used its {self._limit} search{'es' if self._limit != 1 else ''} "
                "for this hour; the next one "
                f"is possible in about {minutes} minute{'s' if minutes != 1 else ''}",
                wait,
            )
        recent.append(now)
        while len(self._recent) > _MAX_CHATS:
            self._recent.popitem(last=False)

    def _refund(self, chat_id: str, at: float) -> None:
        recent = self._recent.get(chat_id)
        if recent is not None and at in recent:
            recent.remove(at)

    def _remember(self, key: str, found: Found, now: float) -> None:
        if self._size <= 0 or self._ttl <= 0:
            return
        self._cache[key] = _Cached(found.answer, found.provider, now)
        self._cache.move_to_end(key)
        while len(self._cache) > self._size:
            self._cache.popitem(last=False)
