"""The `adapters.telegram` section, checked without loading the Telegram library."""

from __future__ import annotations

from pydantic import Field, model_validator

from groupmate.function_calls.sections import OptionalText, Secret, Section, require


class TelegramSettings(Section):
    """Present = enabled. Long polling unless `webhook_url` is set."""

    token: Secret = None
    """The bot's token from @BotFather. Required."""
    api_base: str = "https://api.telegram.org"
    """The Bot API's address; change it for a local Bot API server or a proxy."""
    webhook_url: OptionalText = None
    """The public HTTPS address Telegram posts updates to, served by `groupmate serve`.
    Unset: the bot long-polls Telegram instead (no public address needed)."""
    webhook_secret: Secret = None
    """The secret Telegram sends with every update to the webhook; required with
    `webhook_url`."""
    poll_timeout: float = Field(25.0, gt=0, le=50)
    """Seconds one long poll (getUpdates) waits for news; Telegram allows up to 50."""

    @model_validator(mode="after")
    def _needs_the_token(self) -> TelegramSettings:
        require(self, {"token": True})
        if self.webhook_url and self.webhook_secret is None:
            raise ValueError("webhook_secret required with webhook_url (unset)")
        return self
