"""The bot's Prometheus metrics, served as `GET /metrics` (bot.adapters.http_metrics).

Each `Bot` has a `CollectorRegistry` of its own, never the process's default one: two
bots in one process (the tests start many) count apart. Counters and histograms move as
the bot's parts report (the router, the LLM transport, the tool invoker, the reminder
dispatcher: each is given one of this class's methods); what is true right now (the write
queue, the platforms' connections, the MCP and OpenAPI servers) is read as a scrape asks,
by `_Now`, rather than kept up to date on every change.

Label values are the bot's own words (a platform, an outcome, a tool's name, a server's
name from the config), never a message's text or a secret; a chat's id only with
`metrics.per_chat`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast, get_args
from urllib.parse import urlsplit

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from groupmate.bot.adapters.base import Adapter, AdapterState, connection_state
from groupmate.bot.config import MetricsSettings
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.errors import InvocationOutcome
from groupmate.function_calls.llm import RequestOutcome
from groupmate.function_calls.toolsets import AbstractToolset
from groupmate.function_calls.usage import Usage
from groupmate.function_calls.vocabulary import ServerState
from groupmate.storage.deliveries import Claim
from groupmate.storage.delivery_outcomes import Outcome
from groupmate.storage.group_commit import GroupCommit
from groupmate.storage.vocabulary import FinishedOutcome

if TYPE_CHECKING:  # the MCP client (and its SDK) is imported only with a server configured
    from groupmate.function_calls.remote import McpServerTools, McpTools, OpenApiToolSet

log = logging.getLogger(__name__)

# A message whose chat id has none of the platforms' prefixes came through the HTTP API
# (POST /v1/messages) or a program's own `Bot.handle` call.
HTTP_PLATFORM = "http"
# The tool label of a call naming no tool there is: the name is the caller's text.
NO_SUCH_TOOL = "(unknown)"
# What the reminder dispatcher reports of a delivery (`groupmate_reminder_deliveries`'s
# outcome): how it finished, or "retried" for a failed attempt that will be tried again
# (the deliveries row's "pending"). Occurrences skipped as missed are recorded as they
# are claimed, never sent: they are not counted here.
DeliveryEvent = Literal[FinishedOutcome, "retried"]
ServerKind = Literal["mcp", "openapi"]
TokenKind = Literal["prompt", "completion"]

_ADAPTER_STATES: tuple[AdapterState, ...] = get_args(AdapterState)
_SERVER_STATES: tuple[ServerState, ...] = get_args(ServerState)
# A local model's cold prompt takes minutes on two cores; a hosted one, a second or two.
_LLM_SECONDS = (0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300)
# From "on time" (well under a second) to an outage's backlog sent within its grace.
_LATENESS_SECONDS = (0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600)


class Metrics:
    """One bot's metrics: the hooks its parts call, and the registry `/metrics` reads."""

    def __init__(self, settings: MetricsSettings) -> None:
        self.settings = settings
        self.registry = CollectorRegistry()
        where = ("platform", "chat_id") if settings.per_chat else ("platform",)
        into = self.registry
        self._received = Counter(
            "groupmate_messages_received",
            "Messages handed to the bot, meant for it or not.",
            where,
            registry=into,
        )
        self._answered = Counter(
            "groupmate_messages_answered",
            "Messages the bot's replies were handed over for (each of a joined burst).",
            where,
            registry=into,
        )
        self._llm_seconds = Histogram(
            "groupmate_llm_request_seconds",
            "Chat Completions requests by outcome, with the SDK's retries in their time.",
            ("outcome",),
            buckets=_LLM_SECONDS,
            registry=into,
        )
        self._llm_tokens = Counter(
            "groupmate_llm_tokens",
            "Tokens of model requests, as the endpoint reports them (else estimated).",
            ("kind", "outcome"),
            registry=into,
        )
        self._tool_calls = Counter(
            "groupmate_tool_calls",
            "Tool calls by tool and outcome, from any caller (model, command, API, MCP).",
            ("tool", "outcome"),
            registry=into,
        )
        self._deliveries = Counter(
            "groupmate_reminder_deliveries",
            "Reminder deliveries by outcome; retried: an attempt failed, another follows.",
            ("outcome",),
            registry=into,
        )
        self._lateness = Histogram(
            "groupmate_reminder_lateness_seconds",
            "Seconds from a reminder's due time to its sending.",
            buckets=_LATENESS_SECONDS,
            registry=into,
        )
        self._now = _Now()
        into.register(self._now)
        self._platforms: list[tuple[str, str]] = []  # (chat id prefix, name), longest first

    # --- what the bot's parts report -----------------------------------------------

    def received(self, message: IncomingMessage) -> None:
        self._received.labels(*self._where(message.chat_id)).inc()

    def answered(self, message: IncomingMessage, count: int = 1) -> None:
        """`message` (the last of `count` answered together) was answered."""
        self._answered.labels(*self._where(message.chat_id)).inc(count)

    def model_request(self, outcome: RequestOutcome, seconds: float, usage: Usage | None) -> None:
        """A `function_calls._transport.RequestObserver`."""
        self._llm_seconds.labels(outcome).observe(seconds)
        if usage is not None:
            # As the endpoint reports them: a negative or garbage count adds nothing (a
            # counter never goes down, and `inc` raises on a negative amount).
            self._llm_tokens.labels("prompt", outcome).inc(_tokens(usage.prompt_tokens))
            self._llm_tokens.labels("completion", outcome).inc(_tokens(usage.completion_tokens))

    def tool_call(self, tool: str | None, outcome: InvocationOutcome) -> None:
        """A `function_calls.invoker.CallObserver`."""
        self._tool_calls.labels(NO_SUCH_TOOL if tool is None else tool, outcome).inc()

    def delivery(self, claim: Claim, outcome: Outcome) -> None:
        """A `storage.scheduler.DeliveryObserver`."""
        event: DeliveryEvent = "retried" if outcome.outcome == "pending" else outcome.outcome
        self._deliveries.labels(event).inc()
        if event in ("sent", "sent_late") and outcome.finished_at is not None:
            late = (outcome.finished_at - claim.occurrence).total_seconds()
            self._lateness.observe(max(late, 0.0))

    # --- what is read when scraped -------------------------------------------------

    def watch(
        self,
        *,
        adapters: Sequence[Adapter],
        queue: GroupCommit,
        platforms: Mapping[str, str],
    ) -> None:
        """The running bot's parts: its platforms (their chat id prefixes name the
        messages' platform, as do `platforms`' others: {"web:": "web"}) and the write
        queue of its database."""
        named = {adapter.chat_prefix: adapter.name for adapter in adapters} | dict(platforms)
        self._platforms = sorted(named.items(), key=lambda item: len(item[0]), reverse=True)
        self._now.adapters = tuple(adapters)
        self._now.queue = queue

    def watch_servers(self, mcp: McpTools | None, openapi: OpenApiToolSet | None) -> None:
        """The MCP and OpenAPI servers the bot's tools come from."""
        watched: list[_Server] = []
        if mcp is not None:
            # The config's own names, in the order McpTools made its servers.
            for name, server in zip(mcp.settings.enabled(), mcp.servers, strict=True):
                watched.append(_Server("mcp", name, _connected(server)))
        if openapi is not None:
            seen: dict[str, int] = {}
            for tools in openapi.servers:
                # The host alone: a URL's path or query may carry a key.
                host = _host(tools.config.url)
                seen[host] = seen.get(host, 0) + 1
                label = host if seen[host] == 1 else f"{host}#{seen[host]}"
                # No connection to speak of: up while its spec is read and its tools offered.
                watched.append(_Server("openapi", label, _offering(tools)))
        self._now.servers = tuple(watched)

    def _where(self, chat_id: str) -> tuple[str, ...]:
        platform = next(
            (name for prefix, name in self._platforms if chat_id.startswith(prefix)),
            HTTP_PLATFORM,
        )
        return (platform, chat_id) if self.settings.per_chat else (platform,)


