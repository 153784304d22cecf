"""Web search providers behind one small interface; `web_search` uses whichever is set."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any, Protocol

import openai

log = logging.getLogger(__name__)


class SearchError(Exception):
    """The provider failed; the message is fit for the user."""


@dataclass(frozen=True, slots=True)
class Source:
    title: str
    url: str


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    text: str
    sources: list[Source] = field(default_factory=list)


class SearchProvider(Protocol):
    async def search(self, query: str) -> SearchAnswer: ...

    async def aclose(self) -> None: ...


class PerplexitySearch:
    """Perplexity (or any OpenAI-compatible search model returning citations)."""

    def __init__(
        self, *, base_url: str, api_key: str | None, model: str = "sonar", timeout: float = 30
    ) -> None:
        self.model = model
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=2
        )

    async def search(self, query: str) -> SearchAnswer:
        try:
            completion = await self._client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": "Answer concisely, citing sources."},
                    {"role": "user", "content": query},
                ],
            )
        except openai.APIStatusError as exc:
            log.warning("search provider answered HTTP %s", exc.status_code)
            raise SearchError(
                f"the search service answered with an error ({exc.status_code})"
            ) from None
        except openai.OpenAIError as exc:
            log.warning("search provider unreachable: %s", type(exc).__name__)
            raise SearchError("the search service could not be reached") from None
        try:
            text = completion.choices[0].message.content or ""
        except (AttributeError, IndexError):
            raise SearchError("the search service sent an unreadable answer") from None
        extra: dict[str, Any] = completion.model_extra or {}
        return SearchAnswer(text.strip(), _sources(extra))

    async def aclose(self) -> None:
        await self._client.close()


def _sources(extra: dict[str, Any]) -> list[Source]:
    found: list[Source] = []
    results = extra.get("search_results")
    if isinstance(results, list):
        for item in results:
            if isinstance(item, dict) and isinstance(item.get("url"), str):
                found.append(Source(str(item.get("title") or item["url"]), item["url"]))
    if not found and isinstance(extra.get("citations"), list):
        found = [Source(url, url) for url in extra["citations"] if isinstance(url, str)]
    return found
