"""A loopback web server with realistic pages for the link reader: a news article with
navigation and footer, a blog post with comments, a page full of <script> and <style>,
a page in GBK, a 5 MB page, plain text, a PDF, redirect chains and a slow page."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import AsyncIterator
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from groupmate.testing.threaded_server import ThreadedServer

PAGES = Path(__file__).parent / "fixtures" / "pages"
BIG_BYTES = 5 * 1024 * 1024


def _file(name: str, content_type: str) -> Route:
    body = (PAGES / name).read_bytes()

    async def page(request: Request) -> Response:
        return Response(body, media_type=None, headers={"content-type": content_type})

    return Route(f"/{name.removesuffix('.html')}", page)


async def _big(request: Request) -> Response:
    paragraph = (
        "<p>Paragraph {n}: the quarterly report describes steady growth in every region, "
        "with the northern office ahead of its plan for the third quarter in a row.</p>\n"
    )

    async def chunks() -> AsyncIterator[bytes]:
        yield b"<html><head><title>The very long report</title></head><body><article>"
        sent, n = 0, 0
        while sent < BIG_BYTES:
            block = "".join(paragraph.format(n=n + i) for i in range(200)).encode()
            n += 200
            sent += len(block)
            yield block
        yield b"</article></body></html>"

    return StreamingResponse(chunks(), media_type="text/html; charset=utf-8")


async def _slow(request: Request) -> Response:
    async def chunks() -> AsyncIterator[bytes]:
        yield b"<html><head><title>Slow</title></head><body><p>first part</p>"
        await asyncio.sleep(5)
        yield b"<p>never read</p></body></html>"

    return StreamingResponse(chunks(), media_type="text/html")


class PageServer:
    """`elsewhere` is the loopback address a redirect chain ends at (not allowed)."""

    def __init__(self, elsewhere: str = "http://127.0.0.1:9/news") -> None:
        self.elsewhere = elsewhere
        self.hosts: list[str] = []
        routes = [
            _file("news.html", "text/html; charset=utf-8"),
            _file("blog.html", "text/html; charset=utf-8"),
            _file("scripts.html", "text/html"),
            _file("gbk.html", "text/html"),  # the charset is only in the page's <meta>
            Route("/big", _big),
            Route("/slow", _slow),
            Route("/plain", self._plain),
            Route("/pdf", self._pdf),
            Route("/host", self._host),
            Route("/missing", self._missing),
            Route("/r/{n:int}", self._chain),
            Route("/loop/{n:int}", self._loop),
            Route("/moved", self._moved),
            Route("/gzip-bomb", self._gzip_bomb),
            Route("/exact/{n:int}", self._exact),
            Route("/bad-redirect", self._bad_redirect),
        ]
        self._server = ThreadedServer(Starlette(routes=routes))

    @property
    def port(self) -> int:
        return self._server.port

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def start(self) -> PageServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    async def _plain(self, request: Request) -> Response:
        text = "Meeting notes\n\nWe agreed to ship on Friday.\n\nAnna writes the release notes."
        return PlainTextResponse(text)

    async def _pdf(self, request: Request) -> Response:
        return Response(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", media_type="application/pdf")

    async def _host(self, request: Request) -> Response:
        self.hosts.append(request.headers.get("host", ""))
        return PlainTextResponse(f"You asked for {request.headers.get('host')}.")

    async def _missing(self, request: Request) -> Response:
        return PlainTextResponse("not here", status_code=404)

    async def _chain(self, request: Request) -> Response:
        n = request.path_params["n"]
        target = f"/r/{n + 1}" if n < 3 else self.elsewhere
        return RedirectResponse(target, status_code=302)

    async def _loop(self, request: Request) -> Response:
        return RedirectResponse(f"/loop/{request.path_params['n'] + 1}", status_code=301)

    async def _gzip_bomb(self, request: Request) -> Response:
        # 50 MB of text in about 50 KB on the wire.
        body = gzip.compress(b"all work and no play " * 2_500_000, compresslevel=9)
        headers = {"content-encoding": "gzip", "content-type": "text/plain; charset=utf-8"}
        return Response(body, headers=headers)

    async def _exact(self, request: Request) -> Response:
        return PlainTextResponse("x" * request.path_params["n"])

    async def _bad_redirect(self, request: Request) -> Response:
        return Response(status_code=302, headers={"location": "http://[::1"})

    async def _moved(self, request: Request) -> Response:
        return RedirectResponse("/news", status_code=301)
