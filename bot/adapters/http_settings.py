"""The `adapters.webhook` section: the HTTP API's address, its token and its limits."""

from __future__ import annotations

from pydantic import Field

from groupmate.function_calls.sections import OptionalText, Secret, Section


class WebhookSettings(Section):
    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = Field(8080, ge=0, le=65535)
    outbound_url: OptionalText = None
    token: Secret = None
    max_body_bytes: int = Field(64 * 1024, ge=1024)
