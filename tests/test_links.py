"""Reading links: the forbidden-address classifier on address values (no network at
all), then the fetcher and extractor against a loopback page server that the allowlist
lets through. Every refusal targets loopback only: another port, 127.0.0.2, ::1, IPv4
in IPv6, `localhost`, or a name the test resolver maps to 127.0.0.1."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Iterator, Sequence

import pytest

from groupmate.function_calls.links import (
    AllowList,
    FetchLimits,
    LinkRefused,
    LinkUnreadable,
    PageFetcher,
    find_links,
    forbidden,
    read_article,
)
from groupmate.function_calls.links.addresses import IPAddress, split_host_port
from groupmate.function_calls.links.extract import title_tag
from groupmate.function_calls.links.fetch import Page, decode, system_resolver
from tests.page_server import PageServer
from tests.ports import free_port

# -- the classifier: values only


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "a loopback address"),
        ("127.255.255.254", "a loopback address"),
        ("10.0.0.1", "a private address"),
        ("172.16.5.4", "a private address"),
        ("192.168.1.1", "a private address"),
        ("169.254.169.254", "a link-local address"),  # cloud metadata
        ("100.64.0.1", "a carrier-grade NAT address"),
        ("100.127.255.254", "a carrier-grade NAT address"),
        ("224.0.0.251", "a multicast address"),
        ("240.0.0.1", "a reserved address"),
        ("255.255.255.255", "a reserved address"),
        ("0.0.0.0", "the unspecified address"),
        ("192.0.2.10", "a private address"),  # documentation range
        ("::1", "a loopback address"),
        ("::", "the unspecified address"),
        ("fe80::1", "a link-local address"),
        ("fe80::1%2", "a scoped link-local address"),
        ("fc00::1", "a private address"),
        ("fd12:3456::1", "a private address"),
        ("fec0::1", "a site-local address"),
        ("ff02::1", "a multicast address"),
        ("::ffff:127.0.0.1", "a loopback address inside an IPv6 address"),
        ("::ffff:10.1.2.3", "a private address inside an IPv6 address"),
        ("::ffff:169.254.169.254", "a link-local address inside an IPv6 address"),
        ("::127.0.0.1", "a loopback address inside an IPv6 address"),
        ("2002:7f00:1::", "a loopback address inside an IPv6 address"),  # 6to4
        ("2002:a9fe:a9fe::", "a link-local address inside an IPv6 address"),
        ("64:ff9b::a00:1", "a private address inside an IPv6 address"),  # NAT64 of 10.0.0.1
        ("64:ff9b:1::1", "a local NAT64 address"),
        ("2001:db8::1", "a private address"),  # documentation
    ],
)
def test_addresses_inside_the_network_are_refused(address: str, reason: str) -> None:
    assert forbidden(ipaddress.ip_address(address)) == reason


@pytest.mark.parametrize(
    "address",
    ["93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "::ffff:1.1.1.1", "64:ff9b::101:101"],
)
def test_public_addresses_pass(address: str) -> None:
    assert forbidden(ipaddress.ip_address(address)) is None


def test_allow_host_entries() -> None:
    allow = AllowList.parse(["Wiki.Internal", "127.0.0.1:8080", "[::1]:81"])
    assert allow.allows("wiki.internal", 443) and allow.allows("WIKI.internal.", 80)
    assert allow.allows("127.0.0.1", 8080) and not allow.allows("127.0.0.1", 8081)
    assert allow.allows("::1", 81) and allow.allows("[::1]", 81) and not allow.allows("::1", 80)
    assert not allow.allows("127.0.0.2", 8080)
    with pytest.raises(ValueError, match="port must be a number"):
        split_host_port("wiki:http")


def test_links_are_found_as_written() -> None:
    text = "summarize this https://news.example/a?b=1. also (http://x.example/y) 看https://z.example/新闻。"
    assert find_links(text) == [
        "https://news.example/a?b=1",
        "http://x.example/y",
        "https://z.example/新闻",
    ]


# -- fetching from the loopback page server


@pytest.fixture(scope="module")
def pages() -> Iterator[PageServer]:
    server = PageServer(elsewhere=f"http://127.0.0.1:{free_port()}/news").start()
    yield server
    server.stop()


class Resolver:
    """The test resolver: names to loopback addresses, never a lookup on the network."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[IPAddress]:
        self.asked.append(host)
        if host not in self.names:
            raise OSError("unknown name")
        return [ipaddress.ip_address(self.names[host])]


