"""The Telegram Bot API over httpx: one call per method, 429s honoured, the token kept
out of logs and errors, and the HTML the adapter sends (text mentions, escaping).

The token is part of every request URL (`/bot<token>/sendMessage`), and httpx logs each
request's URL at INFO: a redacting filter on its loggers keeps the token out of any log.
"""

from __future__ import annotations

import asyncio
import html
import logging
import re
from collections.abc import Sequence
from typing import Any

import httpx

from storage import Member

log = logging.getLogger(__name__)

# Telegram counts a message's length after parsing the markup.
MESSAGE_LIMIT = 4096
_MAX_RETRY_AFTER = 60.0  # longer waits are the reminder engine's job (it retries later)
_RATE_LIMIT_ATTEMPTS = 5


class _Redactor(logging.Filter):
    """Replaces every registered secret in a record's message before any handler sees it."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        redacted = message
        for secret in self.secrets:
            redacted = redacted.replace(secret, "<token>")
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


_REDACTOR = _Redactor()
for _name in ("httpx", "httpcore"):
    logging.getLogger(_name).addFilter(_REDACTOR)


class TelegramError(Exception):
    """The Bot API answered `ok: false`, or could not be reached (`error_code` 0).

    The message names the method and Telegram's description, never the URL or token.
    """

    def __init__(self, method: str, description: str, error_code: int = 0) -> None:
        super().__init__(f"{method}: {description}")
        self.error_code = error_code
        self.retry_after: float | None = None

    @property
    def transient(self) -> bool:
        """Worth retrying soon: no answer, or the server's own fault. (429s are waited
        out by `call_patiently`; one it gave up on asks for a longer wait.)"""
        return self.error_code == 0 or self.error_code >= 500


class TelegramApi:
    """Calls Bot API methods; `base` is like "https://api.telegram.org"."""

    def __init__(self, token: str, base: str, *, timeout: float = 30.0) -> None:
        _REDACTOR.secrets.add(token)
        self._client = httpx.AsyncClient(
            base_url=f"{base.rstrip('/')}/bot{token}/", timeout=timeout
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def call(
        self, method: str, payload: dict[str, Any], *, read_for: float | None = None
    ) -> Any:
        """The method's `result`; raises TelegramError. `read_for` overrides the read
        timeout (a long poll holds the answer back on purpose)."""
        options: dict[str, Any] = {} if read_for is None else {"timeout": read_for}
        try:
            response = await self._client.post(method, json=payload, **options)
            body = response.json()
        except httpx.HTTPError as exc:
            # `from None`: httpx's exceptions carry the request, and with it the token.
            raise TelegramError(method, f"network error ({type(exc).__name__})") from None
        except ValueError:
            raise TelegramError(method, "not JSON", response.status_code) from None
        if not isinstance(body, dict):
            raise TelegramError(method, "unexpected answer", response.status_code)
        if body.get("ok") is True:
            return body.get("result")
        error = TelegramError(
            method, str(body.get("description", "refused")), int(body.get("error_code", 0) or 0)
        )
        parameters = body.get("parameters")
        if isinstance(parameters, dict) and "retry_after" in parameters:
            error.retry_after = float(parameters["retry_after"])
        raise error

    async def call_patiently(self, method: str, payload: dict[str, Any]) -> Any:
        """`call`, waiting out 429s as Telegram asks (up to a minute each)."""
        for attempt in range(_RATE_LIMIT_ATTEMPTS):
            try:
                return await self.call(method, payload)
            except TelegramError as exc:
                wait = exc.retry_after
                if exc.error_code != 429 or wait is None or wait > _MAX_RETRY_AFTER:
                    raise
                if attempt == _RATE_LIMIT_ATTEMPTS - 1:
                    raise
                log.info("telegram %s: rate limited, waiting %.0fs", method, wait)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")


def user_number(user_id: str) -> int | None:
    """12345 for "tg:12345"; None for an id from another platform."""
    number = user_id.removeprefix("tg:")
    return int(number) if number.lstrip("-").isdigit() else None


def render_html(text: str, people: Sequence[Member]) -> str:
    """`text` as Telegram HTML: everything escaped, and each "@name" of `people` a text
    mention (a link to the user, which notifies them even without a username)."""
    links: dict[str, int] = {}
    for person in people:
        number = user_number(person.user_id)
        if person.name and number is not None:
            links.setdefault(f"@{person.name.lstrip('@')}", number)
    if not links:
        return html.escape(text, quote=False)
    names = sorted(links, key=len, reverse=True)  # "@Al" must not cut "@Alice" short
    pattern = re.compile("(?:" + "|".join(map(re.escape, names)) + r")(?!\w)")
    out: list[str] = []
    position = 0
    for match in pattern.finditer(text):
        out.append(html.escape(text[position : match.start()], quote=False))
        number = links[match.group()]
        out.append(f'<a href="tg://user?id={number}">{html.escape(match.group())}</a>')
        position = match.end()
    out.append(html.escape(text[position:], quote=False))
    return "".join(out)


def entity_text(text: str, offset: int, length: int) -> str:
    """The part of `text` an entity covers; Telegram counts in UTF-16 code units."""
    units = text.encode("utf-16-le")
    return units[2 * offset : 2 * (offset + length)].decode("utf-16-le", errors="replace")


def replace_spans(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """`text` with each (UTF-16 offset, length, replacement) applied."""
    units = text.encode("utf-16-le")
    out = bytearray()
    position = 0
    for offset, length, replacement in sorted(spans):
        out += units[position : 2 * offset] + replacement.encode("utf-16-le")
        position = 2 * (offset + length)
    out += units[position:]
    return out.decode("utf-16-le", errors="replace")
