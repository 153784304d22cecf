"""A real HTTP server that receives the bot's outbound webhook calls."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from groupmate.testing.threaded_server import ThreadedServer


@dataclass(frozen=True)
class Received:
    body: dict[str, Any]
    headers: dict[str, str]


class Receiver:
    """POST /hook records the call; `fail_next` answers 503 that many times first."""

    def __init__(self) -> None:
        self.calls: list[Received] = []
        self.fail_next = 0
        # The platform's id of each accepted message, when set.
        self.reply_message_id: str | None = None
        self._lock = threading.Lock()
        self._runner: ThreadedServer | None = None
        self.port = 0
        self.app = Starlette(routes=[Route("/hook", self._hook, methods=["POST"])])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def _hook(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            if self.fail_next > 0:
                self.fail_next -= 1
                return JSONResponse({"error": "busy"}, status_code=503)
            self.calls.append(Received(body, dict(request.headers)))
        if self.reply_message_id is not None:
            return JSONResponse({"ok": True, "message_id": self.reply_message_id})
        return JSONResponse({"ok": True})

    def wait_for(self, count: int, within: float = 10.0) -> list[Received]:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.calls) >= count:
                    return list(self.calls)
            time.sleep(0.05)
        raise AssertionError(f"expected {count} outbound calls, got {len(self.calls)}")

    def start(self, host: str = "127.0.0.1") -> None:
        self._runner = ThreadedServer(self.app)
        self.port = self._runner.start(host=host)

    def stop(self) -> None:
        if self._runner is not None:
            self._runner.stop()
