"""The `adapters.lark` section, checked without loading lark-oapi."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from groupmate.function_calls.sections import OptionalText, Secret, Section, require


class LarkSettings(Section):
    """Present = enabled: a Lark/Feishu custom app's bot, with events by webhook (Lark
    posts to /lark/events on `groupmate serve`) or by the long connection (the bot
    connects out: no public address needed; one process only)."""

    app_id: str | None = None
    """The custom app's App ID (`cli_…`). Required."""
    app_secret: Secret = None
    """The app's App Secret. Required."""
    mode: Literal["webhook", "websocket"] = "webhook"
    """`webhook`: Lark posts events to `/lark/events` on `groupmate serve`; `websocket`:
    the bot connects out (no public address; run one process only)."""
    verification_token: Secret = None
    """The Verification Token in every event Lark posts. Required in webhook mode."""
    encrypt_key: Secret = None
    """The Encrypt Key, when one is set in the developer console: events then come
    encrypted and signed."""
    domain: Literal["feishu", "lark"] = "feishu"
    """`feishu`: open.feishu.cn (China); `lark`: open.larksuite.com."""
    api_url: OptionalText = None
    """The open API's address, instead of the one `domain` names: for tests and proxies."""
    timeout: int = Field(30, gt=0, le=300)
    """Seconds one open API request may take."""

    @model_validator(mode="after")
    def _what_the_mode_needs(self) -> LarkSettings:
        needed = {"app_id": True, "app_secret": True, "verification_token": self.mode == "webhook"}
        require(self, needed, context=f" in {self.mode} mode")
        return self
