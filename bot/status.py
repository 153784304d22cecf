"""What is on, in words and without secrets: `groupmate check` prints it, and the
dashboard's status page shows it."""

from __future__ import annotations

from bot.adapters import PLATFORMS
from bot.config import Config
from storage import head_revision


def config_lines(config: Config, storage_url: str, revision: str | None) -> list[str]:
    """One line per part; `storage_url` is already free of passwords."""
    webhook = config.adapters.webhook
    llm = config.llm
    return [
        f"bot: {config.bot.name}, time zone {config.bot.timezone}, "
        f"groups {', '.join(config.bot.groups.allow)}, {len(config.bot.admins)} admin(s)",
        f"storage: {storage_url} (schema {revision}; code {head_revision()})",
        "llm: "
        + (
            f"{llm.model} at {llm.base_url or 'the OpenAI API'}, tools {llm.tool_mode}"
            if llm.enabled
            else "off (offline commands only; set OPENAI_API_KEY or llm.base_url)"
        ),
        "search: "
        + (f"{config.search.provider} ({config.search.model})" if config.search.enabled else "off"),
        "console adapter: " + ("on" if config.adapters.console.enabled else "off"),
        *(f"{name} adapter: on" for name in PLATFORMS if getattr(config.adapters, name)),
        *_tool_servers(config),
        f"http adapter: {webhook.host}:{webhook.port}, "
        + ("token required" if webhook.token else "no token")
        + (", outbound webhook set" if webhook.outbound_url else ", no outbound webhook"),
    ]


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