def _tokens(count: object) -> int:
    """A reported token count fit for a counter: 0 unless a non-negative int."""
    if isinstance(count, bool) or not isinstance(count, int):
        return 0
    return max(count, 0)


@dataclass(frozen=True, slots=True)
class _Server:
    kind: ServerKind
    name: str
    state: Callable[[], ServerState]


def _connected(server: McpServerTools) -> Callable[[], ServerState]:
    return lambda: server.state


def _offering(tools: AbstractToolset) -> Callable[[], ServerState]:
    return lambda: "up" if len(tools) else "down"


def _host(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or "?"
    return f"{host}:{parts.port}" if parts.port else host


class _Now(Collector):
    """Gauges of the present, read on the event loop as a scrape asks (both /metrics
    routes run there), so that nothing has to keep them up to date."""

    def __init__(self) -> None:
        self.adapters: tuple[Adapter, ...] = ()
        self.queue: GroupCommit | None = None
        self.servers: tuple[_Server, ...] = ()

    def collect(self) -> Iterable[Metric]:
        depth = GaugeMetricFamily(
            "groupmate_write_queue_depth",
            "Writes queued for the database's next group commit, and writers waiting.",
        )
        if self.queue is not None:
            depth.add_metric([], self.queue.depth)
        yield depth
        adapters = GaugeMetricFamily(
            "groupmate_adapter_state",
            "1 for each chat platform's connection state now, 0 for its other states.",
            labels=("adapter", "state"),
        )
        for adapter in self.adapters:
            now = _adapter_state(adapter)
            for state in _ADAPTER_STATES:
                adapters.add_metric([adapter.name, state], 1.0 if state == now else 0.0)
        yield adapters
        servers = GaugeMetricFamily(
            "groupmate_tool_server_state",
            "1 for each MCP or OpenAPI server's state now, 0 for its other states.",
            labels=("kind", "server", "state"),
        )
        for server in self.servers:
            now_server = server.state()
            for server_state in _SERVER_STATES:
                value = 1.0 if server_state == now_server else 0.0
                servers.add_metric([server.kind, server.name, server_state], value)
        yield servers


def _adapter_state(adapter: Adapter) -> AdapterState | None:
    """The adapter's `status()["state"]`, or, for one that says only whether it is
    connected, that in the same words; None when its status could not be read."""
    try:
        status = adapter.status()
    except Exception:  # one adapter's bug must not cost the whole scrape
        log.exception("adapter %s: status() failed", adapter.name)
        return None
    state = status.get("state")
    if state in _ADAPTER_STATES:
        return cast(AdapterState, state)
    last_error = status.get("last_error")
    return connection_state(
        connected=bool(status.get("connected")),
        auth_failed=False,
        last_error=last_error if isinstance(last_error, str) else None,
    )
