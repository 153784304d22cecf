"""The Telegram Bot API through python-telegram-bot's `telegram.Bot`: its errors named
by method, 429s waited out, and the token kept out of logs and errors.

The token is part of every request URL (`/bot<token>/sendMessage`), which httpx logs at
INFO and PTB at DEBUG (PTB's InvalidToken even quotes it): a redacting filter on their
loggers, and on every message this module builds, keeps the token out.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TypeVar

import telegram
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError
from telegram.request import HTTPXRequest
from telegram.warnings import PTBDeprecationWarning

from groupmate.storage.exceptions import GroupmateError

log = logging.getLogger(__name__)

T = TypeVar("T")

# Telegram counts a message's length after parsing the markup.
MESSAGE_LIMIT = 4096
_MAX_RETRY_AFTER = 60.0  # longer waits are the reminder engine's job (it retries later)
_RATE_LIMIT_ATTEMPTS = 5
_DESCRIPTION_LIMIT = 200  # PTB quotes a non-JSON answer (a proxy's error page) whole
# PTB's defaults (5 s reads, 1 s for a pooled connection) would turn a slow sendMessage
# into a retry, and so maybe a duplicate message.
_TIMEOUT = 30.0
_POLL_MARGIN = 10.0  # a long poll's read timeout is its own timeout plus this


class _Redactor(logging.Filter):
    """Replaces every registered secret in a record's message before any handler sees it."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "<token>")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = self.redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_REDACTOR = _Redactor()


def new_client(token: str, api_base: str) -> tuple[telegram.Bot, tuple[HTTPXRequest, ...]]:
    """A Bot for the API at `api_base` (like "https://api.telegram.org"), and its requests:
    the caller shuts those down itself, as Bot.shutdown() skips a Bot never initialized."""
    _prepare(token)  # before telegram.Bot, which logs its URL
    # One long poll at a time (and stop()'s confirming one after it): 2 connections.
    requests = (_request(_TIMEOUT), _request(_POLL_MARGIN, connections=2))
    client = telegram.Bot(
        token,
        base_url=f"{api_base.rstrip('/')}/bot",
        request=requests[0],
        get_updates_request=requests[1],
    )
    return client, requests


def _request(read_timeout: float, *, connections: int = 256) -> HTTPXRequest:
    return HTTPXRequest(
        connections,
        read_timeout=read_timeout,
        connect_timeout=_TIMEOUT,
        write_timeout=_TIMEOUT,
        pool_timeout=_TIMEOUT,
    )


def _prepare(token: str) -> None:
    """Process-wide setup before a telegram.Bot is made: `token` kept out of the logs of
    httpx, httpcore and PTB from now on, and one PTB warning silenced."""
    # PTB 22 warns on every 429 (building its RetryAfter reads the attribute) that
    # `retry_after` will become a timedelta: `_seconds` takes either.
    warnings.filterwarnings(
        "ignore", message=r".*attribute `retry_after`", category=PTBDeprecationWarning
    )
    _REDACTOR.secrets.add(token)
    # A logger's filters see only its own records, not its children's ("telegram.Bot",
    # "httpcore.http11"): every logger of theirs gets one. They exist once imported.
    names = [*logging.root.manager.loggerDict, "httpx", "httpcore", "telegram"]
    for name in names:
        if name.partition(".")[0] in ("httpx", "httpcore", "telegram"):
            logging.getLogger(name).addFilter(_REDACTOR)  # a no-op when already there


class ApiError(GroupmateError):
    """A Bot API call failed; the message names the method and the cause, never the token."""

    def __init__(self, method: str, error: TelegramError) -> None:
        # PTB counts 400s as NetworkErrors too; those are final.
        self.transient = isinstance(error, NetworkError) and not isinstance(error, BadRequest)
        self.retry_after = _seconds(error) if isinstance(error, RetryAfter) else None
        description = _REDACTOR.redact(error.message)[:_DESCRIPTION_LIMIT]
        if self.transient:
            description = f"network error ({description})"
        super().__init__(f"{method}: {description}")


def _seconds(error: RetryAfter) -> float:
    wait = error.retry_after  # an int in PTB 22, a timedelta in a later major version
    return wait.total_seconds() if isinstance(wait, timedelta) else float(wait)


async def call(method: str, request: Callable[[], Awaitable[T]], *, patient: bool = False) -> T:
    """`request()`'s result; raises ApiError. `patient` waits out 429s as Telegram asks
    (up to a minute each), making the request again."""
    attempts = _RATE_LIMIT_ATTEMPTS if patient else 1
    for attempt in range(attempts):
        try:
            return await request()
        except TelegramError as exc:
            error = ApiError(method, exc)
        # Raised outside the `except`, without PTB's error as its context: the httpx error
        # underneath carries the request, and with it the token.
        wait = error.retry_after
        if wait is None or wait > _MAX_RETRY_AFTER or attempt == attempts - 1:
            raise error
        log.info("telegram %s: rate limited, waiting %.0fs", method, wait)
        await asyncio.sleep(wait)
    raise AssertionError("unreachable")


def user_number(user_id: str) -> int | None:
    """12345 for "tg:12345"; None for an id from another platform."""
    number = user_id.removeprefix("tg:")
    return int(number) if number.lstrip("-").isdigit() else None
