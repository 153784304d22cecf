"""Lark's open API through lark-oapi's client: the tenant token, rate limits, and the
few calls the adapter makes (send, reply, a message, a chat, its members, the bot).

lark-oapi's own token manager fetches the tenant token with blocking `requests` inside
the async calls (stalling the event loop for a whole request) and caches it
process-wide by app id, so a refused secret could hide behind a token an earlier client
got. This fetches it with the library's own request class and async transport instead,
keeps it per client, and hands it to each call (`enable_set_token`). The library retries
nothing: a 429 (or code 99991400) is waited out here for `x-ogw-ratelimit-reset`
seconds, and an expired token (99991663/99991668) is fetched again once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import lark_oapi as lark
from lark_oapi.api.im.v1 import (
    CreateMessageRequest,
    CreateMessageRequestBody,
    GetChatMembersRequest,
    GetChatRequest,
    GetMessageRequest,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
)
from lark_oapi.core.const import FEISHU_DOMAIN, LARK_DOMAIN
from lark_oapi.core.http import Transport
from lark_oapi.core.token import CreateSelfTenantTokenRequest, CreateTokenRequestBody

from groupmate.bot.adapters.lark_settings import LarkSettings
from groupmate.bot.config import ConfigError
from groupmate.storage.exceptions import GroupmateError

log = logging.getLogger(__name__)

RATE_LIMITED = 99991400
TOKEN_EXPIRED = (99991663, 99991668)  # invalid / expired tenant_access_token
_RATE_RETRIES = 5
_LONGEST_WAIT = 60.0  # seconds one rate-limit wait may take
_TOKEN_MARGIN = 300.0  # seconds before its expiry a token is fetched anew

Call = Callable[[Any, Any], Awaitable[Any]]


class LarkError(GroupmateError):
    """A refused or failed call: what, Lark's code (or the error's type), no secrets."""

    def __init__(self, what: str, code: int | str, status: int | None = None) -> None:
        self.what, self.code, self.status = what, code, status
        super().__init__(f"{what}: {code}" + (f" (HTTP {status})" if status else ""))

    @property
    def auth(self) -> bool:
        """The app id/secret were refused: waiting won't fix that."""
        return self.what == "tenant_access_token" and isinstance(self.code, int)


def base_url(settings: LarkSettings) -> str:
    """The open API's origin: api_url, else the domain's (Feishu in China, else Lark)."""
    if settings.api_url:
        return settings.api_url.rstrip("/")
    return str(FEISHU_DOMAIN if settings.domain == "feishu" else LARK_DOMAIN)


