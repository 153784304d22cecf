"""The `adapters.discord` section, checked without loading discord.py."""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from groupmate.function_calls.sections import Secret, Section, require


class DiscordSettings(Section):
    """Present = enabled: the bot user of a Discord application, over the gateway."""

    token: Secret = None  # the bot token (Developer Portal, Bot)
    api_url: str = "https://discord.com/api/v10"  # REST base; override for tests and proxies
    # Needed to read messages that don't mention the bot (the prefix, replies); without
    # it (Developer Portal, Bot, Privileged Gateway Intents) mentions and DMs still work.
    message_content: bool = True
    # Seconds a send may wait out a 429 (at least 30, discord.py's floor; a longer one
    # fails the send and the reminder is retried later); a send is given up after that
    # wait plus this again.
    timeout: int = Field(30, gt=0, le=300)

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
