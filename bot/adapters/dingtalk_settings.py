"""The `adapters.dingtalk` section, checked without loading dingtalk-stream."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from groupmate.function_calls.sections import OptionalText, Secret, Section, require


class DingTalkSettings(Section):
    """Present = enabled: a DingTalk app's robot, in Stream mode (the bot connects out)
    or by HTTP callbacks (DingTalk posts to /dingtalk/events, signed with the secret)."""

    client_id: str | None = None  # the app's Client ID (AppKey)
    client_secret: Secret = None  # its Client Secret (AppSecret): signs the callbacks too
    robot_code: OptionalText = None  # the robot's code; the Client ID when unset
    mode: Literal["stream", "http"] = "stream"
    api_url: str = "https://api.dingtalk.com"  # override for tests and proxies
    timeout: int = Field(30, gt=0, le=300)  # seconds one open API request may take

    @model_validator(mode="after")
    def _needs_the_app(self) -> DingTalkSettings:
        require(self, {"client_id": True, "client_secret": True})
        return self
