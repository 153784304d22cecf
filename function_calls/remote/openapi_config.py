"""`openapi.servers`: each OpenAPI tool server's settings (function_calls.remote.openapi
makes its tools). Apart from the tools so that reading a config imports no HTTP client."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, SecretStr, field_validator

from groupmate.function_calls.toolsets import ToolFilter
from groupmate.function_calls.vocabulary import Scope


class OpenApiServerConfig(BaseModel):
    """One OpenAPI tool server."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str
    spec: str | None = None  # a path or URL; default <url>/openapi.json
    headers: dict[str, SecretStr] = Field(default_factory=dict)
    tools: ToolFilter = ToolFilter()
    prefix: str = ""
    admin_only: bool = False
    scope: Scope = "both"
    timeout: PositiveFloat = 30.0

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

    model_config = ConfigDict(extra="forbid", frozen=True)

    servers: tuple[OpenApiServerConfig, ...] = ()
