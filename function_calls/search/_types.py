"""What a search provider answers, and the small tree of ways it can fail."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from groupmate.storage.exceptions import GroupmateError


class SearchError(GroupmateError):
    """The search failed; the message is fit for the user (it never holds a key)."""


class SearchAuthError(SearchError):
    """The provider refused our credentials (HTTP 401/403), or an instance refused us."""


class SearchRateLimitError(SearchError):
    """The provider rate-limited us (HTTP 429) even after waiting once as it asked."""


class SearchTimeoutError(SearchError):
    """The provider did not answer in time."""


class SearchUnavailableError(SearchError):
    """The provider could not be reached, or answered with a server error."""


class SearchUnreadableError(SearchError):
    """The provider's answer was not the JSON its API documents."""


class SearchLimitError(SearchError):
    """This chat has used its searches for now; `retry_in` says when the next one is fine."""

    def __init__(self, message: str, retry_in: float) -> None:
        super().__init__(message)
        self.retry_in = retry_in


@dataclass(frozen=True, slots=True)
class Source:
    """One result: its title, address and (for raw-result providers) a short snippet."""

    title: str
    url: str
    snippet: str = ""


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """A provider's own answer (`text`, from a search model) and/or its results.

    SearXNG, Tavily and Brave return results only: `text` is empty, and the bot writes
    the answer from `sources`."""

    text: str
    sources: list[Source] = field(default_factory=list)


class SearchProvider(Protocol):
    """One search backend. `search` raises a `SearchError` subclass for every failure."""

    @property
    def name(self) -> str: ...

    async def search(self, query: str) -> SearchAnswer: ...

    async def aclose(self) -> None: ...