def fetcher(
    pages: PageServer, *allowed: str, resolver: Resolver | None = None, **limits: float
) -> PageFetcher:
    allow = AllowList.parse(list(allowed) or [f"127.0.0.1:{pages.port}"])
    return PageFetcher(
        FetchLimits(allow=allow, **limits),  # type: ignore[arg-type]
        resolver=resolver or Resolver({}),
    )


async def test_a_news_article_without_its_navigation_and_footer(pages: PageServer) -> None:
    article = read_article(await fetcher(pages).fetch(pages.url("/news")))
    text = "\n".join(article.paragraphs)
    assert article.title == "Council approves the new river bridge | Riverside Daily"
    assert "voted nine to two" in text and "48 million euros" in text
    assert "15 December" in text
    for chrome in ("Subscribe for 1 euro", "Copyright 2026", "Cookie settings", "Sport"):
        assert chrome not in text
    assert not article.truncated


async def test_a_blog_post_without_its_comments_or_sidebar(pages: PageServer) -> None:
    article = read_article(await fetcher(pages).fetch(pages.url("/blog")))
    text = "\n".join(article.paragraphs)
    assert "restic with a nightly job" in text and "only a hope" in text
    for noise in ("Cheap watches", "tried borg", "October 2026", "3 comments"):
        assert noise not in text


async def test_scripts_and_styles_are_not_text(pages: PageServer) -> None:
    article = read_article(await fetcher(pages).fetch(pages.url("/scripts")))
    text = "\n".join(article.paragraphs)
    assert "Red lentils cook in about fifteen minutes" in text
    assert "freezes well" in text
    for code in ("SCRIPT-MARKER-123", "INLINE-SCRIPT-MARKER", "secret-style-marker", "font-family"):
        assert code not in text


async def test_a_gbk_page_is_decoded(pages: PageServer) -> None:
    page = await fetcher(pages).fetch(pages.url("/gbk"))
    article = read_article(page)
    assert article.title == "市政府宣布地铁三号线明年通车"
    text = "\n".join(article.paragraphs)
    assert "地铁三号线将于明年六月正式通车" in text and "四十万人次" in text
    assert "版权所有" not in text


async def test_a_five_megabyte_page_is_cut_at_the_limit(pages: PageServer) -> None:
    page = await fetcher(pages).fetch(pages.url("/big"))
    assert page.truncated
    assert 1_990_000 <= len(page.text.encode()) <= 2_000_000
    article = read_article(page)
    assert article.title == "The very long report" and article.truncated
    assert article.paragraphs[0].startswith("Paragraph 0: the quarterly report")


async def test_plain_text_is_read_as_paragraphs(pages: PageServer) -> None:
    article = read_article(await fetcher(pages).fetch(pages.url("/plain")))
    assert article.paragraphs == [
        "Meeting notes",
        "We agreed to ship on Friday.",
        "Anna writes the release notes.",
    ]


async def test_redirects_are_followed_on_an_allowed_host(pages: PageServer) -> None:
    page = await fetcher(pages).fetch(pages.url("/moved"))
    assert page.url == pages.url("/news")


async def test_a_redirect_chain_into_another_loopback_port_is_refused(pages: PageServer) -> None:
    with pytest.raises(LinkRefused, match=r"inside a private network \(127\.0\.0\.1 is a loopback"):
        await fetcher(pages).fetch(pages.url("/r/1"))


async def test_more_than_five_redirects_are_refused(pages: PageServer) -> None:
    with pytest.raises(LinkUnreadable, match="redirects more than 5 times"):
        await fetcher(pages).fetch(pages.url("/loop/1"))


