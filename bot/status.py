"""What is on, in words and without secrets: `groupmate check` prints it, and the
dashboard's status page shows it."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

from groupmate.bot.adapters import PLATFORMS
from groupmate.bot.config import Config
from groupmate.function_calls.search import SearchError
from groupmate.storage import head_revision

if TYPE_CHECKING:  # the plugin loader and the model client: `check` of a config with them
    from groupmate.function_calls.plugins import PluginStatus
    from groupmate.function_calls.server_info import ContextWindow


def config_lines(
    config: Config,
    storage_url: str,
    revision: str | None,
    *,
    context: ContextWindow | None = None,
) -> list[str]:
    """One line per part; `storage_url` is already free of passwords. `context` is the
    context window in effect, where it was asked of the server."""
    webhook = config.adapters.webhook
    return [
        f"bot: {config.bot.name}, time zone {config.bot.timezone}, "
        f"groups {', '.join(config.bot.groups.allow or ('*',))}, {len(config.bot.admins)} admin(s)",
        f"storage: {storage_url} (schema {revision}; code {head_revision()})",
        _llm_line(config, context),
        _search_line(config),
        _fetch_line(config),
        "console adapter: " + ("on" if config.adapters.console.enabled else "off"),
        *(f"{name} adapter: on" for name in PLATFORMS if getattr(config.adapters, name)),
        *_tool_servers(config),
        f"http adapter: {webhook.host}:{webhook.port}, "
        + ("token required" if webhook.token else "no token")
        + (", outbound webhook set" if webhook.outbound_url else ", no outbound webhook"),
    ]


def _llm_line(config: Config, context: ContextWindow | None) -> str:
    """The model, and the settings its requests go out with (the defaults included)."""
    llm = config.llm
    if not llm.enabled:
        return "llm: off (offline commands only; set OPENAI_API_KEY or llm.base_url)"
    temperature = "the server's" if llm.temperature is None else f"{llm.temperature:g}"
    if context is not None:
        window = f"{context.tokens} tokens ({context.source})"
    elif llm.context_tokens is not None:
        window = f"{llm.context_tokens} tokens (llm.context_tokens)"
    else:
        window = "asked of the server at startup"
    where = _without_userinfo(llm.base_url) if llm.base_url else "the OpenAI API"
    return (
        f"llm: {llm.model} at {where}, tools {llm.tool_mode}; "
        f"temperature {temperature}, up to {llm.max_output_tokens} output tokens, "
        f"context {window}, warm-up {'on' if llm.warm_up else 'off'}"
    )


def model_warning(config: Config, served: Sequence[str] | None) -> str | None:
    """What is wrong with llm.model for the server at llm.base_url, which lists `served`
    (None: it did not say), or None. A model name the server does not know fails every
    request on servers that check it (Ollama, LM Studio, vLLM); llama.cpp's answers any."""
    llm = config.llm
    if not llm.base_url or (served is not None and llm.model in served):
        return None
    where = _without_userinfo(llm.base_url)
    if "model" not in llm.model_fields_set:
        problem = f"llm.model is not set, so requests to {where} name {llm.model}, OpenAI's model"
    elif served is not None:
        problem = f"the server at {where} does not list llm.model {llm.model}"
    else:
        return None  # set, and the server did not say what it has
    if served:
        return f"{problem}; it offers: {', '.join(served)}. Set llm.model to one of them"
    if served is not None:
        return f"{problem}, and it lists no models. Set llm.model to the model it runs"
    return f"{problem}. Set llm.model to the model the server runs"


def _without_userinfo(url: str) -> str:
    """`http://user:secret@host/v1` as `http://***@host/v1`: shown on the dashboard."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


def _search_line(config: Config) -> str:
    search = config.search
    if not search.enabled:
        return "search: off"
    providers = ", ".join(settings.label() for settings in search.providers)
    limit = (
        f"{search.per_chat_per_hour} per chat an hour" if search.per_chat_per_hour else "no limit"
    )
    return f"search: {providers}; cache {search.cache_ttl:g} s; {limit}"


def _fetch_line(config: Config) -> str:
    fetch = config.search.fetch
    if not fetch.enabled:
        return "link reading: off"
    allowed = ", ".join(fetch.allow_hosts) or "none"
    return (
        f"link reading: on (up to {fetch.max_bytes:,} bytes, {fetch.max_redirects} redirects; "
        f"internal hosts allowed: {allowed})"
    )


async def probe_search(config: Config, query: str = "groupmate") -> list[str]:
    """One line per search provider: whether it answers a test query now."""
    lines = []
    for settings in config.search.providers:
        provider = settings.provider(config.search.max_results)
        began = time.perf_counter()
        try:
            answer = await provider.search(query)
        except SearchError as exc:
            lines.append(f"search {settings.name}: does not answer: {exc}")
        else:
            took = (time.perf_counter() - began) * 1000
            found = f"{len(answer.sources)} results" if answer.sources else "an answer"
            lines.append(f"search {settings.name}: answers ({found} in {took:.0f} ms)")
        finally:
            await provider.aclose()
    return lines


def _tool_servers(config: Config) -> list[str]:
    """The MCP and OpenAPI servers, by name and transport (never their env or headers)."""
    servers = config.mcp.enabled()
    listed = ", ".join(f"{name} ({server.kind})" for name, server in servers.items())
    lines = [f"mcp servers: {listed or 'none'}"]
    if config.mcp.serve.chat_id:
        lines.append(f"mcp serve: acting in {config.mcp.serve.chat_id}")
    if config.openapi.servers:
        urls = ", ".join(server.url for server in config.openapi.servers)
        lines.append(f"openapi servers: {urls}")
    return lines


def plugin_lines(statuses: Sequence[PluginStatus]) -> list[str]:
    """One line per plugin: its state, version and tools, or why it did not load."""
    lines = []
    for status in statuses:
        version = f" {status.version}" if status.version else ""
        head = f"plugin {status.name}{version} ({status.module}): {status.state}"
        if status.error:
            lines.append(f"{head}: {status.error}")
        elif status.tools:
            lines.append(f"{head}, tools {', '.join(status.tools)}")
        else:
            lines.append(head)
    return lines
