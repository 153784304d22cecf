"""SearXNG, Tavily and Brave against fake servers in each API's JSON shapes: results,
every failure a user can meet, and the service's fallback, cache and per-chat limit."""

from __future__ import annotations

import logging
import time

import pytest

from groupmate.function_calls.search import (
    BraveSearch,
    HttpSearch,
    SearchAuthError,
    SearchError,
    SearchLimitError,
    SearchRateLimitError,
    SearchTimeoutError,
    SearchUnavailableError,
    SearchUnreadableError,
    SearxngSearch,
    Source,
    TavilySearch,
    WebSearch,
)
from tests.ports import free_port
from tests.search_servers import BRAVE_KEY, GOOD_KEY, FakeSearch, hits

KINDS = ["searxng", "tavily", "brave"]


def make(kind: str, url: str, *, key: str | None = None, timeout: float = 5) -> HttpSearch:
    keys = {"searxng": None, "tavily": GOOD_KEY, "brave": BRAVE_KEY}
    classes: dict[str, type[HttpSearch]] = {
        "searxng": SearxngSearch,
        "tavily": TavilySearch,
        "brave": BraveSearch,
    }
    return classes[kind](base_url=url, api_key=key or keys[kind], timeout=timeout)


@pytest.mark.parametrize("kind", KINDS)
async def test_results_come_back_with_title_link_and_snippet(kind: str, fake: FakeSearch) -> None:
    provider = make(kind, fake.url)
    try:
        answer = await provider.search("bridge vote")
    finally:
        await provider.aclose()
    expected = hits("bridge vote")[:5]
    assert answer.text == ""  # results, not an answer: the bot writes that
    assert answer.sources == [Source(h["title"], h["url"], h["snippet"]) for h in expected]
    assert fake.queries(kind) == ["bridge vote"]


@pytest.mark.parametrize("kind", KINDS)
async def test_zero_results_are_an_empty_answer(kind: str, fake: FakeSearch) -> None:
    provider = make(kind, fake.url)
    try:
        answer = await provider.search("obscure trip:nothing")
    finally:
        await provider.aclose()
    assert answer.sources == [] and answer.text == ""


FAILURES = [
    ("trip:timeout", SearchTimeoutError, "did not answer within 1 s", 1),
    (
        "trip:garbage",
        SearchUnreadableError,
        "sent an unreadable answer (an answer that is not JSON)",
        1,
    ),
    ("trip:500", SearchUnavailableError, "answered with an error (HTTP 500)", 1),
    ("trip:busy-always", SearchRateLimitError, "rate-limiting this bot (HTTP 429)", 2),
    ("trip:busy-long", SearchRateLimitError, "it asks to wait 3600 s", 1),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("trip", "kind_of_error", "words", "requests"), FAILURES)
async def test_each_failure_gets_its_own_clear_error(
    kind: str,
    trip: str,
    kind_of_error: type[SearchError],
    words: str,
    requests: int,
    fake: FakeSearch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider = make(kind, fake.url, timeout=1)
    try:
        with pytest.raises(kind_of_error) as raised:
            await provider.search(f"bridge {trip}")
    finally:
        await provider.aclose()
    assert str(raised.value).startswith(f"{kind} ") and words in str(raised.value)
    # 429 with Retry-After: 1 is waited out once, then reported; an hour is not waited.
    assert len(fake.queries(kind)) == requests
    for secret in (GOOD_KEY, BRAVE_KEY):
        assert secret not in str(raised.value) and secret not in caplog.text


@pytest.mark.parametrize("kind", KINDS)
async def test_a_429_with_a_short_retry_after_is_retried_once(kind: str, fake: FakeSearch) -> None:
    provider = make(kind, fake.url)
    began = time.monotonic()
    try:
        answer = await provider.search("bridge trip:busy")
    finally:
        await provider.aclose()
    assert len(answer.sources) == 5
    assert len(fake.queries(kind)) == 2
    assert time.monotonic() - began >= 0.9  # it waited as asked


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("tavily", "tavily refused the API key (HTTP 401); check search.api_key"),
        ("brave", "brave refused the API key (HTTP 422); check search.api_key"),
    ],
)
async def test_a_bad_key_says_so(kind: str, words: str, fake: FakeSearch) -> None:
    provider = make(kind, fake.url, key="wrong-key")
    try:
        with pytest.raises(SearchAuthError, match="refused the API key") as raised:
            await provider.search("bridge")
    finally:
        await provider.aclose()
    assert str(raised.value) == words


async def test_searxng_without_the_json_format_says_how_to_enable_it(fake: FakeSearch) -> None:
    fake.searxng_json = False
    provider = make("searxng", fake.url)
    try:
        with pytest.raises(SearchAuthError) as raised:
            await provider.search("bridge")
    finally:
        await provider.aclose()
    assert "refused JSON results (HTTP 403)" in str(raised.value)
    assert "enable the json format in its settings.yml" in str(raised.value)


