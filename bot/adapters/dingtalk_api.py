"""DingTalk's open API as the DingTalk adapter uses it: the app's access token, the
Stream connection's ticket, the robot's sends (session webhook, group and single-chat
proactive sends), and rate limits (HTTP callbacks' signatures: dingtalk_http).

dingtalk-stream carries REST helpers too (and opens its Stream connection by one), but
they are blocking `requests` calls without a timeout, bound to api.dingtalk.com by an
environment variable read at import, and answer None to every failure (a 429 and a
refused secret look the same). These are the same calls, async, to the config's
`api_url`, in DingTalk's published shapes: JSON bodies, the `x-acs-dingtalk-access-token`
header, `{"code", "message"}` refusals (the session webhook: `{"errcode", "errmsg"}`),
and throttling: 429 with Retry-After, or 403 `Forbidden.AccessDenied.QpsLimit…` without.

A call made with `wait=False` (a reminder's send: the reminder engine retries it with
its own backoff, and cancels a send after 30 s) fails at once on a rate limit instead of
sleeping, so that its one request is all the time it takes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

import httpx
from dingtalk_stream.version import VERSION_STRING

from groupmate.bot.adapters.dingtalk_settings import DingTalkSettings
from groupmate.storage.exceptions import GroupmateError

log = logging.getLogger(__name__)

_TOKEN_MARGIN = 300.0  # seconds before its expiry a token is renewed
_RATE_RETRIES = 4  # waits on one answer's rate limit before it fails
_RATE_WAIT_MAX = 60.0  # the longest wait honoured
# DingTalk's throttling answers besides a 429: the open API's QPS refusals (HTTP 403),
# and the session webhook's "send too fast" (errcode 130101) in an HTTP 200.
_THROTTLE_CODES = ("Forbidden.AccessDenied.QpsLimit", "Throttling")
_WEBHOOK_THROTTLED = 130101
RATE_LIMITED = "rate limited"
# What DingTalk answers when it refuses the app itself (waiting won't help): a bad
# Client ID/Secret at oauth2/accessToken (400 invalidClientId/invalidClientSecret) and
# at gateway/connections/open (401 authFailed).
_REFUSED_CODES = ("invalidClient", "authFailed")
_URL_SECRET = re.compile(r"((?:session|ticket)=)[^\s&'\"]+")
# Loggers that write request lines with their URLs (httpx at INFO, the others at DEBUG).
_URL_LOGGERS = ("httpx", "websockets.client", "urllib3.connectionpool")


class _Redactor(logging.Filter):
    """Masks the credentials DingTalk puts in URLs: a session webhook's `session` (it
    lets anyone post to the chat until it expires) and a Stream `ticket`."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "session=" in message or "ticket=" in message:
            record.msg, record.args = _URL_SECRET.sub(r"\1…", message), ()
        return True


_REDACTOR = _Redactor()


def redact_urls_in_logs() -> None:
    """Process-wide: the HTTP and WebSocket clients' request lines without those
    credentials (a logger's filters see its own records only, so each gets one)."""
    for name in _URL_LOGGERS:
        logging.getLogger(name).addFilter(_REDACTOR)  # a no-op when already there


class DingTalkError(GroupmateError):
    """A refused or failed request; its text names the call and DingTalk's code only
    (never a URL: session webhooks carry their session in the query)."""

    def __init__(self, call: str, status: int, code: str) -> None:
        super().__init__(f"{call}: {code}")
        self.status = status
        self.code = code


class CredentialsRefused(DingTalkError):
    """DingTalk refused the app's Client ID/Secret: waiting won't fix them."""


def _refused(exc: DingTalkError) -> bool:
    """Whether DingTalk refused the app's credentials (not: throttled, or failed)."""
    if exc.code == RATE_LIMITED:
        return False
    return exc.code.startswith(_REFUSED_CODES) or exc.status == 401


@dataclass(frozen=True, slots=True)
class Ticket:
    """Where a Stream connection goes: DingTalk's endpoint and its one-time ticket."""

    endpoint: str
    ticket: str


