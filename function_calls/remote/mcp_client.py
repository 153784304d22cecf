"""MCP servers as tool sets, through the official `mcp` SDK.

One `McpServerTools` per configured server keeps a session open in a supervisor task:
it lists the tools at start, re-lists them on `notifications/tools/list_changed` and
every `health_interval` (which is also how a dead server is noticed), and restarts a
server that died with exponential backoff. While a server is down it offers no tools,
so the model is never shown one that cannot run. `McpTools.toolset` is every server's
set under its config's allow and deny lists, scope, admin_only and prefix.

A call goes through the same `ToolInvoker` as every other tool: stage 1 checks the
arguments against the server's own `inputSchema` (cleaned like ours), the invoker's
timeout is the server's `timeout`, and the server is stage 2: an `isError` result comes
back to the model as a `ToolError` it can repair.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

import mcp_types as types
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import ToolDefinitionError, ToolError
from groupmate.function_calls.remote.external import as_configured, external_tool
from groupmate.function_calls.remote.mcp_config import McpServerConfig, McpSettings
from groupmate.function_calls.remote.results import content_text, limited
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.tools import Tool
from groupmate.function_calls.toolsets import (
    AbstractToolset,
    CombinedToolset,
    ListingMemo,
    ToolListing,
)
from groupmate.function_calls.vocabulary import Effect, ServerState

log = logging.getLogger(__name__)

# The `_meta` key under which a server with `pass_context: true` gets the chat and sender.
CONTEXT_META_KEY = "io.groupmate/context"
_MAX_PAGES = 20
_MAX_DESCRIPTION = 1024
_CONNECT_TIMEOUT = 30.0
_FIRST_BACKOFF = 1.0
_MAX_BACKOFF = 60.0


class _ConnectionLost(Exception):
    """A call found the connection closed; the supervisor reconnects at once."""


_NONE: tuple[Tool, ...] = ()  # a server that is not up offers nothing


class McpServerTools(AbstractToolset):
    """The tools of one MCP server, for as long as it runs, under the server's own
    names (`as_configured` narrows and prefixes them)."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        health_interval: float = 15.0,
        max_backoff: float = _MAX_BACKOFF,
    ) -> None:
        self._name = name
        self.config = config
        self.health_interval = health_interval
        self.max_backoff = max_backoff
        self.state: ServerState = "starting"
        self.restarts = 0  # times it came back after being up or failing to start
        self.prefix = config.prefix_for(name)
        self._client: Client | None = None
        self._tools: tuple[Tool, ...] = ()
        self._everyone = ListingMemo()
        self._fingerprint = ""
        self._wake = asyncio.Event()
        self._lost = False
        self._first_attempt = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._secrets = [
            s for s in (*config.plain_env().values(), *config.plain_headers().values())
        ]

    @property
    def label(self) -> str:
        return f"MCP server {self._name!r}"

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        return self._everyone.own(self._tools if self.state == "up" else _NONE, ctx)

    # --- lifecycle -------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"mcp:{self._name}")

    async def wait_first_attempt(self) -> None:
        """Until the first connection is up or has failed."""
        await self._first_attempt.wait()

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self.state = "stopped"

    async def _supervise(self) -> None:
        delay = _FIRST_BACKOFF
        while True:
            up_since: float | None = None
            try:
                async with contextlib.AsyncExitStack() as stack:
                    # A server that never finishes its handshake must not hang here.
                    async with asyncio.timeout(max(self.config.timeout, _CONNECT_TIMEOUT)):
                        client = await stack.enter_async_context(self._connect(stack))
                        await self._relist(client)
                    # What an earlier connection's calls reported is not about this one.
                    self._lost = False
                    self._wake.clear()
                    self._client, self.state = client, "up"
                    up_since = time.monotonic()
                    if self._first_attempt.is_set():
                        self.restarts += 1
                    self._first_attempt.set()
                    log.info("%s is up with %d tools", self.label, len(self._tools))
                    try:
                        await self._watch(client)
                    finally:
                        # Hidden before the old session winds down (a stdio server takes
                        # seconds to stop): no call may pick it up meanwhile.
                        self._client, self.state = None, "down"
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning(
                    "%s is down (%s); restarting in %.0f s", self.label, self._describe(exc), delay
                )
            finally:
                self._client, self.state = None, "down"
            self._first_attempt.set()
            if up_since is not None and time.monotonic() - up_since >= self.max_backoff:
                delay = _FIRST_BACKOFF  # it ran well for a while: a fresh crash, not a loop
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_backoff)

    def _connect(self, stack: contextlib.AsyncExitStack) -> Client:
        """A client for the configured transport; what it opens is closed with `stack`."""
        config = self.config
        common: dict[str, Any] = {
            "message_handler": self._on_message,
            "cache": None,
            # The initialize handshake: every server in use today speaks it, and it carries
            # tools/list_changed without a subscription.
            "mode": "legacy",
        }
        if config.kind == "stdio":
            assert config.command is not None
            # Only the config's env, over the SDK's short list of safe variables (PATH,
            # HOME, …): never groupmate's own environment with its keys.
            params = StdioServerParameters(
                command=config.command,
                args=list(config.args),
                env=config.plain_env(),
                cwd=config.cwd,
            )
            return Client(params, **common)
        assert config.url is not None
        if config.kind == "sse":
            return Client(sse_client(config.url, headers=config.plain_headers()), **common)
        # The SDK's client with its recommended timeouts; the SDK leaves closing a client it
        # was given to the giver.
        http = create_mcp_http_client(headers=config.plain_headers())
        stack.push_async_callback(http.aclose)
        return Client(streamable_http_client(config.url, http_client=http), **common)

    async def _watch(self, client: Client) -> None:
        """Until the connection is lost: re-list on list_changed and every interval."""
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.health_interval):
                    await self._wake.wait()
            self._wake.clear()
            if self._lost:
                self._lost = False
                raise _ConnectionLost("a call found the connection closed")
            await self._relist(client)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._wake.set()
        elif isinstance(message, Exception):
            log.debug("%s sent something unreadable: %s", self.label, type(message).__name__)

    # --- tools -----------------------------------------------------------------------

    async def _relist(self, client: Client) -> None:
        listed: list[types.Tool] = []
        cursor: str | None = None
        async with asyncio.timeout(self.config.timeout):
            for _ in range(_MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                listed.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    break
        fingerprint = json.dumps(
            [tool.model_dump(mode="json", exclude={"meta"}) for tool in listed], sort_keys=True
        )
        if fingerprint != self._fingerprint:
            self._tools = tuple(self._build(listed))
            self._fingerprint = fingerprint
            if self.state == "up":
                log.info("%s now offers %d tools", self.label, len(self._tools))

    def _build(self, listed: Iterable[types.Tool]) -> Iterable[Tool]:
        seen: set[str] = set()
        for listing in listed:
            description = listing.description or listing.title or listing.name
            try:
                tool = external_tool(
                    listing.name,
                    description[:_MAX_DESCRIPTION],
                    listing.input_schema,
                    functools.partial(self._call, listing.name),
                    timeout=self.config.timeout,
                    effect=_effect(listing.annotations),
                )
            except ToolDefinitionError as exc:
                log.warning("%s: tool %s is skipped: %s", self.label, listing.name, exc)
                continue
            if tool.name in seen:
                log.warning("%s: tool %s is left out; its name clashes", self.label, listing.name)
                continue
            seen.add(tool.name)
            yield tool

    async def _call(
        self, original: str, ctx: MessageContext, arguments: dict[str, Any]
    ) -> FunctionResult:
        client = self._client
        if client is None:
            raise ToolError(f"The {self._name} tool server is not running; try again shortly.")
        meta: dict[str, Any] | None = None
        if self.config.pass_context:
            meta = {CONTEXT_META_KEY: _context_of(ctx)}
        try:
            result = await client.call_tool(original, arguments, meta=meta)  # type: ignore[arg-type]
        except MCPError as exc:
            if exc.code == types.CONNECTION_CLOSED:
                self._connection_lost(client)
                raise ToolError(
                    f"The {self._name} tool server stopped answering; it is being restarted. "
                    "Try again shortly."
                ) from None
            raise ToolError(
                f"The {self._name} tool server refused the call: {exc.message}"
            ) from None
        except (OSError, EOFError, RuntimeError) as exc:
            # RuntimeError: the session closed between picking the client and calling it.
            self._connection_lost(client)
            raise ToolError(
                f"The {self._name} tool server could not be reached ({type(exc).__name__})."
            ) from None
        text = limited(content_text(result.content, result.structured_content))
        if result.is_error:
            raise ToolError(text or f"{original} reported an error without saying which")
        return FunctionResult.for_model(text)

    def _connection_lost(self, client: Client) -> None:
        """A call found `client`'s connection closed. A late report about an earlier
        connection says nothing about the current one."""
        if client is not self._client:
            return
        self.state = "down"  # its tools go at once, not at the next health check
        self._lost = True
        self._wake.set()

    def _describe(self, exc: BaseException) -> str:
        """The failure for a log line: the innermost error, with any configured secret
        (an env value, a header) blanked out, as a URL or a command line can hold one."""
        while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
            exc = exc.exceptions[0]
        text = f"{type(exc).__name__}: {exc}"[:300]
        if self.config.url:  # its path or query may hold a key (Zapier-style URLs)
            text = text.replace(self.config.url, _redacted(self.config.url))
        for secret in self._secrets:
            if secret:
                text = text.replace(secret, "***")
        return text


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}/…"


