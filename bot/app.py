"""`Bot`: the wiring of config, storage, LLM, search and adapters, for embedding and CLI."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Self

from groupmate.bot.actions import BotCommands
from groupmate.bot.adapters.base import Adapter
from groupmate.bot.adapters.http_metrics import MetricsServer
from groupmate.bot.config import Config, load_config
from groupmate.bot.contexts import Caller, ContextFactory
from groupmate.bot.messages import IncomingMessage, IncomingReaction, Reply
from groupmate.bot.metrics import Metrics
from groupmate.bot.outbound import MemberDirectories, OutboundRouter, WebhookSender
from groupmate.bot.plugin_runtime import PluginRuntime, configured_plugins
from groupmate.bot.presses import Press, PressOutcome
from groupmate.bot.retention import prune_periodically
from groupmate.bot.router import Deliver
from groupmate.bot.runtime import Runtime, build_runtime
from groupmate.bot.web_events import WEB_PREFIX, LiveEvents
from groupmate.function_calls import FunctionCallLLM, MessageContext, ToolInvoker
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.links import PageFetcher
from groupmate.function_calls.plugins import PluginStatus, PluginStore
from groupmate.function_calls.policy import ToolPolicy
from groupmate.function_calls.remote import OpenApiToolSet
from groupmate.function_calls.search import SearchProvider
from groupmate.function_calls.server_info import ContextWindow
from groupmate.function_calls.services import (
    MemberDirectory,
)
from groupmate.function_calls.toolsets import AbstractToolset, CombinedToolset
from groupmate.storage import Database, OutgoingMessage, ReminderService, Sender, SendError, utc_now
from groupmate.storage.audit import AuditLog
from groupmate.storage.chatlog import ChatLog
from groupmate.storage.deliveries import Claim
from groupmate.storage.overview import TurnLog

if TYPE_CHECKING:
    from groupmate.function_calls.remote import McpTools

log = logging.getLogger(__name__)
# The language model as /healthz reports it: "off" (none configured), "warming" (the
# warm-up request is out), "ready" (warmed, or llm.warm_up is off), "warm-up failed" (the
# bot still answers; the first message reads the whole prompt).
LLMStatus = Literal["off", "warming", "ready", "warm-up failed"]
# Who the warm-up asks as: a member's first message in a group chat, the most common
# turn (a private chat sees fewer tools, so its prompt starts the same but is shorter).
_WARM_UP_MESSAGE = IncomingMessage(
    chat_id="groupmate:warm-up",
    chat_type="group",
    sender_id="groupmate:warm-up",
    sender_name="warm-up",
    text="hi",
)


def settle_heap() -> None:
    """Set what the process made while starting (modules, the app, the bot: it lives as
    long as the process) aside from Python's cyclic garbage collector. Its full passes
    over that heap stopped the event loop for 150 ms every few hundred messages
    (measured), the tail of every burst. Call once, when started (`groupmate serve`
    does): what is set aside is never collected, garbage or not."""
    gc.collect()
    gc.freeze()


class Bot:
    """The whole bot: `async with Bot.from_config("config.yaml") as bot: await bot.handle(m)`.

    Outgoing messages (reminders) go to the senders given to `on_outgoing`, chosen by
    chat-id prefix; with `adapters.webhook.outbound_url` set, the chats of no platform
    go to that webhook. Only the chats some sender delivers to are claimed here.
    """

    def __init__(
        self,
        config: Config,
        *,
        registry: AbstractToolset | None = None,
        clock: Callable[[], datetime] = utc_now,
        search: SearchProvider | None = None,
        pages: PageFetcher | None = None,
        deliver: bool = True,
        remote_tools: bool = True,
        web_pages: bool = True,
    ) -> None:
        self.config = config
        # False for a process without the web playground (`groupmate chat`): the pages'
        # chats ("web:…") are then not delivered here, and the process that serves the
        # pages claims their reminders.
        self._web_pages = web_pages
        # False for a process that only serves tools (`groupmate mcp`): reminders it sets
        # are delivered by the bot process that runs the chats, never claimed here.
        self._deliver = deliver
        # The built-in families and the config's plugins (a bot given its own `registry`
        # has those tools instead of the built-ins), each loaded on its own: one that
        # fails leaves the bot serving without it (see `plugins`).
        own = None if registry is None else set(registry.names())
        self._plugins = PluginRuntime(configured_plugins(config, builtins=own is None, taken=own))
        # The MCP and OpenAPI servers of the config, started with the bot; each offers its
        # tools while it is up. With `remote_tools` False, where only the bot's own tools
        # are used (`groupmate mcp`), there are none.
        self.mcp_tools: McpTools | None = None
        self._openapi: OpenApiToolSet | None = None
        if remote_tools and config.mcp.enabled():
            # The MCP SDK takes a third of a second to import: only with a server configured.
            from groupmate.function_calls.remote import McpTools

            self.mcp_tools = McpTools(config.mcp, health_interval=config.mcp.health_interval)
        if remote_tools and config.openapi.servers:
            self._openapi = OpenApiToolSet(config.openapi)
        # The bot's one tool set, composed once: its own tools (or none), the plugins that
        # run, then the servers'. The invoker adds the policy and the chats' switches.
        parts: list[AbstractToolset] = [] if registry is None else [registry]
        parts.append(self._plugins)
        parts.extend(
            remote.toolset for remote in (self.mcp_tools, self._openapi) if remote is not None
        )
        # The one path from a tool call to its result, for the model, the commands, the
        # offers, the REST routes, the dashboard and MCP clients alike; its policy and
        # audit log are the same for all of them.
        self.policy = ToolPolicy(config.tools.policy, monotonic=time.monotonic)
        # This bot's own registry of metrics (never the process's default one); None
        # with `metrics.enabled: false`. Its parts report to it: see `bot.metrics`.
        self.metrics = Metrics(config.metrics) if config.metrics.enabled else None
        self.invoker = ToolInvoker(
            CombinedToolset(parts),
            call_timeout=config.llm.call_timeout,
            policy=self.policy,
            observe=self.metrics.tool_call if self.metrics else None,
        )
        self.outbound = OutboundRouter()
        self.members = MemberDirectories()
        self.adapters: list[Adapter] = []
        self._clock = clock
        # A search provider of the embedder's own (cached and limited as the config
        # says); else the configured ones, if any.
        self._search = search
        # A page fetcher of the embedder's own (its own resolver, say); else the config's.
        self._pages = pages
        self._stack = AsyncExitStack()
        # Scheduled actions: the commands they may run, attached once the commands exist
        # (after the reminder engine, which may already find one due: see `_act`).
        self._scheduled = BotCommands()
        # Built once, when the bot starts (`build_runtime`); None until then.
        self._runtime: Runtime | None = None
        self._started = asyncio.Event()
        self.llm_status: LLMStatus = "off"

    @property
    def registry(self) -> AbstractToolset:
        """The bot's tools, as its invoker offers them: `registry.get_tools(ctx)` is what
        the sender of `ctx` may use (iterated: every tool it may offer anyone)."""
        return self.invoker.registry

    def _running(self) -> Runtime:
        if self._runtime is None:
            raise RuntimeError("use the bot inside `async with`")
        return self._runtime

    # What the running bot uses, for the adapters, the web pages and tests; None before
    # it starts.
    @property
    def reminders(self) -> ReminderService | None:
        return self._runtime.reminders if self._runtime else None

    @property
    def database(self) -> Database | None:
        """The reminders' database; adapters and routes get it."""
        return self._runtime.reminders.database if self._runtime else None

    @property
    def chatlog(self) -> ChatLog | None:
        return self._runtime.chatlog if self._runtime else None

    @property
    def live(self) -> LiveEvents | None:
        return self._runtime.live if self._runtime else None

    @property
    def audit(self) -> AuditLog | None:
        return self._runtime.audit if self._runtime else None

    @property
    def turns(self) -> TurnLog | None:
        return self._runtime.turns if self._runtime else None

    @property
    def contexts(self) -> ContextFactory | None:
        return self._runtime.contexts if self._runtime else None

    @property
    def llm(self) -> FunctionCallLLM | None:
        return self._runtime.llm if self._runtime else None

    @property
    def metrics_server(self) -> MetricsServer | None:
        """With `metrics.port` set, once started."""
        return self._runtime.metrics_server if self._runtime else None

    @property
    def llm_context(self) -> ContextWindow | None:
        """The window requests are fitted to now: asked at start, and corrected when the
        server refuses a request as too long."""
        return self.llm.window if self.llm is not None else None

    @property
    def llm_problem(self) -> str | None:
        """Why the model cannot be asked anything as configured (a window too small for
        the bot's own instructions), for /healthz, the dashboard and the log."""
        return self.llm.window_problem if self.llm is not None else None

    @classmethod
    def from_config(cls, path: str | Path | None, **options: Any) -> Bot:
        return cls(load_config(path), **options)

    def add_adapter(self, adapter: Adapter) -> None:
        """A chat platform: it gets the outgoing messages of its chats, says who is in
        them if it can, and runs while the bot runs (started last, stopped first)."""
        if self._runtime is not None:
            raise RuntimeError("add adapters before entering `async with bot`")
        self.adapters.append(adapter)
        self.on_outgoing(adapter.send, chat_prefix=adapter.chat_prefix)
        if isinstance(adapter, MemberDirectory):
            self.on_members(adapter, chat_prefix=adapter.chat_prefix)

    def on_members(self, directory: MemberDirectory, *, chat_prefix: str = "") -> None:
        """Who is in the chats under `chat_prefix`, so that "remind @bob" can name Bob."""
        self.members.register(directory, chat_prefix=chat_prefix)

    def on_outgoing(self, sender: Sender, *, chat_prefix: str = "") -> None:
        """Deliver outgoing messages of chats whose id starts with `chat_prefix`."""
        self.outbound.register(sender, chat_prefix=chat_prefix)

    async def _to_pages(self, message: OutgoingMessage) -> str:
        if self._runtime is None:  # a reminder due at startup: the dispatcher retries it
            raise SendError("the web pages are starting")
        return await self._runtime.live.send(message)

    @property
    def plugins(self) -> list[PluginStatus]:
        """Each configured plugin (the built-in families first): loaded, failed (and
        why) or disabled. Never its settings."""
        return self._plugins.statuses

    def plugin_store(self, plugin: str, chat_id: str | None) -> PluginStore:
        """A plugin's values in one chat (None: its global ones), as its handlers see
        them; for tests and tools that read what a plugin stored."""
        return self._running().stores.open(plugin, chat_id)

    @property
    def clock(self) -> Callable[[], datetime]:
        """The bot's UTC clock (a test may move it); every part of the bot reads this one."""
        return self._clock

    async def __aenter__(self) -> Self:
        config = self.config
        try:
            await self._open(config)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def _open(self, config: Config) -> None:
        webhook = config.adapters.webhook
        if self._web_pages:
            # Registered before the reminder engine starts, so that its first claim
            # already covers the pages' chats.
            self.on_outgoing(self._to_pages, chat_prefix=WEB_PREFIX)
        if webhook.outbound_url:
            sender = WebhookSender(webhook.outbound_url)
            self._stack.push_async_callback(sender.aclose)
            self.outbound.register_others(sender)
        runtime = self._runtime = await build_runtime(
            config,
            self._stack,
            invoker=self.invoker,
            plugins=self._plugins,
            remote=(self.mcp_tools, self._openapi),
            outbound=self.outbound,
            members=self.members,
            scheduled=self._scheduled,
            act=self._act,
            clock=self._clock,
            metrics=self.metrics,
            adapters=self.adapters,
            search=self._search,
            pages=self._pages,
            deliver=self._deliver,
        )
        self._started.set()
        # The background tasks are the Bot's: started on the runtime, stopped before it
        # closes (the stack unwinds in reverse).
        pruner = asyncio.create_task(
            prune_periodically(runtime.chatlog, runtime.audit, self._clock, runtime.reminders.acts)
        )
        self._stack.callback(pruner.cancel)
        for adapter in self.adapters:
            await adapter.start(self)
            self._stack.push_async_callback(adapter.stop)
        self._start_warm_up()

    def _start_warm_up(self) -> None:
        """Warm the LLM server's prompt cache in the background: startup and messages never
        wait for it (a first message sent meanwhile queues behind it at a one-slot server,
        then finds the prompt read)."""
        if self.llm is None:
            return
        self.llm_status = "ready"
        # A process that only serves tools (`groupmate mcp`) answers no chat messages.
        if not self.config.llm.warm_up or not self._deliver:
            self._stack.push_async_callback(_cancel, asyncio.create_task(self.llm.load_client()))
            return
        self.llm_status = "warming"
        task = asyncio.create_task(self._warm_up(self.llm))
        self._stack.push_async_callback(_cancel, task)

    async def _warm_up(self, llm: FunctionCallLLM) -> None:
        began = time.perf_counter()
        try:
            ctx = await self.context(_WARM_UP_MESSAGE, progress=False)
            # Not recorded as usage: budgets are per chat, and this is no chat's turn.
            usage = await llm.warm_up(ctx)
        except Exception as exc:
            self.llm_status = "warm-up failed"
            detail = str(exc) if isinstance(exc, LLMUnavailableError) else type(exc).__name__
            log.warning("LLM warm-up failed, the bot answers without it: %s", detail)
            return
        self.llm_status = "ready"
        log.info(
            "LLM warmed up in %.1f s: %d prompt tokens, %d of them already cached",
            time.perf_counter() - began,
            usage.prompt_tokens,
            usage.cached_tokens,
        )

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self._stack.aclose()

    async def context(self, message: IncomingMessage, *, progress: bool = True) -> MessageContext:
        """The context a tool call on behalf of `message`'s sender runs in, as the router
        builds it."""
        return await self._running().router.context(message, progress=progress)

    async def caller_context(self, caller: Caller) -> MessageContext:
        """The context of a call from outside any chat message (REST, MCP, dashboard),
        from the same factory as the router's."""
        return await self._running().contexts.for_caller(caller)

    def may_address(self, text: str) -> bool:
        """See `Trigger.may_address`; False before the bot starts."""
        return self._runtime is not None and self._runtime.router.trigger.may_address(text)

    async def _act(self, claim: Claim, now: datetime) -> OutgoingMessage | None:
        """The reminder engine's `Act`: it starts before the commands exist, so an action
        due at startup waits for them."""
        await self._started.wait()
        return await self._running().actions(claim, now)

    async def handle(self, message: IncomingMessage, deliver: Deliver | None = None) -> list[Reply]:
        """The replies to one incoming message. A platform adapter passes `deliver`, which
        sends them: see `Router.handle` for why the router, not the adapter, calls it."""
        return await self._running().router.handle(message, deliver)

    async def react(self, reaction: IncomingReaction) -> PressOutcome | None:
        """Count someone's reaction to a logged message (digests show them); one that
        stands for a press is acted on (`BotHost.react`)."""
        return await self._running().router.react(reaction)

    async def press(self, press: Press) -> PressOutcome:
        """Act on a press of a reminder's button (`BotHost.press`)."""
        return await self._running().router.press(press)

    async def posted(self, reply: Reply, message_id: str) -> None:
        """Remember the platform's id of a reminder's confirmation (`BotHost.posted`)."""
        await self._running().router.posted(reply, message_id)


async def _cancel(task: asyncio.Task[None]) -> None:
    """Stop `task` and wait until it has (before the client it uses is closed)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
