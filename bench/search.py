"""Finding what was said, at scale, on SQLite and PostgreSQL.

Run: `make bench` (or `.venv/bin/python -m bench.search [--backends sqlite postgresql]`).
Prints a table and writes bench/results/search.json.

For each backend:
- `/find` latency: 1,000,000 messages across 1,000 chats, one of them 100,000 long; the
  /find query (a page of 5 and one more, to know whether there is a next page) for a mix
  of searches in the long chat: a common word, a rare one, two words, a phrase, a
  2-character Chinese word (matched without the trigram index on SQLite), a 3-character
  one, a word from one sender, a word no message has, and page 3. p50 and p99 over all.
- logging only, msgs/s: messages not meant for the bot logged through `ChatLog.log` (the
  group commit), as fast as they come, on the schema before the search index (0011) and
  with it (and its indexing service, until every message is indexed): what the index
  adds to each logged message.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Table, insert

from groupmate.storage import Database, upgrade
from groupmate.storage.chatlog import ChatLog, LogEntry
from groupmate.storage.models import ChatMessage, MessageReaction
from groupmate.storage.search import MessageSearch, index_new, parse_query
from tests.processes import databases

RESULTS = Path(__file__).parent / "results" / "search.json"
TOTAL = 1_000_000
CHATS = 1_000
BIG = 100_000
BIG_CHAT = "chat-0000"
LOGGED = 20_000
ROUNDS = 5  # logging runs per schema, alternating; the median counts (the machine drifts)
_WORDS = (
    "the", "we", "a", "is", "to", "and", "of", "it", "that", "for", "on", "in", "this", "with",
    "at", "be", "by", "ok", "yes", "no", "maybe", "meeting", "tomorrow", "today", "report",
    "slides", "deploy", "release", "build", "server", "client", "bug", "fix", "review", "merge",
    "branch", "test", "lunch", "coffee", "weekend", "plan", "budget", "cost", "invoice",
    "customer", "design", "draft", "final", "version", "update", "status", "team", "call",
    "later", "thanks", "please", "sure", "morning", "evening", "week", "month", "venue",
    "ticket", "flight", "hotel", "train", "dinner", "party",
)  # fmt: skip
_CHINESE = [
    "明天开会", "今天下午", "我们讨论一下", "好的收到", "这个版本", "周末愉快", "客户反馈",
    "项目进度", "上线时间", "报告已经发了", "晚上聚餐", "辛苦了",
]  # fmt: skip
SEARCHES = [
    "meeting",  # common
    "invoice customer",  # two words
    '"final version"',  # a phrase
    "预算",  # 2 Chinese characters: LIKE over the chat's rows on SQLite
    "上线时间",  # 4 Chinese characters: the trigram index
    "launchpad",  # rare: a few messages of the chat have it
    "deploy from:@user7",  # one sender
    "zeppelin",  # nothing has it
    "meeting 3",  # page 3
]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _sentence(rng: random.Random) -> str:
    words = rng.choices(_WORDS, k=rng.randint(4, 12))
    if rng.random() < 0.2:
        words.insert(rng.randint(0, len(words)), rng.choice(_CHINESE))
    if rng.random() < 0.02:
        words.append("预算")
    if rng.random() < 0.0005:
        words.append("launchpad")
    return " ".join(words)


def _fill(database: Database) -> float:
    """1,000,000 messages: the big chat's 100,000, the rest across 999 chats, and their
    index; seconds. (PostgreSQL's index is built after the rows: faster to fill.)"""
    if database.backend == "postgresql":
        with database.write_session() as session:
            session.connection().exec_driver_sql("DROP INDEX ix_messages_chat_text_trgm")
    rng = random.Random(29)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    began = time.perf_counter()
    batch: list[dict[str, Any]] = []
    for n in range(TOTAL):
        chat = BIG_CHAT if n % 10 == 0 else f"chat-{1 + n % (CHATS - 1):04d}"
        user = rng.randrange(20)
        batch.append(
            {
                "chat_id": chat,
                "message_id": f"m{n}",
                "sender_id": f"u{user}",
                "sender_name": f"User{user}",
                "text": _sentence(rng),
                "from_bot": False,
                "created_at": start + timedelta(seconds=n),
            }
        )
        if len(batch) == 20_000:
            with database.write_session() as session:
                session.execute(insert(ChatMessage), batch)
            batch.clear()
    if batch:
        with database.write_session() as session:
            session.execute(insert(ChatMessage), batch)
    if database.backend == "postgresql":
        with database.write_session() as session:
            connection = session.connection()
            connection.exec_driver_sql(
                "CREATE INDEX ix_messages_chat_text_trgm ON messages "
                "USING gin (chat_id, text gin_trgm_ops)"
            )
            connection.exec_driver_sql("ANALYZE messages")
    else:
        while True:  # what the indexing service does every second, all at once
            with database.write_session() as session:
                if not index_new(session, 100_000):
                    break
    return time.perf_counter() - began


async def _find_latency(database: Database) -> dict[str, float]:
    search = MessageSearch(database)
    timings: list[float] = []
    per_search: dict[str, float] = {}
    for words in SEARCHES:  # warm the caches once
        await search.search(BIG_CHAT, parse_query(words), limit=6)
    for _ in range(20):
        for words in SEARCHES:
            terms, page = words, 1
            if words.endswith(" 3"):
                terms, page = words[:-2], 3
            began = time.perf_counter()
            await search.search(BIG_CHAT, parse_query(terms), limit=6, offset=(page - 1) * 5)
            took = (time.perf_counter() - began) * 1000
            timings.append(took)
            per_search[words] = max(per_search.get(words, 0.0), took)
    return {
        "p50_ms": _percentile(timings, 0.5),
        "p99_ms": _percentile(timings, 0.99),
        "slowest_ms": max(timings),
        **{f"worst_ms[{words}]": value for words, value in per_search.items()},
    }


async def _logging_rate(url: str, revision: str) -> float:
    """Messages per second that `ChatLog.log` writes, offered as fast as it takes them."""
    database = Database(url)
    upgrade(database, revision)
    if revision == "0011":
        # Retention prunes reactions with their messages (0014): the table is there
        # before too, so that the two runs differ by the search index alone.
        cast(Table, MessageReaction.__table__).create(database.engine)
    try:
        chatlog = ChatLog(database, keep=10**9, max_age=timedelta(days=3650))
        search = MessageSearch(database)
        rng = random.Random(7)
        texts = [_sentence(rng) for _ in range(LOGGED)]
        now = datetime.now(UTC)
        async with contextlib.AsyncExitStack() as stack:
            if revision == "head":  # as the bot runs: the index catches up every second
                await stack.enter_async_context(search.indexing())
            began = time.perf_counter()
            for n, words in enumerate(texts):
                entry = LogEntry(f"m{n}", f"u{n % 20}", f"User{n % 20}", words, now)
                await chatlog.log(f"chat-{n % 10}", entry)
                if n % 500 == 0:
                    await asyncio.sleep(0)  # as messages come: the loop serves the writes
            await chatlog.flush()
            while revision == "head" and await search.index_new():
                pass  # counted until the index has them all
            return LOGGED / (time.perf_counter() - began)
    finally:
        await database.aclose()


def measure(backend: str) -> dict[str, Any]:
    with databases(backend) as new_database:
        rates: dict[str, list[float]] = {"0011": [], "head": []}
        for _ in range(ROUNDS):
            for revision in rates:
                rates[revision].append(asyncio.run(_logging_rate(new_database(), revision)))
        database = Database(new_database())
        upgrade(database)
        fill_s = _fill(database)
        find = asyncio.run(_find_latency(database))
        database.close()
    before = statistics.median(rates["0011"])
    after = statistics.median(rates["head"])
    return {
        "fill_s": fill_s,
        "find": find,
        "logging_before_msgs_per_s": before,
        "logging_after_msgs_per_s": after,
        "logging_cost_added_pct": (before / after - 1) * 100,
    }


_ROWS = [
    ("/find p50 (ms), 100k-message chat, 1M rows", "find", "p50_ms", ".1f", "<= 20"),
    ("/find p99 (ms)", "find", "p99_ms", ".1f", "<= 100"),
    ("/find slowest (ms)", "find", "slowest_ms", ".1f", ""),
    ("logging only, msgs/s, without the index", None, "logging_before_msgs_per_s", ".0f", ""),
    ("logging only, msgs/s, with the index", None, "logging_after_msgs_per_s", ".0f", ""),
    ("cost the index adds to logging (%)", None, "logging_cost_added_pct", ".1f", "<= 30"),
    ("filling 1M rows (s)", None, "fill_s", ".0f", ""),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgresql"])
    options = parser.parse_args()
    report = {}
    for backend in options.backends:
        print(f"[{backend}] measuring…", flush=True)
        report[backend] = measure(backend)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2))
    width = max(len(row[0]) for row in _ROWS)
    print(f"\n{'search'.ljust(width)}" + "".join(f"{b:>12}" for b in report) + "  goal")
    for label, section, key, fmt, goal in _ROWS:
        values = "".join(
            f"{format((report[b][section] if section else report[b])[key], fmt):>12}"
            for b in report
        )
        print(f"{label.ljust(width)}{values}  {goal}")
    for backend in report:
        worst = {k: round(v, 1) for k, v in report[backend]["find"].items() if "[" in k}
        print(f"{backend}: slowest per search (ms): {worst}")
    print(f"JSON written to {RESULTS}")


if __name__ == "__main__":
    main()
