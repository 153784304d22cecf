"""What `groupmate serve`, `chat` and `mcp` do: the bot, its adapters and the web server.
Apart from the other commands' so that `check` and the data commands import none of it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import os
import signal
import socket
import sys
from collections.abc import Coroutine, Iterator
from typing import Any

import uvicorn

from groupmate.bot.adapters import configured
from groupmate.bot.adapters.http import create_app
from groupmate.bot.app import Bot, settle_heap
from groupmate.bot.cli import INSECURE_FLAG
from groupmate.bot.config import Config, ConfigError, is_loopback

log = logging.getLogger(__name__)


async def _mcp(config: Config) -> None:
    """The bot's tools over stdio, for an MCP client that launched this process. Reminders
    set here are delivered by the bot process that runs the chats (`serve` or `chat`)."""
    from groupmate.bot.adapters.mcp_server import McpEndpoint

    async with Bot(config, deliver=False, remote_tools=False) as bot:
        await McpEndpoint(bot, auth="operator").serve_stdio()


async def _chat(config: Config) -> None:
    from groupmate.bot.adapters.console import run_console  # prompt_toolkit: only here

    # Not the web pages' process: their chats' reminders are left to `serve`.
    await run_console(Bot(config, web_pages=False), user=os.environ.get("USER") or "you")


def serve_refusal(config: Config, *, insecure_no_auth: bool) -> str | None:
    """Why `serve` must not start with this config, or None.

    Without a token every /v1 route is open, which is only safe on a loopback address.
    """
    webhook = config.adapters.webhook
    if webhook.token or is_loopback(webhook.host):
        return None
    if insecure_no_auth:
        log.warning(
            "serving the HTTP API on %s without adapters.webhook.token (%s): every /v1 "
            "route is open to anyone who can reach it",
            webhook.host,
            INSECURE_FLAG,
        )
        return None
    return (
        f"refusing to serve the HTTP API on {webhook.host} without adapters.webhook.token "
        f"(every /v1 route would be open); set a token, bind 127.0.0.1, or pass {INSECURE_FLAG}"
    )


class _Server(uvicorn.Server):
    """Says where it listens once it does, with the real port when the config says 0."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        # uvicorn's own handlers re-raise a SIGTERM once serving stopped, which would end
        # the process inside `async with Bot`: reminder sends in flight would get no close
        # grace and their outcomes would not be written. _serve handles the signals instead.
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        settle_heap()  # before saying so: whoever waits for the line finds it settled
        if self.started and self.servers and self.servers[0].sockets:
            port = self.servers[0].sockets[0].getsockname()[1]
            host = f"[{self.config.host}]" if ":" in self.config.host else self.config.host
            print(f"groupmate serving on http://{host}:{port}", flush=True)
            print(f"  playground: http://{host}:{port}/", flush=True)
            print(f"  dashboard:  http://{host}:{port}/admin", flush=True)
            print("  (a chat in this terminal instead: make chat)", flush=True)


def _listening(host: str, port: int) -> socket.socket:
    """The HTTP API's socket, bound before anything starts: a port in use is said in
    the words of the setting to change, not as an OSError after the bot started."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise ConfigError(f"adapters.webhook.host: cannot listen on {host!r} ({exc})") from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        if exc.errno == errno.EADDRINUSE:
            reason = "is in use by another program (another groupmate, a model server…)"
        else:
            reason = f"cannot be listened on ({exc.strerror})"
        raise ConfigError(
            f"{where} {reason}: set adapters.webhook.port (and host) in the config, or "
            "pass serve --port N (--host H)"
        ) from None
    return sock


def _with_address(config: Config, host: str | None, port: int | None) -> Config:
    """The config with `serve --host/--port` in place of adapters.webhook's."""
    if host is None and port is None:
        return config
    webhook = config.adapters.webhook
    changed = webhook.model_copy(
        update={"host": host or webhook.host, "port": webhook.port if port is None else port}
    )
    adapters = config.adapters.model_copy(update={"webhook": changed})
    return config.model_copy(update={"adapters": adapters})


async def _serve(config: Config) -> None:
    webhook = config.adapters.webhook
    listening = _listening(webhook.host, webhook.port)
    bot = Bot(config)
    for adapter in configured(config):
        bot.add_adapter(adapter)
    async with bot:
        server = _Server(
            uvicorn.Config(
                create_app(bot),
                host=webhook.host,
                port=webhook.port,
                lifespan="on",
                log_level="warning",
                access_log=False,
                # Our logging (text or JSON, with correlation ids) for uvicorn's lines too,
                # not a handler of its own.
                log_config=None,
                # Longer than clients' usual idle expiry, so they never reuse a connection
                # the server is closing at that very moment.
                timeout_keep_alive=30,
                # At most this long for requests under way at a stop (the event streams of
                # open pages are ended at once, by the signal handler below).
                timeout_graceful_shutdown=5,
            )
        )

        def stop(signum: int) -> None:
            # The open pages' event streams end first: otherwise the server waits its whole
            # graceful timeout for them, then cancels them mid-response.
            if bot.live is not None:
                bot.live.close()
            server.handle_exit(signum, None)

        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            # Stop serving, then leave `async with Bot`, which closes the bot in order.
            # (No loop signal handlers on Windows: Ctrl+C ends it as KeyboardInterrupt.)
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(signum, stop, signum)
        await server.serve(sockets=[listening])


def _run_fast(main: Coroutine[Any, Any, None]) -> None:
    """Run the server on uvloop where it is installed (not on Windows): the event loop's
    own cost per request is about half of asyncio's."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
        return
    uvloop.run(main)


def run(options: argparse.Namespace, config: Config) -> int:
    """Serve, chat or serve MCP over stdio (options.command) until stopped; exit status."""
    if options.command == "serve":
        config = _with_address(config, options.host, options.port)
        refusal = serve_refusal(config, insecure_no_auth=options.insecure_no_auth)
        if refusal is not None:
            print(f"groupmate: {refusal}", file=sys.stderr)
            return 2
    if options.command == "mcp":
        from groupmate.bot.adapters.mcp_server import McpEndpoint  # the MCP SDK: only here

        McpEndpoint.check(config)
        asyncio.run(_mcp(config))
    elif options.command == "chat":
        asyncio.run(_chat(config))
    else:
        _run_fast(_serve(config))
    return 0
