"""The `adapters.matrix` section, checked without loading matrix-nio."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from groupmate.function_calls.sections import Secret, Section


class MatrixSettings(Section):
    """Present = enabled. An access token, or a password used once to log in."""

    homeserver: str
    user_id: str
    access_token: Secret = None
    password: Secret = None
    allow_rooms: list[str] = Field(default_factory=list)  # empty: every invite
    msgtype: Literal["m.text", "m.notice"] = "m.text"
    # Events per room in one sync; a longer gap is fetched page by page, up to max_gap.
    timeline_limit: int = Field(100, ge=1, le=1000)
    max_gap: int = Field(500, ge=0)

    @model_validator(mode="after")
    def _needs_a_login(self) -> MatrixSettings:
        if self.access_token is None and self.password is None:
            raise ValueError("access_token or password required (unset)")
        return self