async def test_the_keys_go_in_headers_never_in_the_url(fake: FakeSearch) -> None:
    for kind in ("tavily", "brave"):
        provider = make(kind, fake.url)
        await provider.search("bridge")
        await provider.aclose()
    tavily, brave = fake.requests
    assert tavily["headers"]["authorization"] == f"Bearer {GOOD_KEY}"
    assert brave["headers"]["x-subscription-token"] == BRAVE_KEY


async def test_an_unreachable_provider(fake: FakeSearch) -> None:
    provider = make("searxng", f"http://127.0.0.1:{free_port()}")
    try:
        with pytest.raises(SearchUnavailableError, match="searxng could not be reached"):
            await provider.search("bridge")
    finally:
        await provider.aclose()


# -- the service: providers in order, the cache, the per-chat limit


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def service(fake: FakeSearch, *kinds: str, clock: Clock, **options: int) -> WebSearch:
    return WebSearch([make(kind, fake.url, timeout=1) for kind in kinds], clock=clock, **options)


async def test_providers_are_tried_in_order_when_one_fails(fake: FakeSearch) -> None:
    fake.searxng_json = False
    search = service(fake, "searxng", "brave", clock=Clock())
    try:
        found = await search.search("g1", "bridge vote")
    finally:
        await search.aclose()
    assert found.provider == "brave" and len(found.answer.sources) == 5
    assert [r["kind"] for r in fake.requests] == ["searxng", "brave"]


async def test_when_every_provider_fails_each_failure_is_named(fake: FakeSearch) -> None:
    search = service(fake, "tavily", "brave", clock=Clock())
    try:
        with pytest.raises(SearchError) as raised:
            await search.search("g1", "bridge trip:500")
    finally:
        await search.aclose()
    assert str(raised.value) == (
        "tavily answered with an error (HTTP 500); brave answered with an error (HTTP 500)"
    )


async def test_an_identical_query_is_served_from_the_cache_until_it_expires(
    fake: FakeSearch,
) -> None:
    clock = Clock()
    search = service(fake, "searxng", clock=clock, cache_ttl=600, cache_size=2)
    try:
        first = await search.search("g1", "Bridge vote")
        again = await search.search("g2", "  bridge   VOTE ")  # another chat, same search
        assert not first.cached and again.cached and again.answer == first.answer
        assert len(fake.requests) == 1
        clock.now += 601
        assert not (await search.search("g1", "bridge vote")).cached
        assert len(fake.requests) == 2
        # Bounded: the least recently used query leaves first.
        await search.search("g1", "second query")
        await search.search("g1", "third query")
        assert not (await search.search("g1", "bridge vote")).cached
    finally:
        await search.aclose()


async def test_nothing_found_is_not_cached(fake: FakeSearch) -> None:
    search = service(fake, "searxng", clock=Clock())
    try:
        await search.search("g1", "obscure trip:nothing")
        await search.search("g1", "obscure trip:nothing")
    finally:
        await search.aclose()
    assert len(fake.requests) == 2


async def test_each_chat_has_a_search_limit_with_a_notice(fake: FakeSearch) -> None:
    clock = Clock()
    search = service(fake, "searxng", clock=clock, per_chat_per_hour=2)
    try:
        await search.search("g1", "one")
        clock.now += 600
        await search.search("g1", "two")
        with pytest.raises(SearchLimitError) as raised:
            await search.search("g1", "three")
        assert str(raised.value) == (
            "this chat has used its 2 searches for this hour; the next one is possible in "
            "about 50 minutes"
        )
        assert (await search.search("g1", "one")).cached  # a cached answer costs nothing
        assert not (await search.search("g2", "three")).cached  # another chat is not held
        clock.now += 3000  # the first search is an hour old
        assert not (await search.search("g1", "three")).cached
    finally:
        await search.aclose()
    assert fake.queries("searxng") == ["one", "two", "three", "three"]


async def test_a_provider_failure_is_logged_without_its_key(
    caplog: pytest.LogCaptureFixture, fake: FakeSearch
) -> None:
    caplog.set_level(logging.INFO)
    provider = make("tavily", fake.url, key="tvly-secret-wrong")
    with pytest.raises(SearchAuthError):
        await provider.search("bridge")
    await provider.aclose()
    assert "tavily answered HTTP 401" in caplog.text
    assert "tvly-secret-wrong" not in caplog.text


async def test_a_search_that_failed_is_not_counted_against_the_chat(fake: FakeSearch) -> None:
    search = service(fake, "searxng", clock=Clock(), per_chat_per_hour=1)
    try:
        for _ in range(3):
            with pytest.raises(SearchUnavailableError):
                await search.search("g1", "bridge trip:500")
        assert len((await search.search("g1", "bridge")).answer.sources) == 5
        with pytest.raises(SearchLimitError, match="its 1 search for this hour"):
            await search.search("g1", "another")
    finally:
        await search.aclose()
