"""A loopback port for a server a test starts, or for one it wants nobody at."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A loopback port nobody listens on: the server started next binds it (or, left
    alone, connecting to it is refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
