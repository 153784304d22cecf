"""`GET /metrics`: the bot's metrics (bot.metrics) in Prometheus's text format.

On the HTTP API's port it is one more route, behind the API token as /v1 is (the gate in
`bot.adapters.http` checks it). With `metrics.port` set it is served on an address of its
own instead, by `MetricsServer`, without a token, and the API's port answers 404.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Iterator
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from groupmate.bot.config import MetricsSettings
from groupmate.bot.metrics import Metrics

if TYPE_CHECKING:
    from groupmate.bot.app import Bot

log = logging.getLogger(__name__)
METRICS_PATH = "/metrics"
_START_WITHIN = 10.0  # seconds


def _scrape(metrics: Metrics | None) -> Route:
    async def scrape(request: Request) -> Response:
        if metrics is None:
            return JSONResponse({"error": "metrics are not served here"}, status_code=404)
        # Collected on the event loop, where the state the gauges read changes.
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return Route(METRICS_PATH, scrape, methods=["GET"], include_in_schema=False)


def metrics_routes(bot: Bot) -> list[Route]:
    """`/metrics` on the HTTP API's port; 404 when metrics are off or on their own port."""
    served_here = bot.config.metrics.port is None
    return [_scrape(bot.metrics if served_here else None)]


class _Server(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn's own handlers would take SIGINT and SIGTERM from the process's main
        # server (`groupmate serve` stops on them): this server stops with the bot.
        yield


class MetricsServer:
    """`/metrics` alone on `metrics.host`:`metrics.port`, in the bot's event loop (the
    gauges read the bot's state there: no thread). Started and stopped with the bot."""

    def __init__(self, metrics: Metrics, *, host: str, port: int) -> None:
        self._metrics = metrics
        self._host = host
        self._port = port
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None
        self.port: int | None = None  # the bound port, once started (port 0: any free one)

    async def start(self) -> None:
        """Listen; raises OSError when the address can't be bound."""
        family = socket.AF_INET6 if ":" in self._host else socket.AF_INET
        # Bound here, not by uvicorn: a port in use would make it exit the process.
        sock = socket.create_server((self._host.strip("[]"), self._port), family=family)
        self.port = sock.getsockname()[1]
        app = Starlette(routes=[_scrape(self._metrics)])
        self._server = server = _Server(
            # No log_config: uvicorn's own would replace the bot's (JSON) log handlers.
            uvicorn.Config(app, lifespan="off", log_config=None, access_log=False)
        )
        self._task = task = asyncio.create_task(server.serve(sockets=[sock]), name="metrics")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _START_WITHIN
        while not server.started:
            if task.done() or loop.time() > deadline:
                await self.aclose()
                raise OSError(f"the metrics server on {self._host}:{self.port} did not start")
            await asyncio.sleep(0.01)
        log.info("metrics served on %s:%d%s", self._host, self.port, METRICS_PATH)

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task
        self._server = self._task = None


async def serve_on_own_address(
    metrics: Metrics, settings: MetricsSettings, stack: AsyncExitStack
) -> MetricsServer | None:
    """With `metrics.port` set, the metrics' own server, closed with `stack`. None without
    one, or when its address can't be bound: logged, as an observer must not stop the bot."""
    if settings.port is None:
        return None
    server = MetricsServer(metrics, host=settings.host, port=settings.port)
    try:
        await server.start()
    except OSError as exc:
        log.error("metrics not served on %s:%d: %s", settings.host, settings.port, exc)
        return None
    stack.push_async_callback(server.aclose)
    return server