@pytest.mark.parametrize(
    "link",
    [
        "http://127.0.0.2:{port}/news",  # loopback, not the allowed address
        "http://127.0.0.1:{other}/news",  # the allowed address, another port
        "http://[::1]:{port}/news",
        "http://[::ffff:127.0.0.1]:{port}/news",  # IPv4 inside IPv6
        "http://localhost:{port}/news",  # a real name that resolves to loopback
        "http://0x7f000001:{port}/news",  # the same address spelt as a number
    ],
)
async def test_loopback_targets_off_the_allowlist_are_refused(pages: PageServer, link: str) -> None:
    url = link.format(port=pages.port, other=free_port())
    reader = PageFetcher(
        FetchLimits(allow=AllowList.parse([f"127.0.0.1:{pages.port}"])), resolver=_only_loopback
    )
    with pytest.raises(LinkRefused, match="inside a private network"):
        await reader.fetch(url)


async def _only_loopback(host: str, port: int) -> Sequence[IPAddress]:
    """The system resolver, for names that must resolve to loopback; anything else fails
    the test before a packet goes anywhere."""
    found = await system_resolver(host, port)
    assert found and all(address.is_loopback for address in found), (host, found)
    return found


async def test_a_name_that_resolves_inside_the_network_is_refused(pages: PageServer) -> None:
    resolver = Resolver({"intranet.test": "127.0.0.1"})
    with pytest.raises(LinkRefused, match=r"intranet\.test is a loopback address"):
        await fetcher(pages, resolver=resolver).fetch(f"http://intranet.test:{pages.port}/news")
    assert resolver.asked == ["intranet.test"]


async def test_the_checked_address_is_the_one_connected_to(pages: PageServer) -> None:
    # An allowed name, resolved once by the test resolver (the system knows no
    # pages.test): the request reaches that address with the name in its Host header.
    resolver = Resolver({"pages.test": "127.0.0.1"})
    reader = fetcher(pages, f"pages.test:{pages.port}", resolver=resolver)
    page = await reader.fetch(f"http://pages.test:{pages.port}/host")
    assert page.text == f"You asked for pages.test:{pages.port}."
    assert resolver.asked == ["pages.test"]


@pytest.mark.parametrize(
    ("link", "words"),
    [
        ("ftp://127.0.0.1/file.txt", "only http and https links"),
        ("file:///etc/passwd", "only http and https links"),
        ("http://admin:secret@127.0.0.1:{port}/news", "user name or password"),
        ("http://user@127.0.0.1:{port}/news", "user name or password"),
        ("http:///news", "no host"),
    ],
)
async def test_other_schemes_and_credentials_are_refused(
    pages: PageServer, link: str, words: str
) -> None:
    with pytest.raises(LinkRefused, match=words):
        await fetcher(pages).fetch(link.format(port=pages.port))


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/pdf", "that link is application/pdf, not a web page; only HTML and plain text are read"),
        ("/missing", "the site answered HTTP 404"),
    ],
)
async def test_what_is_not_a_page_gets_a_clear_reason(
    pages: PageServer, path: str, words: str
) -> None:
    with pytest.raises(LinkUnreadable) as raised:
        await fetcher(pages).fetch(pages.url(path))
    assert str(raised.value) == words


async def test_a_page_that_loads_too_slowly_is_given_up(pages: PageServer) -> None:
    with pytest.raises(LinkUnreadable, match="did not load within 1 seconds"):
        await fetcher(pages, timeout=1).fetch(pages.url("/slow"))


async def test_an_unknown_host_is_said_so(pages: PageServer) -> None:
    with pytest.raises(LinkUnreadable, match=r"nowhere\.test could not be found"):
        await fetcher(pages).fetch("http://nowhere.test/page")


async def test_a_compressed_bomb_is_inflated_only_up_to_the_limit(pages: PageServer) -> None:
    page = await fetcher(pages).fetch(pages.url("/gzip-bomb"))
    assert page.truncated and len(page.text) == 2_000_000
    assert page.text.startswith("all work and no play all work")


@pytest.mark.parametrize(("size", "cut"), [(10_000, False), (10_001, True)])
async def test_a_page_exactly_at_the_limit_is_whole(
    pages: PageServer, size: int, cut: bool
) -> None:
    page = await fetcher(pages, max_bytes=10_000).fetch(pages.url(f"/exact/{size}"))
    assert page.truncated is cut and len(page.text) == 10_000


