"""DingTalk's open API as the DingTalk adapter uses it: the app's access token, the
robot's sends (session webhook, group and single-chat proactive sends), rate limits, and
the signature of HTTP callbacks.

dingtalk-stream carries REST helpers too, but they are blocking `requests` calls without
a timeout, bound to api.dingtalk.com by an environment variable read at import, and
answer None to every failure (a 429 and a refused secret look the same). These are the
same calls, async, to the config's `api_url`, in DingTalk's published shapes: JSON
bodies, the `x-acs-dingtalk-access-token` header, `{"code", "message"}` refusals (the
session webhook: `{"errcode", "errmsg"}`), and 429 with Retry-After.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
import re
import time
from typing import Any

import httpx

from bot.config import DingTalkSettings

log = logging.getLogger(__name__)

_TOKEN_MARGIN = 300.0  # seconds before its expiry a token is renewed
_RATE_RETRIES = 4  # waits on one request's rate limit before it fails (then the
_RATE_WAIT_MAX = 60.0  # reminder engine retries later); the longest wait honoured
_SIGN_WINDOW_MS = 3_600_000  # DingTalk's callback timestamps may be an hour off
# DingTalk's throttling answers besides a 429: the open API's QPS refusals (HTTP 403),
# and the session webhook's "send too fast" (errcode 130101) in an HTTP 200.
_THROTTLE_CODES = ("Forbidden.AccessDenied.QpsLimit", "Throttling")
_WEBHOOK_THROTTLED = 130101
_MENTION = re.compile(r"@\S+")
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


class DingTalkError(Exception):
    """A refused or failed request; its text names the call and DingTalk's code only
    (never a URL: session webhooks carry their session in the query)."""

    def __init__(self, call: str, status: int, code: str) -> None:
        super().__init__(f"{call}: {code}")
        self.status = status
        self.code = code


class CredentialsRefused(DingTalkError):
    """DingTalk refused the app's Client ID/Secret: waiting won't fix them."""


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

    async def token(self) -> str:
        """The app's access token (POST /v1.0/oauth2/accessToken), renewed before it
        expires; raises CredentialsRefused when DingTalk refuses the app's secret."""
        async with self._token_lock:
            if self._token is not None and self._token[1] > time.monotonic():
                return self._token[0]
            body = {"appKey": self._app_key, "appSecret": self._app_secret}
            try:
                answer = await self._post("oauth2/accessToken", "/v1.0/oauth2/accessToken", body)
            except DingTalkError as exc:
                if exc.status in (400, 401, 403):
                    raise CredentialsRefused("oauth2/accessToken", exc.status, exc.code) from None
                raise
            token = answer.get("accessToken")
            if not isinstance(token, str) or not token:
                raise DingTalkError("oauth2/accessToken", 200, "no accessToken in the answer")
            lifetime = float(answer.get("expireIn") or 7200)
            self._token = (token, time.monotonic() + max(lifetime - _TOKEN_MARGIN, 60.0))
            return token

    async def group_send(self, open_conversation_id: str, text: str) -> str:
        """A robot message to a group (shows "@name" as text: this API can't @ anyone);
        DingTalk's processQueryKey."""
        body = {
            "robotCode": self.robot_code,
            "openConversationId": open_conversation_id,
            **_sample_text(text),
        }
        answer = await self._call("groupMessages/send", "/v1.0/robot/groupMessages/send", body)
        return str(answer.get("processQueryKey") or "")

    async def private_send(self, user_id: str, text: str) -> str:
        """A robot message to one person's single chat with the robot."""
        body = {"robotCode": self.robot_code, "userIds": [user_id], **_sample_text(text)}
        call = "oToMessages/batchSend"
        answer = await self._call(call, "/v1.0/robot/oToMessages/batchSend", body)
        if user_id in (answer.get("invalidStaffIdList") or ()):
            raise DingTalkError(call, 200, "invalidStaffId")
        if user_id in (answer.get("flowControlledStaffIdList") or ()):
            raise DingTalkError(call, 200, "flowControlled")  # the engine retries later
        return str(answer.get("processQueryKey") or "")

    async def webhook_send(self, url: str, text: str, at_ids: list[str]) -> None:
        """A text message through a message's session webhook (no token: the URL's
        session is the credential). `at_ids` are notified: staff ids go in atUserIds,
        DingTalk ids ("$:LWCP…") of people outside the org in atDingtalkIds."""
        staff = [i for i in at_ids if not i.startswith("$:")]
        outside = [i for i in at_ids if i.startswith("$:")]
        body: dict[str, Any] = {"msgtype": "text", "text": {"content": text}}
        if at_ids:
            body["at"] = {"atUserIds": staff, "atDingtalkIds": outside, "isAtAll": False}
        await self._post("sessionWebhook", url, body, absolute=True)

    async def _call(self, call: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """An open API call with the access token; a token DingTalk calls invalid (it
        was revoked or expired early) is renewed once."""
        for attempt in (1, 2):
            headers = {"x-acs-dingtalk-access-token": await self.token()}
            try:
                return await self._post(call, path, body, headers=headers)
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
    ) -> dict[str, Any]:
        url = path if absolute else self._base + path
        for attempt in range(_RATE_RETRIES + 1):
            try:
                response = await self._http.post(url, json=body, headers=headers)
            except httpx.HTTPError as exc:
                raise DingTalkError(call, 0, type(exc).__name__) from None
            answer = _json(response)
            wait = _throttled(response, answer, attempt)
            if wait is None:
                break
            if attempt == _RATE_RETRIES or wait > _RATE_WAIT_MAX:
                raise DingTalkError(call, response.status_code, "rate limited")
            log.warning("dingtalk: %s rate limited; waiting %.1fs", call, wait)
            await asyncio.sleep(wait)
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


def callback_sign(timestamp: str, secret: str) -> str:
    """DingTalk's `sign` header of an HTTP callback: base64(HMAC-SHA256 of
    "<timestamp>\\n<secret>", keyed with the app secret)."""
    digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256)
    return base64.b64encode(digest.digest()).decode()


def signed_by_dingtalk(timestamp: str | None, sign: str | None, secret: str) -> bool:
    """The callback's `timestamp` (ms) is within an hour of now and its `sign` is the
    app secret's."""
    if not timestamp or not sign or not timestamp.isdigit():
        return False
    if abs(time.time() * 1000 - int(timestamp)) > _SIGN_WINDOW_MS:
        return False
    return hmac.compare_digest(callback_sign(timestamp, secret), sign)


def fingerprint(conversation_id: str, text: str) -> str:
    """A stable id for a robot message: DingTalk gives none for what a robot sends
    (a session webhook answers `errcode 0`, the open API a processQueryKey), while a quote
    of the message carries its text. Mentions are left out: the robot writes
    "@<userId>", DingTalk shows "@Name"."""
    words = " ".join(_MENTION.sub(" ", text).split()).casefold()
    digest = hashlib.sha256(f"{conversation_id}\n{words}".encode()).hexdigest()
    return f"dt-{digest[:24]}"
