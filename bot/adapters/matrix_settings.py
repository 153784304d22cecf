"""The `adapters.matrix` section, checked without loading matrix-nio."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from groupmate.function_calls.sections import Secret, Section


class MatrixSettings(Section):
    """Present = enabled. An access token, or a password used once to log in."""

    homeserver: str
    """The homeserver's address, e.g. `https://matrix.example.org`. Required."""
    user_id: str
    """The bot's account, e.g. `@groupmate:example.org`. Required."""
    access_token: Secret = None
    """The account's access token. This or `password` is required."""
    password: Secret = None
    """The account's password, used once to log in when there is no `access_token`."""
    allow_rooms: list[str] = Field(default_factory=list)
    """Room ids the bot joins when invited; empty: every invite is accepted."""
    msgtype: Literal["m.text", "m.notice"] = "m.text"
    """The type of the bot's messages; with `m.notice` clients show them as a bot's."""
    timeline_limit: int = Field(100, ge=1, le=1000)
    """Events per room in one sync; a longer gap is fetched page by page."""
    max_gap: int = Field(500, ge=0)
    """After downtime, missed events fetched per room (oldest first), at most."""

    @model_validator(mode="after")
    def _needs_a_login(self) -> MatrixSettings:
        if self.access_token is None and self.password is None:
            raise ValueError("access_token or password required (unset)")
        return self
