"""Fetching a page a user linked, without ever reaching inside the network.

`fetch` -> `_fetch_following_redirects` -> `_checked` (one hop: the URL's form, the
host resolved and every address checked) -> `_read` (status, type, size, charset).
The request goes to the address that was checked, with the host name in the Host
header and TLS's SNI, so a second DNS answer (rebinding) can't swap it.
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
import logging
import re
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import charset_normalizer
import httpx

from function_calls.links.addresses import AllowList, IPAddress, forbidden, parse_address

log = logging.getLogger(__name__)

PageKind = Literal["html", "text"]
Resolver = Callable[[str, int], Awaitable[Sequence[IPAddress]]]

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset({"text/plain", "text/markdown"})
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
# Supersets that decode what pages labelled with the narrower name really contain.
_WIDER = {"gb2312": "gb18030", "gbk": "gb18030", "iso-8859-1": "cp1252", "ascii": "cp1252"}


class LinkError(Exception):
    """A link that can't be read; the message is fit for the user."""


class LinkRefused(LinkError):
    """A link the bot will not open: another scheme, credentials, or an address inside
    the network."""


class LinkUnreadable(LinkError):
    """The page could not be fetched or is not a web page or plain text."""


@dataclass(frozen=True, slots=True)
class FetchLimits:
    max_bytes: int = 2_000_000
    connect_timeout: float = 5.0
    timeout: float = 20.0  # the whole fetch: every redirect and the body
    max_redirects: int = 5
    allow: AllowList = field(default_factory=AllowList)


@dataclass(frozen=True, slots=True)
class Page:
    url: str  # where the page was found, after redirects
    kind: PageKind
    text: str
    truncated: bool  # cut at max_bytes


@dataclass(frozen=True, slots=True)
class _Target:
    """One hop, checked: the URL as asked, and the address to connect to."""

    url: httpx.URL
    address: IPAddress

    @property
    def request_url(self) -> httpx.URL:
        host = str(self.address)
        return self.url.copy_with(host=host, fragment=None)

    @property
    def host_header(self) -> str:
        host = self.url.host if ":" not in self.url.host else f"[{self.url.host}]"
        return host if self.url.port is None else f"{host}:{self.url.port}"


async def system_resolver(host: str, port: int) -> list[IPAddress]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in infos))


