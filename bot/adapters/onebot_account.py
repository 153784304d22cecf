"""One connected OneBot account: its socket, and the action calls awaiting an answer,
matched by `echo`, each with a timeout so a silent implementation cannot hang a send."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from starlette.websockets import WebSocket

from groupmate.storage import SendError, utc_now


class Account:
    """One connected QQ account: its socket and the action calls awaiting an answer."""

    def __init__(self, self_id: str, socket: WebSocket) -> None:
        self.self_id = self_id
        self.socket = socket
        self.since = utc_now()
        self.pending: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.lock = asyncio.Lock()  # one frame at a time on the socket

    async def call(self, action: str, params: dict[str, Any], echo: str, wait: float) -> Any:
        """Run an action and return its `data`; SendError when refused or unanswered."""
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[echo] = answer
        try:
            async with self.lock:
                await self.socket.send_json({"action": action, "params": params, "echo": echo})
            async with asyncio.timeout(wait):
                response = await answer
        except TimeoutError:
            raise SendError(f"OneBot account {self.self_id}: no answer to {action}") from None
        except Exception:  # the socket closed under us, in whichever way the server says it
            raise SendError(f"OneBot account {self.self_id}: disconnected") from None
        finally:
            self.pending.pop(echo, None)
        if response.get("status") == "failed" or response.get("retcode", 0) != 0:
            raise SendError(
                f"OneBot account {self.self_id}: {action} failed "
                f"(retcode {response.get('retcode')})"
            )
        return response.get("data")

    def abandon(self) -> None:
        for answer in self.pending.values():
            if not answer.done():
                answer.set_exception(SendError(f"OneBot account {self.self_id}: disconnected"))


async def close_quietly(socket: WebSocket, code: int = 1000) -> None:
    with contextlib.suppress(Exception):  # already closed by the other side
        await socket.close(code=code)
