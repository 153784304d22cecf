"""The `adapters.onebot` section: the reverse WebSocket a OneBot v11 client dials."""

from __future__ import annotations

from pydantic import Field

from groupmate.function_calls.sections import Secret, Section


class OneBotSettings(Section):
    """Present = enabled: OneBot v11 reverse WebSocket on the HTTP server."""

    path: str = "/onebot/v11/ws"
    access_token: Secret = None
    timeout: float = Field(10, gt=0)  # seconds to wait for the answer to a send action
