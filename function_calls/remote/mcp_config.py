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

    model_config = ConfigDict(extra="allow", frozen=True, use_attribute_docstrings=True)

    command: str | None = None
    """The program that runs a stdio server (`uvx`, `npx`). This or `url` is required."""
    args: tuple[str, ...] = ()
    """Its arguments."""
    env: dict[str, SecretStr] = Field(default_factory=dict)
    """Its environment, besides PATH, HOME, USER, SHELL, TERM and LOGNAME: none of
    groupmate's own variables reach it. Never logged."""
    cwd: str | None = None
    """The folder it runs in. Unset: groupmate's own."""
    url: str | None = None
    """The address of a server reached over HTTP (streamable HTTP, or legacy SSE for a
    path ending in /sse). This or `command` is required."""
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    """Headers sent to a `url` server (`Authorization: Bearer ...`). Never logged."""
    transport: McpTransport | None = Field(
        default=None, validation_alias=AliasChoices("transport", "type")
    )
    """`stdio`, `http` or `sse` (also spelled `streamable-http`, `streamable_http`,
    `streamableHttp`; the key may be `type`). Unset: stdio for a `command`, else from
    the URL."""
    tools: ToolFilter = ToolFilter()
    """Which of its tools to offer, by the server's own names: `allow` and `deny` lists
    of names or globs; a plain list is the allow list."""
    admin_only: bool = False
    """Offer its tools to chat admins (and in private chats) only."""
    scope: Scope = "both"
    """Offer its tools in `group` chats only, `private` chats only, or `both`."""
    timeout: PositiveFloat = DEFAULT_MCP_TIMEOUT
    """Seconds one call may take before the model is told it timed out."""
    prefix: str | None = None
    """Put before each tool's name, at most 40 letters, digits, `_` or `-`; `""`: the
    tools keep their own names. Unset: the server's name and `__` (`time__`)."""
    pass_context: bool = False
    """Send the chat and the sender (ids, names, time zone) to the server with each
    call, in `_meta`."""
    disabled: bool = False
    """Keep it listed but do not start it."""

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

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    """MCP servers by name, in the `mcpServers` shape of Claude Desktop and Cursor, or
    the path of such a JSON file (relative to the config's folder). Keys other clients
    use (`autoApprove`, ...) are ignored, with a log line."""
    startup_timeout: PositiveFloat = 20.0
    """Seconds startup waits for the servers' first tool lists; a slower server's tools
    appear when it is ready."""

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
