"""What a running `Bot` uses, built once in one place when it starts (`build_runtime`):
storage and its logs, the language model, the tools' contexts, the answering, the
router and the scheduled actions. The runtime is frozen: nothing is rebound while the
bot runs. Its background tasks (retention, the model's warm-up) are the Bot's."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy.engine import URL

from groupmate.bot.actions import ActionRunner, BotCommands
from groupmate.bot.adapters.base import Adapter
from groupmate.bot.adapters.http_metrics import MetricsServer, serve_on_own_address
from groupmate.bot.answering import Answerer
from groupmate.bot.budget import TokenBudget
from groupmate.bot.config import Config, LLMSettings
from groupmate.bot.contexts import ContextFactory
from groupmate.bot.metrics import Metrics
from groupmate.bot.model_window import llm_context_window
from groupmate.bot.outbound import MemberDirectories, OutboundRouter
from groupmate.bot.plugin_calls import PluginGate
from groupmate.bot.plugin_runtime import PluginRuntime
from groupmate.bot.press_buttons import compose_with_buttons
from groupmate.bot.press_handling import PressHandler
from groupmate.bot.router import Router
from groupmate.bot.web_events import WEB_PREFIX, LiveEvents
from groupmate.function_calls import FunctionCallLLM, ToolInvoker
from groupmate.function_calls.confirmations import Confirmations
from groupmate.function_calls.deps import Deps
from groupmate.function_calls.handlers.budget import BudgetLimits
from groupmate.function_calls.handlers.calendar_feed import CalendarLinks
from groupmate.function_calls.handlers.until_done import UntilDoneCap
from groupmate.function_calls.links import PageFetcher
from groupmate.function_calls.plugins import PluginStores
from groupmate.function_calls.policy import ToolPolicy
from groupmate.function_calls.search import SearchProvider, WebSearch
from groupmate.function_calls.seen_marks import SeenMarks
from groupmate.function_calls.services import (
    AudienceRules,
    DailyLimits,
    MemberDirectory,
    ScheduledCommands,
    TextCompleter,
)
from groupmate.function_calls.toolsets import AbstractToolset
from groupmate.storage import Database, ReminderReader, ReminderService
from groupmate.storage.audit import AuditLog, AuditReader
from groupmate.storage.chat_locks import ChatLocks
from groupmate.storage.chatlog import ChatLog, ChatLogReader
from groupmate.storage.overview import TurnLog
from groupmate.storage.plugin_data import PluginData
from groupmate.storage.scheduler import Act
from groupmate.storage.usage import UsageLog, UsageReader
from groupmate.storage.workdays import configure_calendars

if TYPE_CHECKING:  # the MCP client (and its SDK) is imported only with a server configured
    from groupmate.function_calls.remote import McpTools, OpenApiToolSet

log = logging.getLogger("groupmate.bot.app")


@dataclass(frozen=True, slots=True)
class Runtime:
    """What the running bot uses; the parts the Bot has before it starts (its invoker,
    outbound router, metrics) are the Bot's own."""

    reminders: ReminderService
    chatlog: ChatLog
    live: LiveEvents
    audit: AuditLog
    turns: TurnLog
    stores: PluginStores
    contexts: ContextFactory
    llm: FunctionCallLLM | None
    router: Router
    actions: ActionRunner
    metrics_server: MetricsServer | None  # with `metrics.port` set


