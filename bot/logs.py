"""Log lines carry a correlation id per handled message; secrets never reach them."""

from __future__ import annotations

import contextvars
import logging
import random

correlation_id: contextvars.ContextVar[str] = contextvars.ContextVar("correlation_id", default="-")


class _Correlation(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.correlation = correlation_id.get()
        return True


def new_correlation_id() -> str:
    # Not uuid4: its read of the OS's randomness lets the database threads take the GIL
    # from the event loop, once per message (and ids for log lines need no such source).
    value = f"{random.getrandbits(48):012x}"
    correlation_id.set(value)
    return value


def setup_logging(level: str) -> None:
    handler = logging.StreamHandler()
    handler.addFilter(_Correlation())
    handler.setFormatter(
        logging.Formatter(
            "%(asctime)s level=%(levelname)s logger=%(name)s cid=%(correlation)s %(message)s"
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The HTTP clients log full URLs, which can carry tokens; matrix-nio logs whole
    # response bodies (a login's access token) at DEBUG and every event it sees at INFO.
    # Request lines carry URLs, and an MCP URL may hold a key: these stay at WARNING.
    for noisy in (
        "httpx",
        "httpcore",
        "httpx2",
        "httpcore2",
        "mcp",
        "telegram",
        "openai",
        "apscheduler",
        "nio",
    ):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
