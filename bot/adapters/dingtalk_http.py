"""DingTalk's HTTP-callback mode: what makes a post to /dingtalk/events DingTalk's.

DingTalk signs a callback's `timestamp` header (ms) only, not its body: `sign` is
base64(HMAC-SHA256 of "<timestamp>\\n<secret>", keyed with the app secret). A captured
pair of headers would let anyone post any body until the timestamp leaves DingTalk's
one-hour window, so a pair is taken once: DingTalk signs each post (a re-push too) at
the time it sends it. What this can't stop: a pair captured before groupmate saw it.
"""

from __future__ import annotations

import base64
import hashlib
import heapq
import hmac
import json
import logging
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

log = logging.getLogger(__name__)
SIGN_WINDOW_MS = 3_600_000  # DingTalk's callback timestamps may be an hour off
MAX_BODY = 256 * 1024


def callback_sign(timestamp: str, secret: str) -> str:
    """DingTalk's `sign` header of an HTTP callback."""
    digest = hmac.new(secret.encode(), f"{timestamp}\n{secret}".encode(), hashlib.sha256)
    return base64.b64encode(digest.digest()).decode()


def signed_by_dingtalk(timestamp: str | None, sign: str | None, secret: str) -> bool:
    """The callback's `timestamp` (ms) is within an hour of now and its `sign` is the
    app secret's."""
    if not timestamp or not sign or not timestamp.isdigit():
        return False
    if abs(time.time() * 1000 - int(timestamp)) > SIGN_WINDOW_MS:
        return False
    return hmac.compare_digest(callback_sign(timestamp, secret), sign)


class UsedSignatures:
    """The (timestamp, sign) pairs already taken, until their timestamp is out of the
    window (then the signature check refuses them anyway)."""

    def __init__(self) -> None:
        self._used: set[tuple[str, str]] = set()
        self._by_time: list[tuple[int, str, str]] = []

    def seen(self, timestamp: str, sign: str) -> bool:
        return (timestamp, sign) in self._used

    def take(self, timestamp: str, sign: str) -> None:
        horizon = time.time() * 1000 - SIGN_WINDOW_MS
        while self._by_time and self._by_time[0][0] < horizon:
            _, old_stamp, old_sign = heapq.heappop(self._by_time)
            self._used.discard((old_stamp, old_sign))
        self._used.add((timestamp, sign))
        heapq.heappush(self._by_time, (int(timestamp), timestamp, sign))


async def body_within(request: Request, limit: int) -> bytes | None:
    """The request's body, or None when it is larger than `limit` bytes: refused by its
    Content-Length before reading, else as soon as more has come."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)


async def callback_payload(request: Request, secret: str, used: UsedSignatures) -> Any:
    """A callback's JSON payload, or the Response that refuses it: 401 unsigned (or
    signed by headers already used), 413 too large, 400 not JSON. Nothing is read
    before the signature is checked."""
    stamp, sign = request.headers.get("timestamp"), request.headers.get("sign")
    if stamp is None or sign is None or not signed_by_dingtalk(stamp, sign, secret):
        log.warning("dingtalk: a callback without a valid signature refused (401)")
        return Response(status_code=401)
    if used.seen(stamp, sign):
        log.warning("dingtalk: a callback with used signature headers refused (401)")
        return Response(status_code=401)
    body = await body_within(request, MAX_BODY)
    if body is None:
        log.warning("dingtalk: a callback over %d bytes refused (413)", MAX_BODY)
        return Response(status_code=413)
    try:
        data = json.loads(body)
    except ValueError:
        log.warning("dingtalk: a callback that is not JSON refused (400)")
        return Response(status_code=400)
    used.take(stamp, sign)  # only once read whole: a post cut off may come again
    return data
