"""Fake SearXNG, Tavily and Brave APIs on 127.0.0.1, answering in each API's documented
JSON shapes. The query picks the behaviour, so one server covers every failure:

    "… trip:timeout"  answers after 3 s      "… trip:garbage"   200 with HTML, not JSON
    "… trip:nothing"  no results              "… trip:busy"      429 Retry-After: 1, then 200
    "… trip:busy-always" 429 every time       "… trip:busy-long" 429 Retry-After: 3600
    "… trip:500"      a server error

A wrong key is refused as each service does: Tavily 401, Brave 422
SUBSCRIPTION_TOKEN_INVALID, SearXNG 403 when `searxng_json` is off (its answer when the
json format is not enabled in settings.yml).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from groupmate.testing.threaded_server import ThreadedServer

GOOD_KEY = "tvly-good-key"
BRAVE_KEY = "brave-good-key"


def hits(query: str, n: int = 7) -> list[dict[str, str]]:
    """Distinct results for a query: title, address and snippet, numbered."""
    topic = query.split(" trip:")[0]
    return [
        {
            "title": f"{topic.title()} result {i}",
            "url": f"https://site{i}.example/{topic.replace(' ', '-')}",
            "snippet": f"Snippet {i} about {topic}: fact number {i}.",
        }
        for i in range(1, n + 1)
    ]


@dataclass
class FakeSearch:
    searxng_json: bool = True
    requests: list[dict[str, Any]] = field(default_factory=list)
    _seen: Counter[tuple[str, str]] = field(default_factory=Counter)
    server: ThreadedServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.port}"

    def start(self) -> FakeSearch:
        app = Starlette(
            routes=[
                Route("/search", self._searxng, methods=["GET"]),
                Route("/search", self._tavily, methods=["POST"]),
                Route("/res/v1/web/search", self._brave, methods=["GET"]),
            ]
        )
        self.server = ThreadedServer(app)
        self.server.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()

    def reset(self) -> None:
        self.requests.clear()
        self._seen.clear()
        self.searxng_json = True

    def queries(self, kind: str) -> list[str]:
        return [r["query"] for r in self.requests if r["kind"] == kind]

    async def _trip(self, kind: str, query: str) -> Response | None:
        """The failure the query asks for, or None to answer normally."""
        self._seen[(kind, query)] += 1
        if "trip:timeout" in query:
            await asyncio.sleep(3)
        if "trip:garbage" in query:
            return HTMLResponse("<html><body>Bad gateway page</body></html>")
        if "trip:500" in query:
            return JSONResponse({"detail": "internal error"}, status_code=500)
        if "trip:busy-long" in query:
            return JSONResponse({"detail": "slow down"}, 429, {"Retry-After": "3600"})
        if "trip:busy-always" in query or ("trip:busy" in query and self._seen[(kind, query)] == 1):
            return JSONResponse({"detail": "slow down"}, 429, {"Retry-After": "1"})
        return None

    def _log(self, kind: str, query: str, request: Request) -> None:
        self.requests.append(
            {"kind": kind, "query": query, "headers": dict(request.headers), "at": time.time()}
        )

    async def _searxng(self, request: Request) -> Response:
        query = request.query_params.get("q", "")
        self._log("searxng", query, request)
        if request.query_params.get("format") != "json" or not self.searxng_json:
            # SearXNG's answer for a format its settings.yml does not enable.
            return HTMLResponse("<html><body>403 Forbidden</body></html>", status_code=403)
        tripped = await self._trip("searxng", query)
        if tripped is not None:
            return tripped
        found = [] if "trip:nothing" in query else hits(query)
        results = [
            {
                "url": hit["url"],
                "title": hit["title"],
                "content": hit["snippet"],
                "engine": "duckduckgo",
                "parsed_url": ["https", hit["url"].split("/")[2], "/", "", "", ""],
                "template": "default.html",
                "engines": ["duckduckgo", "brave"],
                "positions": [n],
                "score": 2.0 / n,
                "category": "general",
            }
            for n, hit in enumerate(found, 1)
        ]
        return JSONResponse(
            {
                "query": query,
                "number_of_results": len(results),
                "results": results,
                "answers": [],
                "corrections": [],
                "infoboxes": [],
                "suggestions": [],
                "unresponsive_engines": [],
            }
        )

    async def _tavily(self, request: Request) -> Response:
        body = await request.json()
        query = str(body.get("query", ""))
        self._log("tavily", query, request)
        if request.headers.get("authorization") != f"Bearer {GOOD_KEY}":
            return JSONResponse(
                {"detail": {"error": "Unauthorized: missing or invalid API key."}},
                status_code=401,
            )
        tripped = await self._trip("tavily", query)
        if tripped is not None:
            return tripped
        found = [] if "trip:nothing" in query else hits(query)[: int(body.get("max_results", 5))]
        return JSONResponse(
            {
                "query": query,
                "follow_up_questions": None,
                "answer": None,
                "images": [],
                "results": [
                    {
                        "title": hit["title"],
                        "url": hit["url"],
                        "content": hit["snippet"],
                        "score": 0.9 - n / 100,
                        "raw_content": None,
                    }
                    for n, hit in enumerate(found)
                ],
                "response_time": 0.42,
            }
        )

    async def _brave(self, request: Request) -> Response:
        query = request.query_params.get("q", "")
        self._log("brave", query, request)
        if request.headers.get("x-subscription-token") != BRAVE_KEY:
            return JSONResponse(
                {
                    "type": "ErrorResponse",
                    "error": {
                        "id": "c3f1b1f2-0000-0000-0000-000000000000",
                        "status": 422,
                        "code": "SUBSCRIPTION_TOKEN_INVALID",
                        "detail": "The provided subscription token is invalid.",
                        "meta": {"component": "authentication"},
                    },
                    "time": 1732350000,
                },
                status_code=422,
            )
        tripped = await self._trip("brave", query)
        if tripped is not None:
            return tripped
        count = int(request.query_params.get("count", "20"))
        found = [] if "trip:nothing" in query else hits(query)[:count]
        payload: dict[str, Any] = {
            "type": "search",
            "query": {"original": query, "show_strict_warning": False, "is_navigational": False},
            "mixed": {"type": "mixed", "main": [], "top": [], "side": []},
        }
        if found:  # Brave leaves `web` out when it found nothing
            payload["web"] = {
                "type": "search",
                "family_friendly": True,
                "results": [
                    {
                        "title": hit["title"],
                        "url": hit["url"],
                        "is_source_local": False,
                        "is_source_both": False,
                        # Brave marks the query's words in descriptions.
                        "description": hit["snippet"].replace(
                            "Snippet", "<strong>Snippet</strong>"
                        ),
                        "language": "en",
                        "family_friendly": True,
                        "type": "search_result",
                        "meta_url": {"scheme": "https", "hostname": hit["url"].split("/")[2]},
                    }
                    for hit in found
                ],
            }
        return JSONResponse(payload)


# Fixtures (a test plugin, see conftest): one server per module, reset per test.
@pytest.fixture(scope="module")
def _fake() -> Iterator[FakeSearch]:
    fake = FakeSearch().start()
    yield fake
    fake.stop()


@pytest.fixture
def fake(_fake: FakeSearch) -> FakeSearch:
    _fake.reset()
    return _fake
