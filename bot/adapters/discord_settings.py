"""The `adapters.discord` section, checked without loading discord.py."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from groupmate.function_calls.sections import Secret, Section, require


class DiscordSettings(Section):
    """Present = enabled: the bot user of a Discord application, over the gateway."""

    token: Secret = None
    """The bot token (Developer Portal, Bot). Required."""
    api_url: str = "https://discord.com/api/v10"
    """The REST API's address, ending in `/api/v<N>`; change it for tests and proxies."""
    message_content: bool = True
    """Ask for the privileged message content intent (enable it in the Developer Portal,
    Bot, Privileged Gateway Intents), needed to read messages that don't mention the bot
    (the prefix, replies). Off: mentions and direct messages still work."""
    # At least 30: discord.py's floor for a 429 wait.
    timeout: int = Field(30, gt=0, le=300)
    """Seconds one request may take. A send waits out a rate limit of up to this many
    seconds (at least 30); a longer one fails the send, and a reminder is retried later."""

    @model_validator(mode="after")
    def _needs_the_token(self) -> DiscordSettings:
        require(self, {"token": True})
        return self

    @field_validator("api_url")
    @classmethod
    def _a_versioned_base(cls, value: str) -> str:
        # discord.py appends paths like /channels/1/messages to it: the base must name
        # the API version, as Discord's does.
        if not re.fullmatch(r"https?://[^\s/]+(/[^\s]*)?/api/v\d+/?", value):
            raise ValueError("api_url must end in /api/v<N>, e.g. https://discord.com/api/v10")
        return value