class OpenApi:
    """One app's calls, with its access token cached until shortly before it expires."""

    def __init__(self, settings: DingTalkSettings) -> None:
        assert settings.client_id is not None and settings.client_secret is not None
        self._base = settings.api_url.rstrip("/")
        self._app_key = settings.client_id
        self._app_secret = settings.client_secret.get_secret_value()
        self.robot_code = settings.robot_code or settings.client_id
        self._http = httpx.AsyncClient(timeout=settings.timeout)
        self._token: tuple[str, float] | None = None
        self._token_lock = asyncio.Lock()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def token(self, *, wait: bool = True) -> str:
        """The app's access token (POST /v1.0/oauth2/accessToken), renewed before it
        expires; raises CredentialsRefused when DingTalk refuses the app's secret (a
        throttled or failed request is a DingTalkError: tried again later)."""
        async with self._token_lock:
            if self._token is not None and self._token[1] > time.monotonic():
                return self._token[0]
            body = {"appKey": self._app_key, "appSecret": self._app_secret}
            call = "oauth2/accessToken"
            try:
                answer = await self._post(call, "/v1.0/oauth2/accessToken", body, wait=wait)
            except DingTalkError as exc:
                if _refused(exc):
                    raise CredentialsRefused(call, exc.status, exc.code) from None
                raise
            token = answer.get("accessToken")
            if not isinstance(token, str) or not token:
                raise DingTalkError(call, 200, "no accessToken in the answer")
            try:
                lifetime = float(answer.get("expireIn") or 7200)
            except (TypeError, ValueError):
                lifetime = 7200.0  # DingTalk's documented lifetime
            self._token = (token, time.monotonic() + max(lifetime - _TOKEN_MARGIN, 60.0))
            return token

    async def open_stream(self, topics: list[str], local_ip: str) -> Ticket:
        """A Stream connection's endpoint and ticket for the CALLBACK `topics` (POST
        /v1.0/gateway/connections/open, the body dingtalk-stream sends); CredentialsRefused
        when DingTalk refuses the Client ID/Secret. No token: they are in the body."""
        call = "gateway/connections/open"
        body = {
            "clientId": self._app_key,
            "clientSecret": self._app_secret,
            "subscriptions": [{"type": "CALLBACK", "topic": topic} for topic in topics],
            "ua": f"dingtalk-sdk-python/v{VERSION_STRING}-union",
            "localIp": local_ip,
        }
        try:
            answer = await self._post(call, "/v1.0/gateway/connections/open", body, wait=False)
        except DingTalkError as exc:
            if _refused(exc):
                raise CredentialsRefused(call, exc.status, exc.code) from None
            raise
        endpoint, ticket = answer.get("endpoint"), answer.get("ticket")
        if not isinstance(endpoint, str) or not endpoint.startswith(("wss://", "ws://")):
            raise DingTalkError(call, 200, "no endpoint in the answer")
        if not isinstance(ticket, str) or not ticket:
            raise DingTalkError(call, 200, "no ticket in the answer")
        return Ticket(endpoint, ticket)

    async def group_send(self, open_conversation_id: str, text: str, *, wait: bool) -> None:
        """A robot message to a group (shows "@name" as text: this API can't @ anyone)."""
        body = {
            "robotCode": self.robot_code,
            "openConversationId": open_conversation_id,
            **_sample_text(text),
        }
        await self._call("groupMessages/send", "/v1.0/robot/groupMessages/send", body, wait)

    async def private_send(self, user_ids: list[str], text: str, *, wait: bool) -> list[str]:
        """A robot message to each person's single chat with the robot (staff ids only),
        in one request; those DingTalk did not take (an invalid or flow-controlled id)."""
        body = {"robotCode": self.robot_code, "userIds": user_ids, **_sample_text(text)}
        call = "oToMessages/batchSend"
        answer = await self._call(call, "/v1.0/robot/oToMessages/batchSend", body, wait)
        refused: list[str] = []
        for key in ("invalidStaffIdList", "flowControlledStaffIdList"):
            listed = answer.get(key)
            refused += [str(i) for i in listed] if isinstance(listed, list) else []
        return [i for i in user_ids if i in refused]

    async def webhook_send(
        self, url: str, text: str, at_ids: list[str], *, wait: bool, everyone: bool = False
    ) -> None:
        """A text message through a message's session webhook (no token: the URL's
        session is the credential). `at_ids` are notified: staff ids go in atUserIds,
        DingTalk ids ("$:LWCP…") of people outside the org in atDingtalkIds; with
        `everyone`, the whole group too (isAtAll)."""
        staff = [i for i in at_ids if not i.startswith("$:")]
        outside = [i for i in at_ids if i.startswith("$:")]
        body: dict[str, Any] = {"msgtype": "text", "text": {"content": text}}
        if at_ids or everyone:
            body["at"] = {"atUserIds": staff, "atDingtalkIds": outside, "isAtAll": everyone}
        await self._post("sessionWebhook", url, body, absolute=True, wait=wait)

    async def card_send(self, body: dict[str, Any], *, wait: bool) -> None:
        """An interactive card created and delivered in one call (dingtalk_cards.py)."""
        path = "/v1.0/card/instances/createAndDeliver"
        await self._call("card/createAndDeliver", path, body, wait)

    async def card_update(self, body: dict[str, Any]) -> None:
        """A delivered card's data changed (PUT /v1.0/card/instances)."""
        await self._call("card/update", "/v1.0/card/instances", body, True, method="PUT")

    async def _call(
        self, call: str, path: str, body: dict[str, Any], wait: bool, *, method: str = "POST"
    ) -> dict[str, Any]:
        """An open API call with the access token; a token DingTalk calls invalid (it
        was revoked or expired early) is renewed once."""
        for attempt in (1, 2):
            headers = {"x-acs-dingtalk-access-token": await self.token(wait=wait)}
            try:
                return await self._post(call, path, body, headers=headers, wait=wait, method=method)
            except DingTalkError as exc:
                if attempt == 2 or not (exc.status == 401 or "InvalidAuthentication" in exc.code):
                    raise
                self._token = None
        raise AssertionError("unreachable")

    async def _post(
        self,
        call: str,
        path: str,
        body: dict[str, Any],
        *,
        headers: dict[str, str] | None = None,
        absolute: bool = False,
        wait: bool,
        method: str = "POST",
    ) -> dict[str, Any]:
        url = path if absolute else self._base + path
        for attempt in range(_RATE_RETRIES + 1):
            try:
                response = await self._http.request(method, url, json=body, headers=headers)
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                raise DingTalkError(call, 0, type(exc).__name__) from None
            answer = _json(response)
            pause = _throttled(response, answer, attempt)
            if pause is None:
                break
            if not wait or attempt == _RATE_RETRIES or pause > _RATE_WAIT_MAX:
                raise DingTalkError(call, response.status_code, RATE_LIMITED)
            log.warning("dingtalk: %s rate limited; waiting %.1fs", call, pause)
            await asyncio.sleep(pause)
        if response.status_code >= 400:
            code = str(answer.get("code") or f"HTTP {response.status_code}")
            raise DingTalkError(call, response.status_code, code)
        errcode = answer.get("errcode")
        if errcode not in (None, 0, "0"):
            raise DingTalkError(call, response.status_code, f"errcode {errcode}")
        return answer


def _sample_text(text: str) -> dict[str, str]:
    """The proactive APIs' message: a template key and its parameters as a JSON string."""
    return {"msgKey": "sampleText", "msgParam": json.dumps({"content": text}, ensure_ascii=False)}


def _json(response: httpx.Response) -> dict[str, Any]:
    try:
        answer = response.json()
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


def _throttled(response: httpx.Response, answer: dict[str, Any], attempt: int) -> float | None:
    """Seconds to wait when DingTalk says "too fast" (its Retry-After, else a doubling
    backoff); None when it did not."""
    code = str(answer.get("code") or "")
    limited = (
        response.status_code == 429
        or code.startswith(_THROTTLE_CODES)
        or answer.get("errcode") == _WEBHOOK_THROTTLED
    )
    if not limited:
        return None
    try:
        return max(float(response.headers.get("Retry-After", "")), 0.0)
    except ValueError:
        return float(2**attempt)
