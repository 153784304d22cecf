"""The `adapters.lark` section, checked without loading lark-oapi."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from groupmate.function_calls.sections import OptionalText, Secret, Section, require


class LarkSettings(Section):
    """Present = enabled: a Lark/Feishu custom app's bot, with events by webhook (Lark
    posts to /lark/events on `groupmate serve`) or by the long connection (the bot
    connects out: no public address needed; one process only)."""

    app_id: str | None = None  # cli_…
    app_secret: Secret = None
    mode: Literal["webhook", "websocket"] = "webhook"
    verification_token: Secret = None  # webhook mode: in every event Lark posts
    encrypt_key: Secret = None  # when set in the console: events AES-256-CBC and signed
    domain: Literal["feishu", "lark"] = "feishu"  # open.feishu.cn or open.larksuite.com
    api_url: OptionalText = None  # overrides `domain`: tests and proxies
    timeout: int = Field(30, gt=0, le=300)  # seconds one open API request may take

    @model_validator(mode="after")
    def _what_the_mode_needs(self) -> LarkSettings:
        needed = {"app_id": True, "app_secret": True, "verification_token": self.mode == "webhook"}
        require(self, needed, context=f" in {self.mode} mode")
        return self
