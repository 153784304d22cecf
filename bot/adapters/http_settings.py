"""The `adapters.webhook` section: the HTTP API's address, its token and its limits."""

from __future__ import annotations

from urllib.parse import urlsplit

from pydantic import Field, field_validator

from groupmate.function_calls.sections import OptionalText, Secret, Section


class WebhookSettings(Section):
    enabled: bool = False
    """Says that this config is meant for `groupmate serve`, which serves the HTTP API,
    the web playground and the dashboard whatever this says; no other command serves
    them."""
    host: str = "127.0.0.1"
    """The address to listen on. Another than 127.0.0.1, ::1 or localhost needs `token`
    (or `groupmate serve --insecure-no-auth`)."""
    port: int = Field(8080, ge=0, le=65535)
    """The port to listen on; 0: any free one (`groupmate serve` prints which)."""
    outbound_url: OptionalText = None
    """Reminders for chats no configured platform serves (your own integration's, sent
    through `POST /v1/messages`) are POSTed here as JSON. Unset: they wait, due, until
    a process with it set runs; /healthz and the dashboard say so."""
    public_url: OptionalText = None
    """The address people and calendar apps reach this server at from outside, e.g.
    `https://bot.example.com` (a reverse proxy's): the links `/calendar` makes start with
    it (calendar feeds need `pip install "groupmate[calendar]"`). Unset: `/calendar` says
    that it is, and makes no link."""
    token: Secret = None
    """The bearer token `/v1`, `/mcp` and `/metrics` require (`Authorization: Bearer
    <token>`). The template reads it from `${GROUPMATE_API_TOKEN}`, the container image
    from `${GROUPMATE_TOKEN}`. Unset: no token is asked for, `sender_is_admin` of
    `POST /v1/messages` is ignored, and only a loopback address may be served."""
    max_body_bytes: int = Field(64 * 1024, ge=1024)
    """The largest request body accepted, in bytes; a larger one is refused with 413."""

    @field_validator("public_url")
    @classmethod
    def _absolute(cls, value: str | None) -> str | None:
        # A link without its scheme or host would reach no calendar app: refused at start.
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc or parts.query:
            raise ValueError("public_url is the address with http:// or https:// and no query")
        return value.rstrip("/")
