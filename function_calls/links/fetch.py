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
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import charset_normalizer
import httpx

from groupmate.function_calls.links.addresses import IPAddress, forbidden, parse_address
from groupmate.function_calls.links.limits import FetchLimits as FetchLimits  # re-exported
from groupmate.storage.exceptions import GroupmateError

log = logging.getLogger(__name__)

PageKind = Literal["html", "text"]
Resolver = Callable[[str, int], Awaitable[Sequence[IPAddress]]]

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset({"text/plain", "text/markdown"})
_META_CHARSET = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_MULTI_BYTE = frozenset(
    {
        "gb18030",
        "big5",
        "big5hkscs",
        "shift_jis",
        "cp932",
        "euc_jp",
        "euc_kr",
        "cp949",
        "iso2022_jp",
    }
)
# Supersets that decode what pages labelled with the narrower name really contain.
_WIDER = {"gb2312": "gb18030", "gbk": "gb18030", "iso-8859-1": "cp1252", "ascii": "cp1252"}


class LinkError(GroupmateError):
    """A link that can't be read; the message is fit for the user."""


class LinkRefused(LinkError):
    """A link the bot will not open: another scheme, credentials, or an address inside
    the network."""


class LinkUnreadable(LinkError):
    """The page could not be fetched or is not a web page or plain text."""


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
    def host(self) -> str:
        """The host as it goes on the wire: IDNA (xn--…) for a non-ASCII name."""
        return self.url.raw_host.decode("ascii")

    @property
    def host_header(self) -> str:
        host = self.host if ":" not in self.host else f"[{self.host}]"
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
                        # Inflated by _body under the size limit; nothing else is asked for.
                        "Accept-Encoding": "gzip, deflate",
                    },
                    extensions={"sni_hostname": target.host},
                )
                try:
                    response = await client.send(request, stream=True)
                except httpx.TimeoutException:
                    raise LinkUnreadable("the site did not answer in time") from None
                except httpx.RemoteProtocolError:  # also a redirect to an invalid address
                    raise LinkUnreadable("the site sent an answer that is not valid") from None
                except httpx.HTTPError as exc:
                    log.info("link fetch failed: %s", type(exc).__name__)
                    raise LinkUnreadable("the site could not be reached") from None
                try:
                    location = response.headers.get("location")
                    if response.is_redirect and location:
                        url = _redirected(target.url, location)
                        continue
                    return await self._read(response, str(target.url))
                except httpx.TimeoutException:
                    raise LinkUnreadable("the site stopped sending the page") from None
                except httpx.HTTPError as exc:
                    log.info("link read failed: %s", type(exc).__name__)
                    raise LinkUnreadable("the page could not be read to the end") from None
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
        if parsed.port is not None and not 0 < parsed.port < 65536:
            raise LinkRefused("that link's port is not a valid one")
        port = parsed.port or (443 if parsed.scheme == "https" else 80)
        host = parsed.raw_host.decode("ascii")
        literal = parse_address(host)
        if literal is not None:
            addresses: Sequence[IPAddress] = [literal]
        else:
            try:
                addresses = await self._resolve(host, port)
            except (OSError, UnicodeError, ValueError):
                raise LinkUnreadable(f"the host {parsed.host} could not be found") from None
            if not addresses:
                raise LinkUnreadable(f"the host {parsed.host} could not be found")
        if not self.limits.allow.allows(host, port):
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
        """The body up to max_bytes, and whether there was more. Compressed bodies are
        inflated here, never more than the limit (a 48 KB gzip can hold 50 MB)."""
        limit = self.limits.max_bytes
        inflater = _inflater(response.headers.get("content-encoding", ""))
        body = bytearray()
        async for raw in response.aiter_raw():
            room = limit + 1 - len(body)  # one byte more than fits: was anything cut?
            body += inflater.feed(raw, room) if inflater is not None else raw[:room]
            if len(body) > limit:
                return bytes(body[:limit]), True
        return bytes(body), False


class _Inflate:
    def __init__(self, wbits: int) -> None:
        self._decompressor = zlib.decompressobj(wbits)

    def feed(self, data: bytes, room: int) -> bytes:
        try:
            out = self._decompressor.decompress(data, room)
            while self._decompressor.unconsumed_tail and len(out) < room:
                tail = self._decompressor.unconsumed_tail
                out += self._decompressor.decompress(tail, room - len(out))
        except zlib.error:
            raise LinkUnreadable("the site sent a damaged compressed page") from None
        return out


def _inflater(encoding: str) -> _Inflate | None:
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        return None
    if encoding in ("gzip", "x-gzip"):
        return _Inflate(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return _Inflate(zlib.MAX_WBITS)
    raise LinkUnreadable(f"the site sent the page in an encoding this reader lacks ({encoding})")


def _redirected(base: httpx.URL, location: str) -> str:
    try:
        return str(base.join(location))
    except (httpx.InvalidURL, ValueError):
        raise LinkUnreadable("the site redirected to an address that is not valid") from None


def _charset_param(params: str) -> str | None:
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def _codec(name: str | None, *, from_meta: bool = False) -> str | None:
    """A text codec for a declared charset; None for an unknown one or a codec that is
    not a text encoding ("rot13", "zlib")."""
    if not name:
        return None
    try:
        info = codecs.lookup(name)
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True):
        return None
    codec = info.name
    if from_meta and codec.startswith(("utf-16", "utf-32")):
        return "utf-8"  # what the HTML standard says a <meta> naming UTF-16 means
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
            candidates.append(_codec(found.group(1).decode("ascii", "ignore"), from_meta=True))
    candidates.append("utf-8")
    for codec in dict.fromkeys(c for c in candidates if c):
        try:
            text = codecs.getincrementaldecoder(codec)("strict").decode(body, final=False)
        except (UnicodeError, ValueError, TypeError, LookupError):
            continue
        if isinstance(text, str):
            return text
    # Undeclared and not UTF-8: detection tells the multi-byte East Asian encodings apart
    # reliably; among single-byte ones it often picks a Baltic or Greek code page for
    # plain French, so those fall back to windows-1252, as browsers do.
    guess = charset_normalizer.from_bytes(body[:200_000]).best()
    detected = _codec(guess.encoding) if guess is not None else None
    return body.decode(detected if detected in _MULTI_BYTE else "cp1252", errors="replace")