async def test_a_non_ascii_host_goes_out_in_idna(pages: PageServer) -> None:
    resolver = Resolver({"xn--bcher-kva.test": "127.0.0.1"})
    reader = fetcher(pages, f"bücher.test:{pages.port}", resolver=resolver)
    page = await reader.fetch(f"http://bücher.test:{pages.port}/host")
    assert page.text == f"You asked for xn--bcher-kva.test:{pages.port}."
    assert resolver.asked == ["xn--bcher-kva.test"]


@pytest.mark.parametrize(
    ("link", "error", "words"),
    [
        ("http://127.0.0.1:99999/news", LinkRefused, "port is not a valid one"),
        ("http://127.0.0.1:{port}/bad-redirect", LinkUnreadable, "an answer that is not valid"),
    ],
)
async def test_broken_addresses_are_clear_refusals(
    pages: PageServer, link: str, error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        await fetcher(pages).fetch(link.format(port=pages.port))


_FRENCH = "<p>Le café est ouvert à côté de la gare; les élèves mangent des crêpes.</p>"
_CHINESE = "<p>这是一个没有声明字符集的中文页面，内容是关于城市地铁建设的新闻报道。</p>"


@pytest.mark.parametrize(
    ("body", "declared", "expected"),
    [
        ("<meta charset='utf-16'><p>héllo</p>".encode(), None, "héllo"),  # a common lie
        ("<p>héllo</p>".encode(), "rot13", "héllo"),  # not a text encoding
        ("<p>héllo</p>".encode(), "undefined", "héllo"),
        ("<p>héllo</p>".encode(), "quopri", "héllo"),  # bytes-to-bytes
        ("<p>中文页面</p>".encode("gb18030"), "gb2312", "中文页面"),
        (_FRENCH.encode("cp1252"), None, _FRENCH),  # undeclared: windows-1252, not Baltic
        (_CHINESE.encode("gbk"), None, _CHINESE),  # undeclared: detected
        (b"<p>ok</p>" + "中".encode()[:2], None, "<p>ok</p>"),  # cut mid-character
    ],
)
def test_any_declared_charset_gives_text(body: bytes, declared: str | None, expected: str) -> None:
    text = decode(body, declared, "html")
    assert isinstance(text, str) and expected in text


def test_a_page_of_unclosed_title_tags_is_read_in_linear_time() -> None:
    began = time.perf_counter()
    assert title_tag("<title" * 100_000) == ""
    assert title_tag("<html><TITLE lang=en>A &amp; B\n page</title>") == "A & B page"
    assert time.perf_counter() - began < 0.5


_PRICES = """<html><head><meta property="og:title" content="Fuel prices this week"></head>
<body><nav><a href="/">Home</a> <a href="/cars">Cars</a></nav><article>
<h1>Prices rise again</h1><p class="byline">By Anna Berg, 3 March</p>
<p>Prices rose again this week across the region, driven by the cold weather and the
strike at the refinery, which has now lasted eleven days.</p>
<table><tr><th>Fuel</th><th>Price</th></tr><tr><td>Diesel</td><td>1.72 euro</td></tr></table>
<p>They are expected to stay <b>high</b> until the strike ends.<br>Stations report queues.</p>
</article><footer>Copyright 2026 Fuel News</footer></body></html>"""


def test_a_table_is_read_row_by_row_without_the_byline() -> None:
    article = read_article(
        Page(url="http://fuel.test/p", kind="html", text=_PRICES, truncated=False)
    )
    assert article.paragraphs[0] == "Prices rise again"
    assert article.paragraphs[2:] == [
        "Fuel | Price",
        "Diesel | 1.72 euro",
        "They are expected to stay high until the strike ends.",
        "Stations report queues.",
    ]
    text = "\n".join(article.paragraphs)
    for chrome in ("Anna Berg", "Home", "Copyright"):
        assert chrome not in text


@pytest.mark.parametrize(
    ("head", "title"),
    [
        ('<meta property="og:title" content="Fuel  prices">', "Fuel prices"),
        ("", "Prices rise again"),  # nor sharing metadata: the heading
    ],
)
def test_a_page_without_a_title_tag_is_named_by_its_metadata_or_heading(
    head: str, title: str
) -> None:
    markup = f"<html><head>{head}</head><body><h1>Prices rise again</h1><p>Up.</p></body></html>"
    page = Page(url="http://fuel.test/p", kind="html", text=markup, truncated=False)
    assert read_article(page).title == title
