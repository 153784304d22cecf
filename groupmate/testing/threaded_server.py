"""Run an ASGI app with uvicorn in a background thread on a free port (of 127.0.0.1, or
of `host`: 0.0.0.0 for a container to reach)."""

from __future__ import annotations

import threading
import time

import uvicorn
from starlette.types import ASGIApp


class ThreadedServer:
    """One ASGI app served in a daemon thread; `port` is where, once started."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self, port: int = 0, host: str = "127.0.0.1") -> int:
        """Serve on `host`:`port` (0: a free port); returns the port once it listens, or
        raises RuntimeError when it did not start within 10 seconds."""
        config = uvicorn.Config(self.app, host=host, port=port, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("test server did not start")
            time.sleep(0.01)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self.port

    def stop(self) -> None:
        """Ask the server to exit and wait for it (10 seconds at most)."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