class LarkApi:
    """One app's calls, each with a fresh-enough tenant token and rate limits honoured."""

    def __init__(self, settings: LarkSettings) -> None:
        assert settings.app_id is not None and settings.app_secret is not None  # validated
        self.app_id = settings.app_id
        self._secret = settings.app_secret
        builder = lark.Client.builder().app_id(settings.app_id)
        builder = builder.app_secret(settings.app_secret.get_secret_value())
        try:
            builder = builder.domain(base_url(settings))
        except ValueError:  # the library takes an origin only, http:// for localhost only
            raise ConfigError(
                "adapters.lark.api_url: an origin like https://open.feishu.cn (no path; "
                "http:// only for localhost)"
            ) from None
        builder = builder.timeout(settings.timeout).enable_set_token(True)
        self.client = builder.log_level(lark.LogLevel.WARNING).build()
        quiet_library_log()
        self._token: tuple[str, float] | None = None  # the token, and when to renew it
        self._token_lock = asyncio.Lock()

    async def token(self) -> str:
        async with self._token_lock:
            if self._token is not None and self._token[1] > time.monotonic():
                return self._token[0]
            body = (
                CreateTokenRequestBody.builder()
                .app_id(self.app_id)
                .app_secret(self._secret.get_secret_value())
                .build()
            )
            request = CreateSelfTenantTokenRequest.builder().request_body(body).build()
            try:
                raw = await Transport.aexecute(self.client.config, request)
                answer = json.loads(raw.content)
            except (httpx.HTTPError, OSError, ValueError) as exc:
                raise LarkError("tenant_access_token", type(exc).__name__) from None
            code = answer.get("code") if isinstance(answer, dict) else None
            busy = raw.status_code >= 500 or raw.status_code == 429 or code == RATE_LIMITED
            if busy or not isinstance(code, int):
                raise LarkError("tenant_access_token", "unavailable", raw.status_code)
            if code != 0 or not answer.get("tenant_access_token"):
                raise LarkError("tenant_access_token", code, raw.status_code)
            expire = float(answer.get("expire") or 7200)
            renew = time.monotonic() + max(expire - _TOKEN_MARGIN, expire / 2)
            self._token = (str(answer["tenant_access_token"]), renew)
            return self._token[0]

    async def call(self, what: str, method: Call, request: Any) -> dict[str, Any]:
        """Lark's whole answer to `request` by `method` (code 0), rate limits waited out."""
        renewed = False
        for attempt in range(_RATE_RETRIES + 1):
            option = lark.RequestOption.builder().tenant_access_token(await self.token()).build()
            try:
                response = await method(request, option)
                answer = json.loads(response.raw.content)
            except (httpx.HTTPError, OSError, ValueError) as exc:
                raise LarkError(what, type(exc).__name__) from None
            status = int(response.raw.status_code)
            code = answer.get("code") if isinstance(answer, dict) else None
            if (status == 429 or code == RATE_LIMITED) and attempt < _RATE_RETRIES:
                wait = _reset_seconds(response.raw.headers)
                log.warning("lark: %s rate limited; waiting %.1fs", what, wait)
                await asyncio.sleep(wait)
                continue
            if code in TOKEN_EXPIRED and not renewed:
                self._token, renewed = None, True
                continue
            if code != 0:
                raise LarkError(what, code if isinstance(code, int) else "bad answer", status)
            return answer  # type: ignore[no-any-return]  # a dict: code was read from it
        raise LarkError(what, RATE_LIMITED, 429)

    async def bot_info(self) -> dict[str, Any]:
        """GET /open-apis/bot/v3/info: the bot's open_id and name (not in the typed API)."""
        request = (
            lark.BaseRequest.builder()
            .http_method(lark.HttpMethod.GET)
            .uri("/open-apis/bot/v3/info")
            .token_types({lark.AccessTokenType.TENANT})
            .build()
        )
        bot = (await self.call("bot info", self.client.arequest, request)).get("bot")
        return bot if isinstance(bot, dict) else {}

    async def send(
        self, chat_id: str, content: str, uuid: str | None, kind: str = "text"
    ) -> str | None:
        """A new message in the chat (`kind`: "text", or "interactive" for a card); Lark
        drops a repeat of `uuid` within an hour."""
        body = CreateMessageRequestBody.builder().receive_id(chat_id).msg_type(kind)
        body = body.content(content)
        if uuid is not None:
            body = body.uuid(uuid)
        request = (
            CreateMessageRequest.builder().receive_id_type("chat_id").request_body(body.build())
        ).build()
        answer = await self.call("im.message.create", self.client.im.v1.message.acreate, request)
        return _message_id(answer)

    async def reply(
        self, message_id: str, content: str, in_thread: bool, uuid: str, kind: str = "text"
    ) -> str | None:
        """A reply to the message (in its thread when `in_thread`); `uuid`, `kind` as in
        send."""
        body = ReplyMessageRequestBody.builder().msg_type(kind).content(content)
        body = body.reply_in_thread(in_thread).uuid(uuid)
        request = ReplyMessageRequest.builder().message_id(message_id)
        request = request.request_body(body.build())
        answer = await self.call(
            "im.message.reply", self.client.im.v1.message.areply, request.build()
        )
        return _message_id(answer)

    async def update_card(self, message_id: str, content: str) -> None:
        """The bot's card `message_id` made to read as `content` (a card's JSON)."""
        body = PatchMessageRequestBody.builder().content(content).build()
        request = PatchMessageRequest.builder().message_id(message_id).request_body(body).build()
        await self.call("im.message.patch", self.client.im.v1.message.apatch, request)

    async def message(self, message_id: str) -> dict[str, Any]:
        request = GetMessageRequest.builder().message_id(message_id).build()
        answer = await self.call("im.message.get", self.client.im.v1.message.aget, request)
        items = (answer.get("data") or {}).get("items") or [{}]
        return items[0] if isinstance(items[0], dict) else {}

    async def chat(self, chat_id: str) -> dict[str, Any]:
        request = GetChatRequest.builder().chat_id(chat_id).user_id_type("open_id").build()
        answer = await self.call("im.chat.get", self.client.im.v1.chat.aget, request)
        data = answer.get("data")
        return data if isinstance(data, dict) else {}

    async def members(self, chat_id: str) -> list[dict[str, Any]]:
        """Every member of the chat ({member_id: open_id, name}), all pages."""
        found: list[dict[str, Any]] = []
        page: str | None = None
        while True:
            request = GetChatMembersRequest.builder().chat_id(chat_id).member_id_type("open_id")
            request = request.page_size(100)
            if page:
                request = request.page_token(page)
            get = self.client.im.v1.chat_members.aget
            data = (await self.call("im.chat.members", get, request.build())).get("data") or {}
            found.extend(m for m in data.get("items") or [] if isinstance(m, dict))
            page = data.get("page_token")
            if not data.get("has_more") or not page:
                return found


def _message_id(answer: dict[str, Any]) -> str | None:
    data = answer.get("data")
    found = data.get("message_id") if isinstance(data, dict) else None
    return str(found) if found else None


def quiet_library_log() -> None:
    """lark-oapi's "Lark" logger prints to stdout by a handler of its own (outside
    groupmate's log format, and twice, as it propagates too): it only propagates now,
    with each URL's query redacted (the long connection's carries its access ticket)."""
    library = logging.getLogger("Lark")
    for handler in list(library.handlers):
        library.removeHandler(handler)
    if not any(isinstance(f, _NoUrlQueries) for f in library.filters):
        library.addFilter(_NoUrlQueries())


class _NoUrlQueries(logging.Filter):
    _QUERY = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s?#]*)\?\S*", re.IGNORECASE)

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        redacted = self._QUERY.sub(r"\1?…", text)
        if redacted != text:
            record.msg, record.args = redacted, ()
        return True


def _reset_seconds(headers: dict[str, str]) -> float:
    """How long Lark says to wait (x-ogw-ratelimit-reset, seconds); 1 s when unsaid."""
    lowered = {key.lower(): value for key, value in headers.items()}
    try:
        wait = float(lowered.get("x-ogw-ratelimit-reset", "1"))
    except ValueError:
        wait = 1.0
    return min(max(wait, 0.1), _LONGEST_WAIT)