def _context_of(ctx: MessageContext) -> dict[str, str]:
    return {
        "chat_id": ctx.chat_id,
        "chat_type": ctx.chat_type,
        "sender_id": ctx.sender_id,
        "sender_name": ctx.sender_name,
        "timezone": ctx.timezone,
    }


class McpTools:
    """Every configured MCP server: started together, closed together."""

    def __init__(self, settings: McpSettings, *, health_interval: float = 15.0) -> None:
        self.settings = settings
        for name, config in settings.enabled().items():
            if config.ignored_keys():
                log.info("MCP server %r: ignoring keys %s", name, ", ".join(config.ignored_keys()))
        self.servers = [
            McpServerTools(name, config, health_interval=health_interval)
            for name, config in settings.enabled().items()
        ]
        # Every server's tools as its config has them, in the config's order.
        self.toolset = CombinedToolset(
            [as_configured(server, server.config, server.prefix) for server in self.servers]
        )

    async def start(self) -> None:
        """Start every server and wait (at most `startup_timeout`) for their first
        attempts; one that is slower joins when it is ready."""
        for server in self.servers:
            server.start()
        if not self.servers:
            return
        waits = [server.wait_first_attempt() for server in self.servers]
        try:
            async with asyncio.timeout(self.settings.startup_timeout):
                await asyncio.gather(*waits)
        except TimeoutError:
            slow = [s.label for s in self.servers if s.state == "starting"]
            log.warning("still starting after %.0f s: %s", self.settings.startup_timeout, slow)

    async def aclose(self) -> None:
        await asyncio.gather(*(server.aclose() for server in self.servers))


def _effect(annotations: types.ToolAnnotations | None) -> Effect:
    """What the server says its tool does. A tool that says nothing counts as a write;
    one that only reads is "read" when it says it stays in its own closed world
    (`openWorldHint: false`), else "external" (MCP's default world is open: a read-only
    search still sends its arguments out, which the audit records)."""
    if annotations is None or not annotations.read_only_hint:
        return "write"
    return "read" if annotations.open_world_hint is False else "external"
