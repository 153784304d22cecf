"""The `adapters.dingtalk` section, checked without loading dingtalk-stream."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from groupmate.function_calls.sections import OptionalText, Secret, Section, require


class DingTalkSettings(Section):
    """Present = enabled: a DingTalk app's robot, in Stream mode (the bot connects out)
    or by HTTP callbacks (DingTalk posts to /dingtalk/events, signed with the secret)."""

    client_id: str | None = None
    """The app's Client ID (AppKey). Required."""
    client_secret: Secret = None
    """The app's Client Secret (AppSecret); it also checks the signature of HTTP
    callbacks. Required."""
    robot_code: OptionalText = None
    """The robot's code. Unset: the Client ID, which it usually is."""
    card_template_id: OptionalText = None
    """The interactive card template for reminders with buttons (Done, Snooze, Remind me
    too), built in DingTalk's card builder (docs/platforms/dingtalk.md). Unset, or in
    `http` mode: reminders are text, and replies ("done", "snooze 10m") act on them."""
    mode: Literal["stream", "http"] = "stream"
    """`stream`: the bot connects out to DingTalk (no public address); `http`: DingTalk
    posts to `/dingtalk/events` on `groupmate serve`."""
    api_url: str = "https://api.dingtalk.com"
    """The open API's address; change it for tests and proxies."""
    timeout: int = Field(30, gt=0, le=300)
    """Seconds one open API request may take."""

    @model_validator(mode="after")
    def _needs_the_app(self) -> DingTalkSettings:
        require(self, {"client_id": True, "client_secret": True})
        return self