class PageFetcher:
    def __init__(self, limits: FetchLimits | None = None, resolver: Resolver | None = None):
        self.limits = limits or FetchLimits()
        self._resolve = resolver or system_resolver

    async def fetch(self, url: str) -> Page:
        """The page at `url`, or a LinkError subclass saying why not."""
        try:
            async with asyncio.timeout(self.limits.timeout):
                return await self._fetch_following_redirects(url)
        except TimeoutError:
            raise LinkUnreadable(
                f"the page did not load within {self.limits.timeout:g} seconds"
            ) from None

    async def _fetch_following_redirects(self, url: str) -> Page:
        limits = self.limits
        timeout = httpx.Timeout(limits.timeout, connect=limits.connect_timeout)
        # A new client per link: no cookies or connections shared between users' links;
        # trust_env=False: an environment proxy would connect to the name, not the address.
        async with httpx.AsyncClient(
            timeout=timeout, trust_env=False, follow_redirects=False, verify=True
        ) as client:
            for _ in range(limits.max_redirects + 1):
                target = await self._checked(url)
                request = client.build_request(
                    "GET",
                    target.request_url,
                    headers={
                        "Host": target.host_header,
                        "User-Agent": "Mozilla/5.0 (compatible; groupmate link reader)",
                        "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.1",
                    },
                    extensions={"sni_hostname": target.url.host},
                )
                try:
                    response = await client.send(request, stream=True)
                except httpx.TimeoutException:
                    raise LinkUnreadable("the site did not answer in time") from None
                except httpx.HTTPError as exc:
                    log.info("link fetch failed: %s", type(exc).__name__)
                    raise LinkUnreadable("the site could not be reached") from None
                try:
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        url = str(target.url.join(location))
                        continue
                    return await self._read(response, str(target.url))
                finally:
                    await response.aclose()
        raise LinkUnreadable(f"the link redirects more than {limits.max_redirects} times")

    async def _checked(self, url: str) -> _Target:
        try:
            parsed = httpx.URL(url.strip())
        except (httpx.InvalidURL, ValueError):
            raise LinkRefused("that is not a valid link") from None
        if parsed.scheme not in ("http", "https"):
            raise LinkRefused("only http and https links can be read")
        if parsed.userinfo:
            raise LinkRefused("links with a user name or password in them are not opened")
        if not parsed.host:
            raise LinkRefused("that link has no host")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        literal = parse_address(parsed.host)
        if literal is not None:
            addresses: Sequence[IPAddress] = [literal]
        else:
            try:
                addresses = await self._resolve(parsed.host, port)
            except (OSError, UnicodeError):
                raise LinkUnreadable(f"the host {parsed.host} could not be found") from None
            if not addresses:
                raise LinkUnreadable(f"the host {parsed.host} could not be found")
        if not self.limits.allow.allows(parsed.host, port):
            for address in addresses:
                reason = forbidden(address)
                if reason is not None:
                    log.warning("link refused: %s resolves to %s", parsed.host, reason)
                    raise LinkRefused(
                        f"that link points inside a private network ({parsed.host} is "
                        f"{reason}); such links are not opened"
                    )
        return _Target(parsed, addresses[0])

    async def _read(self, response: httpx.Response, url: str) -> Page:
        status = response.status_code
        if status >= 400:
            raise LinkUnreadable(f"the site answered HTTP {status}")
        if not 200 <= status < 300:
            raise LinkUnreadable(f"the site answered HTTP {status} without a page")
        media, _, params = response.headers.get("content-type", "").partition(";")
        media = media.strip().lower()
        if media and media not in _HTML_TYPES and media not in _TEXT_TYPES:
            raise LinkUnreadable(
                f"that link is {media}, not a web page; only HTML and plain text are read"
            )
        body, truncated = await self._body(response)
        if not media:
            if b"\x00" in body[:4096]:
                raise LinkUnreadable("that link is not a web page or plain text")
            media = "text/html" if body.lstrip()[:1] == b"<" else "text/plain"
        kind: PageKind = "html" if media in _HTML_TYPES else "text"
        declared = _charset_param(params)
        return Page(url, kind, decode(body, declared, kind), truncated)

    async def _body(self, response: httpx.Response) -> tuple[bytes, bool]:
        """The body up to max_bytes (after content decoding, so a compressed bomb is cut
        too); the rest is not read."""
        limit = self.limits.max_bytes
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            room = limit - size
            if len(chunk) >= room:
                chunks.append(chunk[:room])
                return b"".join(chunks), len(chunk) > room or _more(response)
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks), False


def _more(response: httpx.Response) -> bool:
    # Exactly at the limit: cut only if the server said the body is longer.
    length = response.headers.get("content-length", "")
    return not length.isdigit() or int(length) > 0


def _charset_param(params: str) -> str | None:
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        codec = codecs.lookup(name).name
    except LookupError:
        return None
    return _WIDER.get(codec, _WIDER.get(name.lower(), codec))


def decode(body: bytes, declared: str | None, kind: PageKind) -> str:
    """The page's text in any charset: a byte-order mark, the header's charset, the
    page's <meta charset>, UTF-8, then a detected guess. A multi-byte character cut at
    the size limit is dropped, not turned into garbage."""
    candidates: list[str | None] = []
    for bom, name in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16")):
        if body.startswith(bom):
            candidates.append(name)
    candidates.append(_codec(declared))
    if kind == "html":
        found = _META_CHARSET.search(body[:4096])
        if found is not None:
            candidates.append(_codec(found.group(1).decode("ascii", "ignore")))
    candidates.append("utf-8")
    for codec in dict.fromkeys(c for c in candidates if c):
        try:
            return codecs.getincrementaldecoder(codec)("strict").decode(body, final=False)
        except UnicodeDecodeError:
            continue
    guess = charset_normalizer.from_bytes(body[:200_000]).best()
    if guess is not None and guess.encoding:
        return body.decode(guess.encoding, errors="replace")
    return body.decode("utf-8", errors="replace")
