"""The search backends: SearXNG, Tavily and Brave over their JSON APIs (httpx), and
Perplexity or any OpenAI-compatible search model (the `openai` SDK).

Each HTTP provider goes `search` -> `_send_handling_rate_limit` -> `_send`, then reads
the JSON: one concern per method, the statuses mapped to the `SearchError` tree once.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
import openai

from groupmate.function_calls.search._types import (
    SearchAnswer,
    SearchAuthError,
    SearchRateLimitError,
    SearchTimeoutError,
    SearchUnavailableError,
    SearchUnreadableError,
    Source,
)

log = logging.getLogger(__name__)

MAX_RETRY_AFTER = 10.0  # seconds; a longer wait is reported, not slept through
CONNECT_TIMEOUT = 5.0
MAX_SNIPPET = 300
_TAGS = re.compile(r"<[^>]{0,200}>")
_SPACES = re.compile(r"\s+")


def clean(text: Any, limit: int = MAX_SNIPPET) -> str:
    """Plain text from a provider's snippet: Brave marks hits with <strong>, SearXNG and
    Tavily pass page text through; entities decoded, whitespace collapsed, cut."""
    if not isinstance(text, str):
        return ""
    plain = _SPACES.sub(" ", html.unescape(_TAGS.sub("", text))).strip()
    return plain if len(plain) <= limit else plain[: limit - 1].rstrip() + "…"


def retry_after(response: httpx.Response) -> float | None:
    """Seconds from a Retry-After header (a number or an HTTP date); None if absent."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class HttpSearch:
    """The shared HTTP path of the raw-result providers."""

    name = "http"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        timeout: float = 15,
        max_results: int = 5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_results = max_results
        self.timeout = timeout
        self._api_key = api_key
        # trust_env=False: no proxy or netrc from the environment sees our keys.
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT)),
            trust_env=False,
            follow_redirects=False,
            transport=transport,
            headers={"Accept": "application/json", "User-Agent": "groupmate"},
        )

    async def search(self, query: str) -> SearchAnswer:
        response = await self._send_handling_rate_limit(query)
        try:
            payload = response.json()
        except ValueError:
            raise self._unreadable("an answer that is not JSON") from None
        if not isinstance(payload, dict):
            raise self._unreadable("JSON that is not an object")
        return SearchAnswer("", self._results(payload)[: self.max_results])

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _send_handling_rate_limit(self, query: str) -> httpx.Response:
        response = await self._send(query)
        if response.status_code == 429:
            wait = retry_after(response)
            if wait is None or wait > MAX_RETRY_AFTER:
                raise self._rate_limited(wait)
            log.info("search %s: rate-limited, retrying once after %.1f s", self.name, wait)
            await asyncio.sleep(wait)
            response = await self._send(query)
            if response.status_code == 429:
                raise self._rate_limited(retry_after(response))
        self._check_status(response)
        return response

    async def _send(self, query: str) -> httpx.Response:
        try:
            return await self._client.send(self._request(query))
        except httpx.TimeoutException:
            raise SearchTimeoutError(
                f"{self.name} did not answer within {self.timeout:g} s"
            ) from None
        except httpx.HTTPError as exc:
            log.warning("search %s unreachable: %s", self.name, type(exc).__name__)
            raise SearchUnavailableError(f"{self.name} could not be reached") from None

    def _check_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if status < 300:
            return
        log.warning("search %s answered HTTP %s", self.name, status)
        if status in (401, 403):
            raise SearchAuthError(
                f"{self.name} refused the API key (HTTP {status}); check search.api_key"
            )
        raise SearchUnavailableError(f"{self.name} answered with an error (HTTP {status})")

    def _rate_limited(self, wait: float | None) -> SearchRateLimitError:
        later = f"; it asks to wait {wait:.0f} s" if wait else ""
        return SearchRateLimitError(f"{self.name} is rate-limiting this bot (HTTP 429){later}")

    def _unreadable(self, what: str) -> SearchUnreadableError:
        log.warning("search %s sent %s", self.name, what)
        return SearchUnreadableError(f"{self.name} sent an unreadable answer ({what})")

    def _request(self, query: str) -> httpx.Request:
        raise NotImplementedError

    def _results(self, payload: dict[str, Any]) -> list[Source]:
        raise NotImplementedError

    def _listed(self, payload: dict[str, Any], *path: str) -> list[Any]:
        """The result list at `path`, or SearchUnreadableError when the shape is off."""
        found: Any = payload
        for key in path:
            found = found.get(key) if isinstance(found, dict) else None
        if found is None and len(path) > 1:
            return []  # Brave leaves `web` out when nothing was found
        if not isinstance(found, list):
            raise self._unreadable(f"no {'.'.join(path)} list")
        return found

    def _sources(self, items: list[Any], snippet_key: str) -> list[Source]:
        sources = []
        for item in items:
            if not isinstance(item, dict):
                continue
            url = item.get("url")
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                continue
            title = clean(item.get("title"), 200) or url
            sources.append(Source(title, url, clean(item.get(snippet_key))))
        return sources


