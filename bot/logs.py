"""Log lines carry a correlation id per handled message; secrets never reach them.

Lines are text by default, or one JSON object each (`logging.format: json`) for a log
collector: its fields are `time`, `level`, `logger`, `message`, `correlation_id`, and
`exception` (the traceback as one string) when there is one.
"""

from __future__ import annotations

import contextvars
import json
import logging
import random
from datetime import UTC, datetime
from typing import Any, Literal, TextIO

correlation_id: contextvars.ContextVar[str] = contextvars.ContextVar("correlation_id", default="-")

# How a log line is written (`logging.format`).
LogFormat = Literal["text", "json"]


class _Correlation(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.correlation = correlation_id.get()
        return True


class _JsonLines(logging.Formatter):
    """One JSON object per line. Only the fields named in the module's docstring: a
    record's `extra` values could be anything (a request body), so none are copied."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "correlation_id": getattr(record, "correlation", "-"),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # Escaped newlines keep a traceback on its one line.
        return json.dumps(line, ensure_ascii=False, default=str)


def new_correlation_id() -> str:
    # Not uuid4: its read of the OS's randomness lets the database threads take the GIL
    # from the event loop, once per message (and ids for log lines need no such source).
    value = f"{random.getrandbits(48):012x}"
    correlation_id.set(value)
    return value


# The libraries whose own log lines stay at WARNING, whatever the level.
QUIET_LOGGERS = (
    "httpx",
    "httpcore",
    "httpx2",
    "httpcore2",
    "mcp",
    "telegram",
    "openai",
    "apscheduler",
    "nio",
    "slack_sdk",
    "slack_bolt",
    "discord",
    "dingtalk_stream",
)


def setup_logging(level: str, format: LogFormat = "text", *, stream: TextIO | None = None) -> None:
    """The root logger's one handler (on stderr unless `stream` is given)."""
    handler = logging.StreamHandler(stream)
    handler.addFilter(_Correlation())
    if format == "json":
        handler.setFormatter(_JsonLines())
    else:
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
    # So do the other platform SDKs: at DEBUG they log requests and gateway payloads
    # whose redaction is theirs to keep, not ours to trust.
    for noisy in QUIET_LOGGERS:
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
