"""The whole path through the bot: "summarize this <link>" (also in reply to a message
with the link), /read and /search with and without an LLM, the answer's citations, the
per-chat limit's notice and provider failures as replies, and `groupmate check`."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage
from groupmate.testing.stub_llm import StubLLM, calls, text
from tests import bots
from tests.page_server import PageServer
from tests.ports import free_port
from tests.search_servers import BRAVE_KEY, FakeSearch, hits
from tests.test_cli import _config, _run

NEWS_TITLE = "Council approves the new river bridge | Riverside Daily"


@pytest.fixture(scope="module")
def pages() -> Iterator[PageServer]:
    server = PageServer(elsewhere=f"http://127.0.0.1:{free_port()}/news").start()
    yield server
    server.stop()


def make_bot(
    tmp_path: Path, pages: PageServer, fake: FakeSearch, stub: StubLLM | None, **search: Any
) -> Bot:
    return bots.make_bot(
        tmp_path,
        stub,
        llm={"tool_mode": "native"} if stub is not None else None,
        search={
            "provider": "searxng",
            "base_url": fake.url,
            "fetch": {"allow_hosts": [f"127.0.0.1:{pages.port}"]},
            **search,
        },
        bot={"rate_limits": {"user_per_minute": 100, "burst": 100}},
        clock=_now,
    )


def _now() -> Any:
    from datetime import UTC, datetime

    return datetime(2026, 11, 24, 13, 5, tzinfo=UTC)


def said(text: str, n: int = 0, sender: str = "u-alice", **fields: Any) -> IncomingMessage:
    return bots.chat_message(
        text,
        sender_id=sender,
        sender_name="Alice" if sender == "u-alice" else "Bob",
        message_id=f"m{n}" if n else None,
        **fields,
    )


async def answer(bot: Bot, message: IncomingMessage) -> str:
    replies = [reply.text for reply in await bot.handle(message)]
    assert len(replies) == 1, replies
    return replies[0]


# -- reading links


async def test_summarize_this_link_names_the_page(
    tmp_path: Path, pages: PageServer, fake: FakeSearch, stub: StubLLM
) -> None:
    link = pages.url("/news")
    stub.script(
        calls(("read_url", {"url": link})),
        text("- The council approved a 48 million euro bridge; building starts in May."),
    )
    async with make_bot(tmp_path, pages, fake, stub) as bot:
        reply = await answer(bot, said(f"@groupmate summarize this {link}"))
    assert reply == (
        f"📄 {NEWS_TITLE}\n- The council approved a 48 million euro bridge; building starts "
        f"in May.\n\nSource: {link}"
    )
    page_text = stub.requests[1]["messages"][-1]["content"]  # the summary's: the article
    assert "voted nine to two" in page_text and "Copyright" not in page_text


async def test_summarize_this_in_reply_to_a_message_with_the_link(
    tmp_path: Path, pages: PageServer, fake: FakeSearch, stub: StubLLM
) -> None:
    link = pages.url("/blog")
    stub.script(calls(("read_url", {"url": link})), text("- They moved backups to restic."))
    async with make_bot(tmp_path, pages, fake, stub) as bot:
        assert await bot.handle(said(f"worth a read: {link}", 1, sender="u-bob")) == []
        reply = await answer(bot, said("@groupmate summarize this", 2, reply_to_message_id="m1"))
    assert reply.startswith("📄 Why we moved our backups to restic - Ops Notes\n- They moved")
    assert reply.endswith(f"Source: {link}")
    # The model saw the replied-to message (with its link) in the context.
    assert link in json.dumps(stub.requests[0]["messages"])


async def test_the_model_reads_only_links_the_user_sent(
    tmp_path: Path, pages: PageServer, fake: FakeSearch, stub: StubLLM
) -> None:
    link = pages.url("/news")
    stub.script(
        calls(("read_url", {"url": pages.url("/blog")})),  # not the link that was sent
        calls(("summary", {})),  # a summary of the chat is not what was asked either
        calls(("read_url", {"url": link})),
        text("- A bridge."),
    )
    async with make_bot(tmp_path, pages, fake, stub) as bot:
        reply = await answer(bot, said(f"@groupmate what does this say? {link}"))
    assert reply.startswith(f"📄 {NEWS_TITLE}\n- A bridge.")
    reports = [json.dumps(r["messages"][-1], ensure_ascii=False) for r in stub.requests[1:3]]
    assert f"read only a link the user sent: url='{link}'" in reports[0]
    assert f"call read_url with url='{link}' instead" in reports[1]


async def test_read_without_an_llm_shows_the_title_and_first_paragraphs(
    tmp_path: Path, pages: PageServer, fake: FakeSearch
) -> None:
    link = pages.url("/news")
    async with make_bot(tmp_path, pages, fake, None) as bot:
        reply = await answer(bot, said(f"/read {link}"))
        assert await bot.handle(said(f"see {link}", 1, sender="u-bob")) == []
        replied = await answer(bot, said("/read", 2, reply_to_message_id="m1"))
    title, lead, url = reply.split("\n", 1)[0], reply.split("\n", 1)[1], reply.rsplit("\n", 1)[1]
    assert title == f"📄 {NEWS_TITLE}"
    assert lead.startswith(
        "Council approves the new river bridge\n\nThe city council voted nine to two"
    )
    assert "Copyright" not in lead and "Subscribe" not in lead
    assert url == link
    assert replied == reply


@pytest.mark.parametrize(
    ("link", "words"),
    [
        ("http://127.0.0.2:{port}/news", "(127.0.0.2 is a loopback address)"),
        ("http://127.0.0.1:{port}/r/1", "(127.0.0.1 is a loopback address)"),  # via redirects
        ("http://bob:pw@127.0.0.1:{port}/news", "user name or password"),
        ("http://127.0.0.1:{port}/pdf", "that link is application/pdf, not a web page"),
    ],
)
async def test_read_refusals_are_replies(
    tmp_path: Path, pages: PageServer, fake: FakeSearch, link: str, words: str
) -> None:
    async with make_bot(tmp_path, pages, fake, None) as bot:
        reply = await answer(bot, said(f"/read {link.format(port=pages.port)}"))
    assert reply.startswith("📄 I can't read that link: ") and words in reply


async def test_read_usage(tmp_path: Path, pages: PageServer, fake: FakeSearch) -> None:
    async with make_bot(tmp_path, pages, fake, None) as bot:
        assert (await answer(bot, said("/read"))).startswith("Usage: /read <link>")
        assert "only http and https" in await answer(bot, said("/read ftp://127.0.0.1/x"))


async def test_a_long_page_is_summarized_in_chunks_and_says_it_was_cut(
    tmp_path: Path, pages: PageServer, fake: FakeSearch, stub: StubLLM
) -> None:
    link = pages.url("/big")
    stub.script(calls(("read_url", {"url": link})))
    stub.fallback = text("- steady growth")
    async with make_bot(tmp_path, pages, fake, stub) as bot:
        reply = await answer(bot, said(f"@groupmate summarize {link}"))
    assert reply.startswith("📄 The very long report\n- steady growth\n(The page was long")
    prompts = [r["messages"][-1]["content"] for r in stub.requests[1:]]
    assert sum(p.startswith("Paragraph") for p in prompts) >= 10  # map over chunks
    assert prompts[-1].startswith("Part 1:")  # then reduce


# -- search


async def test_search_without_an_llm_lists_the_top_five(
    tmp_path: Path, pages: PageServer, fake: FakeSearch
) -> None:
    async with make_bot(tmp_path, pages, fake, None) as bot:
        reply = await answer(bot, said("/search bridge vote"))
    lines = reply.split("\n")
    assert lines[0] == "🔎 Top results for “bridge vote”:"
    expected = hits("bridge vote")[:5]
    assert lines[1:] == [
        line
        for n, hit in enumerate(expected, 1)
        for line in (f"[{n}] {hit['title']}", hit["url"], hit["snippet"])
    ]


async def test_the_answer_cites_only_the_results_it_was_given(
    tmp_path: Path, pages: PageServer, fake: FakeSearch, stub: StubLLM
) -> None:
    stub.script(
        calls(("web_search", {"query": "bridge vote"})),
        text("The vote passed [1] and the cost is known [2]; older reports differ [7]."),
    )
    async with make_bot(tmp_path, pages, fake, stub) as bot:
        reply = await answer(bot, said("@groupmate search the web for the bridge vote"))
    body, _, sources = reply.partition("\n\n")
    assert body == "The vote passed [1] and the cost is known [2]; older reports differ ."
    expected = hits("bridge vote")[:5]
    assert sources.split("\n") == [
        f"[{n}] {hit['title']} - {hit['url']}" for n, hit in enumerate(expected, 1)
    ]
    given = stub.requests[1]["messages"][-1]["content"]
    for n, hit in enumerate(expected, 1):
        assert f"[{n}] {hit['title']} ({hit['url']})\n{hit['snippet']}" in given
    assert "[6]" not in given


async def test_search_failures_and_limits_are_replies(
    tmp_path: Path, pages: PageServer, fake: FakeSearch
) -> None:
    async with make_bot(tmp_path, pages, fake, None, per_chat_per_hour=2, timeout=1) as bot:
        timeout = await answer(bot, said("/search bridge trip:timeout"))  # not counted
        found = await answer(bot, said("/search bridge vote"))
        nothing = await answer(bot, said("/search obscure trip:nothing"))
        limited = await answer(bot, said("/search third query"))
        cached = await answer(bot, said("/search BRIDGE   vote"))  # free: from the cache
        fake.searxng_json = False
        other_chat = said("/search bridge")
        forbidden = await answer(bot, dataclasses.replace(other_chat, chat_id="g2"))
    assert nothing == "🔎 I found nothing for “obscure trip:nothing”."
    assert timeout == (
        "🔎 Search failed: searxng did not answer within 1 s. Please try again later."
    )
    assert limited.startswith(
        "🔎 Not searching now: this chat has used its 2 searches for this hour; the next one"
    )
    assert cached.split("\n")[1:] == found.split("\n")[1:]
    assert fake.queries("searxng") == [
        "bridge trip:timeout",
        "bridge vote",
        "obscure trip:nothing",
        "bridge",
    ]
    assert forbidden == (
        "🔎 Search failed: the SearXNG instance refused JSON results (HTTP 403): enable the "
        "json format in its settings.yml (search: formats: [html, json])."
    )


def test_check_says_which_providers_answer(tmp_path: Path, fake: FakeSearch) -> None:
    config = _config(
        tmp_path,
        search={
            "providers": [
                {"name": "searxng", "base_url": fake.url},
                {"name": "brave", "base_url": fake.url, "api_key": "${BRAVE}"},
                {"name": "tavily", "base_url": fake.url, "api_key": "${TAVILY}"},
            ],
            "fetch": {"allow_hosts": ["wiki.internal"]},
        },
    )
    done = _run("check", "--config", str(config), BRAVE=BRAVE_KEY, TAVILY="tvly-wrong-key")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"search: searxng ({fake.url}), brave ({fake.url}), tavily ({fake.url})" in out
    assert "search searxng: answers (5 results in" in out
    assert "search brave: answers (5 results in" in out
    assert "search tavily: does not answer: tavily refused the API key (HTTP 401)" in out
    assert (
        "link reading: on (up to 2,000,000 bytes, 5 redirects; internal hosts allowed: "
        "wiki.internal)" in out
    )
    assert BRAVE_KEY not in out and "tvly-wrong-key" not in out
