"""The `adapters.onebot` section: the reverse WebSocket a OneBot v11 client dials."""

from __future__ import annotations

from pydantic import Field

from groupmate.function_calls.sections import Secret, Section


class OneBotSettings(Section):
    """Present = enabled: OneBot v11 reverse WebSocket on the HTTP server."""

    path: str = "/onebot/v11/ws"
    """The WebSocket path on `groupmate serve` the OneBot client (NapCat, Lagrange)
    connects to: `ws://<host>:<port><path>`."""
    access_token: Secret = None
    """The token the client must send. Unset: only clients on this machine may
    connect."""
    timeout: float = Field(10, gt=0)
    """Seconds to wait for the client's answer to a send."""
