"""`Bot`: the wiring of config, storage, LLM, search and adapters, for embedding and CLI."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

from groupmate.bot.actions import ActionRunner, BotCommands
from groupmate.bot.adapters.base import Adapter
from groupmate.bot.adapters.http_metrics import MetricsServer, serve_on_own_address
from groupmate.bot.answering import Answerer
from groupmate.bot.budget import TokenBudget
from groupmate.bot.config import Config, LLMSettings, load_config
from groupmate.bot.contexts import Caller, ContextFactory
from groupmate.bot.messages import IncomingMessage, IncomingReaction, Reply
from groupmate.bot.metrics import Metrics
from groupmate.bot.outbound import MemberDirectories, OutboundRouter, WebhookSender
from groupmate.bot.plugin_calls import PluginGate
from groupmate.bot.plugin_runtime import PluginRuntime, configured_plugins
from groupmate.bot.router import Deliver, Router
from groupmate.bot.web_events import WEB_PREFIX, LiveEvents
from groupmate.function_calls import FunctionCallLLM, MessageContext, ToolInvoker
from groupmate.function_calls.confirmations import Confirmations
from groupmate.function_calls.deps import Deps
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.handlers.budget import BudgetLimits
from groupmate.function_calls.handlers.reminder_words import reminder_message
from groupmate.function_calls.links import PageFetcher
from groupmate.function_calls.llm import PromptBudget
from groupmate.function_calls.plugins import PluginStatus, PluginStore, PluginStores
from groupmate.function_calls.policy import ToolPolicy
from groupmate.function_calls.remote import McpTools, OpenApiToolSet
from groupmate.function_calls.search import SearchProvider, WebSearch
from groupmate.function_calls.server_info import ContextWindow, context_window
from groupmate.function_calls.services import (
    AudienceRules,
    DailyLimits,
    MemberDirectory,
    ScheduledCommands,
    TextCompleter,
)
from groupmate.function_calls.toolsets import AbstractToolset, CombinedToolset
from groupmate.storage import (
    Database,
    OutgoingMessage,
    ReminderReader,
    ReminderService,
    Sender,
    SendError,
    utc_now,
)
from groupmate.storage.audit import AuditLog, AuditReader
from groupmate.storage.chat_locks import ChatLocks
from groupmate.storage.chatlog import ChatLog, ChatLogReader
from groupmate.storage.deliveries import Claim
from groupmate.storage.overview import TurnLog
from groupmate.storage.plugin_data import PluginData
from groupmate.storage.usage import UsageLog

log = logging.getLogger(__name__)
_PRUNE_INTERVAL = 3600.0
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


async def llm_context_window(settings: LLMSettings) -> ContextWindow:
    """`llm.context_tokens`; unset, what the server says (a few seconds at most), else 4096."""
    return await context_window(
        settings.context_tokens,
        base_url=settings.base_url,
        model=settings.model,
        api_key=settings.api_key.get_secret_value() if settings.api_key else None,
    )


async def prompt_budget(config: Config, window: ContextWindow) -> PromptBudget:
    """How `window` is spent on the configured bot's own tools (built-ins and plugins; MCP
    and OpenAPI servers add theirs while it runs), for a member's message in a group."""
    settings = config.llm
    tools = PluginRuntime(configured_plugins(config))
    async with FunctionCallLLM(
        model=settings.model,
        base_url=settings.base_url,
        api_key="unused",  # never sent: no request is made
        invoker=ToolInvoker(tools),
        tool_mode=settings.tool_mode,
        prompt_format=settings.prompt_format,
        tool_schema=settings.tool_schema,
        max_output_tokens=settings.max_output_tokens,
        context_tokens=window.tokens,
        context_source=window.source,
        http_backend="httpx",
    ) as llm:
        ctx = MessageContext(
            chat_id="groupmate:check", chat_type="group", sender_id="member",
            timezone=config.bot.timezone,
        )  # fmt: skip
        return llm.budget(list(tools), ctx)


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
        self._stores: PluginStores | None = None
        # The one path from a tool call to its result, for the model, the commands, the
        # offers, the REST routes, the dashboard and MCP clients alike; its policy and
        # audit log are the same for all of them.
        self.policy = ToolPolicy(config.tools.policy, monotonic=time.monotonic)
        # This bot's own registry of metrics (never the process's default one); None
        # with `metrics.enabled: false`. Its parts report to it: see `bot.metrics`.
        self.metrics = Metrics(config.metrics) if config.metrics.enabled else None
        self.metrics_server: MetricsServer | None = None  # with `metrics.port` set
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
        # Scheduled actions: the commands they may run, and their runner, made once the
        # commands exist (after the reminder engine, which may already find one due).
        self._scheduled = BotCommands()
        self._actions: ActionRunner | None = None
        self._actions_ready = asyncio.Event()
        self._router: Router | None = None
        self.reminders: ReminderService | None = None
        self.database: Database | None = None  # the reminders' one; adapters and routes get it
        self.llm: FunctionCallLLM | None = None
        self.chatlog: ChatLog | None = None
        self.live: LiveEvents | None = None
        self.turns: TurnLog | None = None
        self.llm_status: LLMStatus = "off"
        self._probed_context: ContextWindow | None = None
        self.audit: AuditLog | None = None
        self.contexts: ContextFactory | None = None

    @property
    def registry(self) -> AbstractToolset:
        """The bot's tools, as its invoker offers them: `registry.get_tools(ctx)` is what
        the sender of `ctx` may use (iterated: every tool it may offer anyone)."""
        return self.invoker.registry

    @property
    def llm_context(self) -> ContextWindow | None:
        """The window requests are fitted to now: asked at start, and corrected when the
        server refuses a request as too long."""
        return self.llm.window if self.llm is not None else self._probed_context

    @property
    def llm_problem(self) -> str | None:
        """Why the model cannot be asked anything as configured (a window too small for
        the bot's own instructions), for /healthz, the dashboard and the log."""
        return self.llm.window_problem if self.llm is not None else None

    def _web_search(self) -> WebSearch | None:
        settings = self.config.search
        if self._search is not None:
            search = settings.service([self._search])
        elif settings.enabled:
            search = settings.service()
        else:
            return None
        self._stack.push_async_callback(search.aclose)
        return search

    def _page_fetcher(self) -> PageFetcher | None:
        if self._pages is not None:
            return self._pages
        fetch = self.config.search.fetch
        return PageFetcher(fetch.limits()) if fetch.enabled else None

    @classmethod
    def from_config(cls, path: str | Path | None, **options: Any) -> Bot:
        return cls(load_config(path), **options)

    def add_adapter(self, adapter: Adapter) -> None:
        """A chat platform: it gets the outgoing messages of its chats, says who is in
        them if it can, and runs while the bot runs (started last, stopped first)."""
        if self._router is not None:
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
        if self.live is None:  # a reminder due at startup: the dispatcher retries it
            raise SendError("the web pages are starting")
        return await self.live.send(message)

    @property
    def plugins(self) -> list[PluginStatus]:
        """Each configured plugin (the built-in families first): loaded, failed (and
        why) or disabled. Never its settings."""
        return self._plugins.statuses

    def plugin_store(self, plugin: str, chat_id: str | None) -> PluginStore:
        """A plugin's values in one chat (None: its global ones), as its handlers see
        them; for tests and tools that read what a plugin stored."""
        if self._stores is None:
            raise RuntimeError("use the bot inside `async with`")
        return self._stores.open(plugin, chat_id)

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
        self.reminders = await self._stack.enter_async_context(
            ReminderService.open(
                config.storage.url,
                sender=self.outbound if self._deliver else None,
                compose=reminder_message,
                act=self._act,
                default_timezone=config.bot.timezone,
                policy=config.reminders.policy(),
                clock=self._clock,
                observe=self.metrics.delivery if self.metrics else None,
                reach=self.outbound.reach,
            )
        )
        self.database = self.reminders.database
        retention = config.bot.retention
        chatlog = self.chatlog = ChatLog(
            self.reminders.database,
            keep=retention.max_messages_per_chat,
            max_age=timedelta(days=retention.max_days),
        )
        self.live = LiveEvents(chatlog, bot_name=config.bot.name, clock=self._clock)
        self._stack.callback(self.live.close)
        self.audit = AuditLog(self.reminders.database, max_age=timedelta(days=retention.audit_days))
        pruner = asyncio.create_task(self._prune_periodically(chatlog, self.audit))
        self._stack.callback(pruner.cancel)
        usage = UsageLog(self.reminders.database)
        self.turns = TurnLog(self.reminders.database)
        limits = BudgetLimits(
            config.llm.budget.tokens_per_chat_per_day, config.llm.budget.tokens_per_day
        )
        self._stores = PluginStores(PluginData(self.reminders.database, self._clock))
        confirmations = Confirmations()
        reader = ReminderReader(self.reminders)
        deps = Deps(
            {
                ReminderService: self.reminders,
                ReminderReader: reader,
                Database: self.reminders.database,
                ChatLog: chatlog,
                ChatLogReader: ChatLogReader(chatlog),
                Confirmations: confirmations,
                ScheduledCommands: self._scheduled,
                UsageLog: usage,
                DailyLimits: limits,
                AudienceRules: config.reminders.rules(),
                MemberDirectory: self.members,
                ToolPolicy: self.policy,
                AuditLog: self.audit,
                AuditReader: AuditReader(self.audit),
                WebSearch: self._web_search(),
                PageFetcher: self._page_fetcher(),
            },
            stores=self._stores,
        )
        # Plugins' services start before the tools are settled: a plugin whose service
        # fails is failed, and its tools are not offered.
        gate = PluginGate(reader)
        deps = await self._plugins.start(self._stack, deps, gate)
        self._plugins.log_failures()
        await self._start_remote_tools()
        self.invoker.audit = self.audit
        for key in self.policy.unmatched(self.registry.names()):
            log.warning("tools.policy: %r names no tool this bot offers now", key)
        if config.llm.enabled:
            settings = config.llm
            self._probed_context = await llm_context_window(settings)
            self.llm = FunctionCallLLM(
                model=settings.model,
                base_url=settings.base_url,
                api_key=settings.api_key.get_secret_value() if settings.api_key else None,
                invoker=self.invoker,
                tool_mode=settings.tool_mode,
                prompt_format=settings.prompt_format,
                tool_schema=settings.tool_schema,
                temperature=settings.temperature,
                max_rounds=settings.max_rounds,
                max_invalid_retries=settings.max_invalid_retries,
                request_timeout=settings.request_timeout,
                max_output_tokens=settings.max_output_tokens,
                context_tokens=self._probed_context.tokens,
                context_source=self._probed_context.source,
                context_counted=self._probed_context.counted,
            )
            self._stack.push_async_callback(self.llm.aclose)
            if self.metrics is not None:
                self.llm.observe_requests(self.metrics.model_request)
        deps = deps.with_(TextCompleter, self.llm).with_(AbstractToolset, self.registry)
        self.contexts = ContextFactory(
            config, reminders=self.reminders, deps=deps, clock=self._clock
        )
        budget = TokenBudget(limits, usage, self.reminders, self._clock)
        answerer = Answerer(
            config,
            invoker=self.invoker,
            contexts=self.contexts,
            chatlog=chatlog,
            llm=self.llm,
            outbound=self.outbound,
            clock=self._clock,
            budget=budget,
            turns=self.turns,
            confirmations=confirmations,
        )
        self._scheduled.attach(answerer.commands, self.invoker)
        gate.attach(self.contexts, self.invoker)
        self._actions = ActionRunner(
            commands=answerer.commands,
            scheduled=self._scheduled,
            contexts=self.contexts,
            reminders=reader,
            chatlog=chatlog,
            llm=self.llm,
            budget=budget,
            admins=frozenset(config.bot.admins),
            audit=self.audit,
        )
        self._actions_ready.set()
        self._router = Router(
            config,
            answerer=answerer,
            chatlog=chatlog,
            clock=self._clock,
            chat_locks=await self._chat_locks(),
            metrics=self.metrics,
        )
        if self.metrics is not None:
            queue = self.reminders.database.batches
            self.metrics.watch(adapters=self.adapters, queue=queue, platforms={WEB_PREFIX: "web"})
            if self._deliver:  # not `groupmate mcp`, which runs beside `serve`: its port
                self.metrics_server = await serve_on_own_address(
                    self.metrics, config.metrics, self._stack
                )
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

    async def _chat_locks(self) -> ChatLocks | None:
        """Per-chat locks across the processes that share a PostgreSQL database."""
        assert self.reminders is not None
        locks = ChatLocks(self.reminders.database.url)
        if not locks.enabled:
            return None
        self._stack.push_async_callback(locks.aclose)
        return locks

    async def _start_remote_tools(self) -> None:
        """Start the configured MCP and OpenAPI servers (their sets are in the bot's
        from the start, offering their tools once they are up)."""
        mcp, openapi = self.mcp_tools, self._openapi
        if self.metrics is not None:
            self.metrics.watch_servers(mcp, openapi)
        starts = []
        if openapi is not None:
            self._stack.push_async_callback(openapi.aclose)
            starts.append(openapi.start())
        if mcp is not None:
            self._stack.push_async_callback(mcp.aclose)
            starts.append(mcp.start())
        await asyncio.gather(*starts)  # side by side: startup waits for the slowest

    async def _prune_periodically(self, chatlog: ChatLog, audit: AuditLog) -> None:
        """Age-based retention for every chat, quiet ones included, and for the audit
        log: at start, then hourly."""
        while True:
            try:
                removed = await chatlog.prune_expired(self._clock())
                if removed:
                    log.info("removed %d chat messages past retention", removed)
                removed = await audit.prune_expired(self._clock())
                if removed:
                    log.info("removed %d audit entries past retention", removed)
            except Exception as exc:
                log.error("retention failed: %s", type(exc).__name__)
            await asyncio.sleep(_PRUNE_INTERVAL)

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
        if self._router is None:
            raise RuntimeError("use the bot inside `async with`")
        return await self._router.context(message, progress=progress)

    async def caller_context(self, caller: Caller) -> MessageContext:
        """The context of a call from outside any chat message (REST, MCP, dashboard),
        from the same factory as the router's."""
        if self.contexts is None:
            raise RuntimeError("use the bot inside `async with`")
        return await self.contexts.for_caller(caller)

    def may_address(self, text: str) -> bool:
        """See `Trigger.may_address`; False before the bot starts."""
        return self._router is not None and self._router.trigger.may_address(text)

    async def _act(self, claim: Claim, now: datetime) -> OutgoingMessage | None:
        """The reminder engine's `Act`: it starts before the commands exist, so an action
        due at startup waits for them."""
        await self._actions_ready.wait()
        assert self._actions is not None
        return await self._actions(claim, now)

    async def handle(self, message: IncomingMessage, deliver: Deliver | None = None) -> list[Reply]:
        """The replies to one incoming message. A platform adapter passes `deliver`, which
        sends them: see `Router.handle` for why the router, not the adapter, calls it."""
        if self._router is None:
            raise RuntimeError("use the bot inside `async with`")
        return await self._router.handle(message, deliver)

    async def react(self, reaction: IncomingReaction) -> None:
        """Count someone's reaction to a logged message (digests show them)."""
        if self._router is None:
            raise RuntimeError("use the bot inside `async with`")
        await self._router.react(reaction)


async def _cancel(task: asyncio.Task[None]) -> None:
    """Stop `task` and wait until it has (before the client it uses is closed)."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