async def build_runtime(
    config: Config,
    stack: AsyncExitStack,
    *,
    invoker: ToolInvoker,
    plugins: PluginRuntime,
    remote: tuple[McpTools | None, OpenApiToolSet | None],
    outbound: OutboundRouter,
    members: MemberDirectories,
    scheduled: BotCommands,
    act: Act,
    clock: Callable[[], datetime],
    metrics: Metrics | None,
    adapters: Sequence[Adapter],
    search: SearchProvider | None,
    pages: PageFetcher | None,
    deliver: bool,
) -> Runtime:
    """Start storage, the plugins' services, the remote tool servers and the model, and
    wire the message path on them; each is closed by `stack`. `act` runs the reminders'
    actions (the reminder engine starts first, and may find one due meanwhile)."""
    reminders = await stack.enter_async_context(
        ReminderService.open(
            config.storage.url,
            sender=outbound if deliver else None,
            compose=compose_with_buttons,
            act=act,
            default_timezone=config.bot.timezone,
            policy=config.reminders.policy(),
            rate=config.reminders.rate(),
            clock=clock,
            observe=metrics.delivery if metrics else None,
            reach=outbound.reach,
        )
    )
    configure_calendars(config.reminders.calendar_days())
    reminders.chats.default_workdays = config.reminders.workdays
    database = reminders.database
    retention = config.bot.retention
    chatlog = ChatLog(
        database, keep=retention.max_messages_per_chat, max_age=timedelta(days=retention.max_days)
    )
    live = LiveEvents(chatlog, bot_name=config.bot.name, clock=clock)
    stack.callback(live.close)
    audit = AuditLog(database, max_age=timedelta(days=retention.audit_days))
    usage = UsageLog(database)
    turns = TurnLog(database)
    limits = BudgetLimits(
        config.llm.budget.tokens_per_chat_per_day, config.llm.budget.tokens_per_day
    )
    stores = PluginStores(PluginData(database, clock))
    confirmations = Confirmations()
    reader = ReminderReader(reminders)
    deps = Deps(
        {
            ReminderService: reminders,
            ReminderReader: reader,
            Database: database,
            ChatLog: chatlog,
            ChatLogReader: ChatLogReader(chatlog),
            Confirmations: confirmations,
            CalendarLinks: CalendarLinks(config.adapters.webhook.public_url),
            ScheduledCommands: scheduled,
            UsageLog: usage,
            UsageReader: UsageReader(usage),
            SeenMarks: SeenMarks(stores),
            DailyLimits: limits,
            AudienceRules: config.reminders.rules(),
            UntilDoneCap: UntilDoneCap(config.reminders.until_done_cap),
            MemberDirectory: members,
            ToolPolicy: invoker.policy,
            AuditLog: audit,
            AuditReader: AuditReader(audit),
            WebSearch: _web_search(config, search, stack),
            PageFetcher: _page_fetcher(config, pages),
        },
        stores=stores,
    )
    # Plugins' services start before the tools are settled: a plugin whose service
    # fails is failed, and its tools are not offered.
    gate = PluginGate(reader)
    deps = await plugins.start(stack, deps, gate)
    plugins.log_failures()
    await _start_remote_tools(stack, *remote, metrics=metrics)
    invoker.audit = audit
    if invoker.policy is not None:
        for key in invoker.policy.unmatched(invoker.registry.names()):
            log.warning("tools.policy: %r names no tool this bot offers now", key)
    llm = await _open_llm(config.llm, invoker, stack, metrics) if config.llm.enabled else None
    deps = deps.with_(TextCompleter, llm).with_(AbstractToolset, invoker.registry)
    contexts = ContextFactory(config, reminders=reminders, deps=deps, clock=clock)
    budget = TokenBudget(limits, usage, reminders, clock)
    answerer = Answerer(
        config,
        invoker=invoker,
        contexts=contexts,
        chatlog=chatlog,
        llm=llm,
        outbound=outbound,
        clock=clock,
        budget=budget,
        turns=turns,
        confirmations=confirmations,
        unavailable=plugins.plugins.failed_commands(),
    )
    scheduled.attach(answerer.commands, invoker)
    gate.attach(contexts, invoker)
    actions = ActionRunner(
        commands=answerer.commands,
        scheduled=scheduled,
        contexts=contexts,
        reminders=reader,
        chatlog=chatlog,
        llm=llm,
        budget=budget,
        admins=frozenset(config.bot.admins),
        audit=audit,
    )
    presses = PressHandler(
        admins=frozenset(config.bot.admins),
        commands=answerer.commands,
        contexts=contexts,
        reminders=reminders,
        clock=clock,
    )
    router = Router(
        config,
        answerer=answerer,
        chatlog=chatlog,
        clock=clock,
        chat_locks=await _chat_locks(database.url, stack),
        metrics=metrics,
        presses=presses,
    )
    metrics_server = None
    if metrics is not None:
        metrics.watch(adapters=adapters, queue=database.batches, platforms={WEB_PREFIX: "web"})
        if deliver:  # not `groupmate mcp`, which runs beside `serve`: its port
            metrics_server = await serve_on_own_address(metrics, config.metrics, stack)
    return Runtime(
        reminders=reminders,
        chatlog=chatlog,
        live=live,
        audit=audit,
        turns=turns,
        stores=stores,
        contexts=contexts,
        llm=llm,
        router=router,
        actions=actions,
        metrics_server=metrics_server,
    )


async def _open_llm(
    settings: LLMSettings, invoker: ToolInvoker, stack: AsyncExitStack, metrics: Metrics | None
) -> FunctionCallLLM:
    window = await llm_context_window(settings)
    llm = FunctionCallLLM(
        model=settings.model,
        base_url=settings.base_url,
        api_key=settings.api_key.get_secret_value() if settings.api_key else None,
        invoker=invoker,
        tool_mode=settings.tool_mode,
        prompt_format=settings.prompt_format,
        tool_schema=settings.tool_schema,
        temperature=settings.temperature,
        max_rounds=settings.max_rounds,
        max_invalid_retries=settings.max_invalid_retries,
        request_timeout=settings.request_timeout,
        max_output_tokens=settings.max_output_tokens,
        context_tokens=window.tokens,
        context_source=window.source,
        context_counted=window.counted,
    )
    stack.push_async_callback(llm.aclose)
    if metrics is not None:
        llm.observe_requests(metrics.model_request)
    return llm


def _web_search(
    config: Config, own: SearchProvider | None, stack: AsyncExitStack
) -> WebSearch | None:
    """A search provider of the embedder's own (cached and limited as the config says);
    else the configured ones, if any."""
    settings = config.search
    if own is not None:
        search = settings.service([own])
    elif settings.enabled:
        search = settings.service()
    else:
        return None
    stack.push_async_callback(search.aclose)
    return search


def _page_fetcher(config: Config, own: PageFetcher | None) -> PageFetcher | None:
    """A page fetcher of the embedder's own (its own resolver, say); else the config's."""
    if own is not None:
        return own
    fetch = config.search.fetch
    return PageFetcher(fetch.limits()) if fetch.enabled else None


async def _chat_locks(url: URL, stack: AsyncExitStack) -> ChatLocks | None:
    """Per-chat locks across the processes that share a PostgreSQL database."""
    locks = ChatLocks(url)
    if not locks.enabled:
        return None
    stack.push_async_callback(locks.aclose)
    return locks


async def _start_remote_tools(
    stack: AsyncExitStack,
    mcp: McpTools | None,
    openapi: OpenApiToolSet | None,
    *,
    metrics: Metrics | None,
) -> None:
    """Start the configured MCP and OpenAPI servers (their sets are in the bot's from the
    start, offering their tools once they are up)."""
    if metrics is not None:
        metrics.watch_servers(mcp, openapi)
    starts = []
    if openapi is not None:
        stack.push_async_callback(openapi.aclose)
        starts.append(openapi.start())
    if mcp is not None:
        stack.push_async_callback(mcp.aclose)
        starts.append(mcp.start())
    await asyncio.gather(*starts)  # side by side: startup waits for the slowest