class SearxngSearch(HttpSearch):
    """A SearXNG instance: `GET {base_url}/search?q=…&format=json`. The instance must list
    `json` under `search.formats` in its settings.yml; otherwise it answers 403."""

    name = "searxng"

    def _request(self, query: str) -> httpx.Request:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        return self._client.build_request(
            "GET",
            f"{self.base_url}/search",
            params={"q": query, "format": "json"},
            headers=headers,
        )

    def _check_status(self, response: httpx.Response) -> None:
        if response.status_code == 403:
            log.warning("search searxng answered HTTP 403 (JSON format not enabled?)")
            raise SearchAuthError(
                "the SearXNG instance refused JSON results (HTTP 403): enable the json "
                "format in its settings.yml (search: formats: [html, json])"
            )
        super()._check_status(response)

    def _results(self, payload: dict[str, Any]) -> list[Source]:
        return self._sources(self._listed(payload, "results"), "content")


class TavilySearch(HttpSearch):
    """Tavily: `POST {base_url}/search` with a bearer key; results with `content`."""

    name = "tavily"

    def _request(self, query: str) -> httpx.Request:
        body = {
            "query": query,
            "max_results": self.max_results,
            "search_depth": "basic",
            "include_answer": False,
        }
        return self._client.build_request(
            "POST",
            f"{self.base_url}/search",
            json=body,
            headers={"Authorization": f"Bearer {self._api_key}"},
        )

    def _check_status(self, response: httpx.Response) -> None:
        # 432 and 433: the plan's or the pay-as-you-go credits are used up.
        if response.status_code in (432, 433):
            log.warning("search tavily answered HTTP %s", response.status_code)
            raise SearchRateLimitError(
                f"tavily: this bot's search credits are used up (HTTP {response.status_code})"
            )
        super()._check_status(response)

    def _results(self, payload: dict[str, Any]) -> list[Source]:
        return self._sources(self._listed(payload, "results"), "content")


class BraveSearch(HttpSearch):
    """Brave: `GET {base_url}/res/v1/web/search?q=…` with `X-Subscription-Token`."""

    name = "brave"

    def _request(self, query: str) -> httpx.Request:
        return self._client.build_request(
            "GET",
            f"{self.base_url}/res/v1/web/search",
            params={"q": query, "count": self.max_results},
            headers={"X-Subscription-Token": self._api_key or ""},
        )

    def _check_status(self, response: httpx.Response) -> None:
        # Brave answers a bad token with 422 and code SUBSCRIPTION_TOKEN_INVALID.
        if response.status_code == 422 and b"SUBSCRIPTION_TOKEN_INVALID" in response.content:
            log.warning("search brave answered HTTP 422 (token invalid)")
            raise SearchAuthError("brave refused the API key (HTTP 422); check search.api_key")
        super()._check_status(response)

    def _results(self, payload: dict[str, Any]) -> list[Source]:
        return self._sources(self._listed(payload, "web", "results"), "description")


class ModelSearch:
    """Perplexity, or any OpenAI-compatible search model that answers with citations."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        model: str = "sonar",
        timeout: float = 30,
        name: str = "perplexity",
    ) -> None:
        self.name = name
        self.model = model
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=1
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
        except openai.AuthenticationError:
            raise SearchAuthError(
                f"{self.name} refused the API key; check search.api_key"
            ) from None
        except openai.RateLimitError:
            raise SearchRateLimitError(
                f"{self.name} is rate-limiting this bot (HTTP 429)"
            ) from None
        except openai.APITimeoutError:
            raise SearchTimeoutError(f"{self.name} did not answer in time") from None
        except openai.APIStatusError as exc:
            log.warning("search %s answered HTTP %s", self.name, exc.status_code)
            raise SearchUnavailableError(
                f"{self.name} answered with an error (HTTP {exc.status_code})"
            ) from None
        except openai.OpenAIError as exc:
            log.warning("search %s unreachable: %s", self.name, type(exc).__name__)
            raise SearchUnavailableError(f"{self.name} could not be reached") from None
        try:
            text = completion.choices[0].message.content or ""
        except (AttributeError, IndexError, TypeError):
            raise SearchUnreadableError(f"{self.name} sent an unreadable answer") from None
        extra: dict[str, Any] = completion.model_extra or {}
        return SearchAnswer(text.strip(), _cited(extra))

    async def aclose(self) -> None:
        await self._client.close()


def _cited(extra: dict[str, Any]) -> list[Source]:
    found: list[Source] = []
    results = extra.get("search_results")
    if isinstance(results, list):
        for item in results:
            if isinstance(item, dict) and isinstance(item.get("url"), str):
                found.append(Source(str(item.get("title") or item["url"]), item["url"]))
    if not found and isinstance(extra.get("citations"), list):
        found = [Source(url, url) for url in extra["citations"] if isinstance(url, str)]
    return found
