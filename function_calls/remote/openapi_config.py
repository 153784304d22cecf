"""`openapi.servers`: each OpenAPI tool server's settings (function_calls.remote.openapi
makes its tools). Apart from the tools so that reading a config imports no HTTP client."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, SecretStr, field_validator

from groupmate.function_calls.toolsets import ToolFilter
from groupmate.function_calls.vocabulary import Scope


class OpenApiServerConfig(BaseModel):
    """One OpenAPI tool server."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    url: str
    """The server's address; each operation of its spec becomes a tool. Required."""
    spec: str | None = None
    """The OpenAPI spec: a file path or URL. Unset: `<url>/openapi.json`."""
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    """Headers sent with every request, to the server's own origin only (an API key);
    never logged."""
    tools: ToolFilter = ToolFilter()
    """Which operations to offer, by operationId: `allow` and `deny` lists of names or
    globs; a plain list is the allow list."""
    prefix: str = ""
    """Put before each tool's name (`time_`); empty: the operationId alone."""
    admin_only: bool = False
    """Offer its tools to chat admins (and in private chats) only."""
    scope: Scope = "both"
    """Offer its tools in `group` chats only, `private` chats only, or `both`."""
    timeout: PositiveFloat = 30.0
    """Seconds one call may take before the model is told it timed out."""

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        if urlsplit(value).scheme not in ("http", "https"):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    def spec_location(self) -> str:
        return self.spec or f"{self.url}/openapi.json"

    def plain_headers(self) -> dict[str, str]:
        return {key: value.get_secret_value() for key, value in self.headers.items()}


class OpenApiSettings(BaseModel):
    """`openapi:` in config.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    servers: tuple[OpenApiServerConfig, ...] = ()
    """The OpenAPI tool servers. A server that is down at startup offers nothing until
    its spec can be read (tried every minute)."""
