"""The `adapters.slack` section, checked without loading slack-bolt."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from groupmate.function_calls.sections import Secret, Section, require


class SlackSettings(Section):
    """Present = enabled: the Events API (Slack posts to /slack/events on `groupmate
    serve`) or Socket Mode (the bot connects out to Slack: no public address needed)."""

    bot_token: Secret = None
    """The app's bot token (`xoxb-…`). Required."""
    signing_secret: Secret = None
    """The app's signing secret, which checks every event Slack posts. Required in
    events mode."""
    mode: Literal["events", "socket"] = "events"
    """`events`: Slack posts to `/slack/events` on `groupmate serve` (a public address);
    `socket`: the bot connects out to Slack (Socket Mode, needs `app_token`)."""
    app_token: Secret = None
    """The app-level token (`xapp-…`). Required in socket mode."""
    api_url: str = "https://slack.com/api/"
    """The Web API's address; change it for tests and proxies."""
    timeout: int = Field(30, gt=0, le=300)
    """Seconds one Web API request may take."""

    @model_validator(mode="after")
    def _what_the_mode_needs(self) -> SlackSettings:
        needed = {
            "bot_token": True,
            "signing_secret": self.mode == "events",
            "app_token": self.mode == "socket",
        }
        require(self, needed, context=f" in {self.mode} mode")
        return self
