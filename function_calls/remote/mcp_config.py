"""`mcp.servers`: the `mcpServers` shape that Claude Desktop, Cursor and Qwen-Agent use.

Each server is a `command` (with `args`, `env`, `cwd`) run over stdio, or a `url`
reached over streamable HTTP (or legacy SSE), with optional `headers`. groupmate's own
options sit beside them: `tools`, `admin_only`, `scope`, `timeout`, `prefix`,
`pass_context`. Keys other clients use for their own purposes (`autoApprove`,
`alwaysAllow`, …) are ignored, with a log line that names them.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    SecretStr,
    field_validator,
    model_validator,
)

from groupmate.function_calls.remote.naming import MAX_TOOL_NAME, default_prefix
from groupmate.function_calls.toolsets import ToolFilter
from groupmate.function_calls.vocabulary import Scope

log = logging.getLogger(__name__)

McpTransport = Literal["stdio", "http", "sse"]
DEFAULT_MCP_TIMEOUT = 30.0

# The spellings other clients' configs use, lower-cased, for `type` or `transport`.
_TRANSPORT_SPELLINGS: dict[str, McpTransport] = {
    "stdio": "stdio",
    "streamable-http": "http",
    "streamable_http": "http",
    "streamablehttp": "http",
    "http": "http",
    "sse": "sse",
}
_PREFIX = re.compile(r"[A-Za-z0-9_-]{0,40}")


class McpServerConfig(BaseModel):
    """One MCP server. Secrets in `env` and `headers` are kept as SecretStr, so that no
    repr or log line shows them."""

    model_config = ConfigDict(extra="allow", frozen=True)

    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, SecretStr] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    transport: McpTransport | None = Field(
        default=None, validation_alias=AliasChoices("transport", "type")
    )
    tools: ToolFilter = ToolFilter()
    admin_only: bool = False
    scope: Scope = "both"
    timeout: PositiveFloat = DEFAULT_MCP_TIMEOUT
    prefix: str | None = None
    pass_context: bool = False
    disabled: bool = False

    @field_validator("transport", mode="before")
    @classmethod
    def _spelling(cls, value: Any) -> Any:
        if isinstance(value, str):
            spelled = _TRANSPORT_SPELLINGS.get(value.strip().lower())
            if spelled is None:
                known = ", ".join(sorted(_TRANSPORT_SPELLINGS))
                raise ValueError(f"unknown transport {value!r}; use one of {known}")
            return spelled
        return value

    @field_validator("prefix")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        if value is not None and not _PREFIX.fullmatch(value):
            raise ValueError("use at most 40 ASCII letters, digits, '_' or '-'")
        return value

    @model_validator(mode="after")
    def _one_way_in(self) -> McpServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either `command` (stdio) or `url` (HTTP), not both or neither")
        if self.command is not None and self.transport not in (None, "stdio"):
            raise ValueError(f"`command` runs over stdio, not {self.transport}")
        if self.url is not None:
            if self.transport == "stdio":
                raise ValueError("a `url` is reached over HTTP; stdio needs a `command`")
            if urlsplit(self.url).scheme not in ("http", "https"):
                raise ValueError("`url` must start with http:// or https://")
        return self

    @property
    def kind(self) -> McpTransport:
        """stdio for a command; else the transport named, or streamable HTTP, or legacy
        SSE for a URL whose path ends in /sse (as Claude Desktop and Cursor guess)."""
        if self.command is not None:
            return "stdio"
        if self.transport is not None:
            return self.transport
        assert self.url is not None
        return "sse" if urlsplit(self.url).path.rstrip("/").endswith("/sse") else "http"

    def ignored_keys(self) -> list[str]:
        return sorted(self.model_extra or {})

    def prefix_for(self, server: str) -> str:
        return default_prefix(server) if self.prefix is None else self.prefix

    def plain_env(self) -> dict[str, str]:
        return {key: value.get_secret_value() for key, value in self.env.items()}

    def plain_headers(self) -> dict[str, str]:
        return {key: value.get_secret_value() for key, value in self.headers.items()}


class McpSettings(BaseModel):
    """`mcp:` in config.yaml. `servers` may also be the path of an `mcpServers` JSON
    file, which the config loader reads in."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    # How long startup waits for the servers' first tool lists; a server slower than
    # this joins when it is ready (its tools appear then).
    startup_timeout: PositiveFloat = 20.0

    @field_validator("servers", mode="before")
    @classmethod
    def _unwrap(cls, value: Any) -> Any:
        # A pasted `{"mcpServers": {...}}` works as well as its inner mapping.
        if isinstance(value, dict) and set(value) == {"mcpServers"}:
            return value["mcpServers"]
        return value

    @field_validator("servers")
    @classmethod
    def _names(cls, value: dict[str, McpServerConfig]) -> dict[str, McpServerConfig]:
        for name, server in value.items():
            if not name or len(server.prefix_for(name)) > MAX_TOOL_NAME // 2:
                raise ValueError(f"server name {name!r} is empty or too long for a tool prefix")
        return value

    def enabled(self) -> dict[str, McpServerConfig]:
        return {name: server for name, server in self.servers.items() if not server.disabled}
