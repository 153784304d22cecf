"""What reading a link and searching cost the bot itself: fetch + extract of the test
news article and of a 5 MB page (cut at 2 MB), and a search through a fake SearXNG,
uncached and from the cache. Everything on 127.0.0.1.

Run: `make bench` (or `.venv/bin/python -m bench.links`). Prints a table and writes
bench/results/links.json.
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from groupmate.function_calls.links import AllowList, FetchLimits, PageFetcher, read_article
from groupmate.function_calls.search import SearxngSearch, WebSearch
from tests.page_server import PageServer
from tests.search_servers import FakeSearch

RESULTS = Path(__file__).parent / "results" / "links.json"


async def _timed(rounds: int, job: Callable[[], Awaitable[None]]) -> list[float]:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        await job()
        times.append((time.perf_counter() - began) * 1000)
    return times


def _row(name: str, times: list[float]) -> dict[str, float | str]:
    ordered = sorted(times)
    return {
        "case": name,
        "p50_ms": round(statistics.median(ordered), 2),
        "max_ms": round(ordered[-1], 2),
        "rounds": len(ordered),
    }


async def main() -> None:
    pages = PageServer().start()
    fake = FakeSearch().start()
    rows = []
    try:
        fetcher = PageFetcher(FetchLimits(allow=AllowList.parse([f"127.0.0.1:{pages.port}"])))

        async def news() -> None:
            read_article(await fetcher.fetch(pages.url("/news")))

        async def big() -> None:
            page = await fetcher.fetch(pages.url("/big"))
            await asyncio.to_thread(read_article, page)

        rows.append(_row("read the news article (fetch + extract)", await _timed(30, news)))
        rows.append(_row("read a 5 MB page, cut at 2 MB", await _timed(5, big)))
        search = WebSearch([SearxngSearch(base_url=fake.url)], per_chat_per_hour=0)
        queries = iter(range(10_000))

        async def uncached() -> None:
            await search.search("g", f"query {next(queries)}")

        async def cached() -> None:
            await search.search("g", "query 0")

        rows.append(_row("search, fake SearXNG, uncached", await _timed(50, uncached)))
        rows.append(_row("search, from the cache", await _timed(1000, cached)))
        await search.aclose()
    finally:
        pages.stop()
        fake.stop()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'case':<42} {'p50 ms':>9} {'max ms':>9}")
    for row in rows:
        print(f"{row['case']:<42} {row['p50_ms']:>9} {row['max_ms']:>9}")
    print(f"peak resident memory of the process: {peak_mb:.0f} MB")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"rows": rows, "peak_rss_mb": round(peak_mb)}, indent=2))
    print(f"written to {RESULTS}")


if __name__ == "__main__":
    asyncio.run(main())
