"""A local Slack Web API (the methods the adapter calls, in Slack's published shapes:
form or JSON bodies, a Bearer token, `{"ok": false, "error": ...}` refusals, 429 with
Retry-After) and signed Events API posts to the bot, on real sockets. Presses of Block Kit
buttons are `block_actions` payloads, posted form-encoded and signed to the
Interactivity Request URL or sent over the socket as `interactive` envelopes, shaped as
https://docs.slack.dev/reference/interaction-payloads/block_actions-payload shows them;
chat.update and chat.postEphemeral answer as Slack's Web API does."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import re
import threading
import time
from collections import deque
from typing import Any
from urllib.parse import parse_qs, urlencode

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from groupmate.testing.threaded_server import ThreadedServer

BOT_TOKEN = "xoxb-test-secret-token"
APP_TOKEN = "xapp-test-secret-app-token"
SIGNING_SECRET = "signing-s3cret"
BOT_USER = "UBOT"
TEAM = "T0001"
CHANNEL = "C0001"
USERS: dict[str, dict[str, Any]] = {
    "UALICE": {"id": "UALICE", "name": "alice", "profile": {"display_name": "Alice"}},
    "UBOB": {"id": "UBOB", "name": "bob", "profile": {"display_name": "Bob"}},
    "UADMIN": {
        "id": "UADMIN",
        "name": "ada",
        "is_admin": True,
        "profile": {"display_name": "Ada"},
    },
    BOT_USER: {"id": BOT_USER, "name": "groupmate", "is_bot": True, "profile": {}},
    # In the workspace, never seen by the bot; two people go by "Sam".
    "UCAROL": {"id": "UCAROL", "name": "carol", "profile": {"display_name": "Carol"}},
    "USAM1": {"id": "USAM1", "name": "sam.a", "profile": {"display_name": "Sam"}},
    "USAM2": {"id": "USAM2", "name": "sam.b", "profile": {"display_name": "Sam"}},
    "UGONE": {"id": "UGONE", "name": "gone", "deleted": True, "profile": {"display_name": "Gil"}},
    # In the workspace but not in the channel.
    "UDAVE": {"id": "UDAVE", "name": "dave", "profile": {"display_name": "Dave"}},
}
# The README's bot token scopes; Slack names a token's scopes on every Web API answer
# (the X-OAuth-Scopes header).
ALL_SCOPES = (
    "chat:write,users:read,channels:history,groups:history,im:history,mpim:history,"
    "channels:read,groups:read,reactions:read"
)
# An app that reads no channel: mentions (app_mention) and its DMs.
MENTION_SCOPES = "app_mentions:read,chat:write,users:read,im:history,channels:read"
IN_CHANNEL = ["UALICE", "UBOB", "UADMIN", BOT_USER, "UCAROL", "USAM1", "USAM2"]


class FakeSlack:
    """Records every Web API call; `posted()` are the chat.postMessage bodies."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.rate_limited = 0  # the next N chat.postMessage calls answer 429
        self.failing = 0  # the next N chat.postMessage calls fail (HTTP 500), none posted
        self.auth_down = 0  # the next N auth.test calls fail (HTTP 503)
        self.refused = 0  # calls with a token that is not the app's
        self.scopes: str | None = ALL_SCOPES  # None: answers without X-OAuth-Scopes
        self.slow: dict[str, float] = {}  # method -> seconds each of its answers takes
        self._lock = threading.Lock()
        self._ts = itertools.count(1)
        # Socket Mode: envelopes waiting to go out, and the acknowledgements that came in.
        self.outbox: deque[dict[str, Any]] = deque()
        self.acks: list[str] = []
        self.sockets = 0
        self.drops = 0  # open sockets to close (as when Slack's end goes away)
        self.server = ThreadedServer(
            Starlette(
                routes=[
                    Route("/api/{method}", self._scoped, methods=["GET", "POST"]),
                    WebSocketRoute("/socket", self._socket),
                ]
            )
        )

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/api/"

    def posted(self) -> list[dict[str, Any]]:
        return self.called("chat.postMessage")

    def called(self, method: str) -> list[dict[str, Any]]:
        """The bodies of the calls of `method`, in order."""
        with self._lock:
            return [body for name, body in self.calls if name == method]

    async def _scoped(self, request: Request) -> Response:
        response = await self._api(request)
        if self.scopes is not None:
            response.headers["X-OAuth-Scopes"] = self.scopes
        return response

    async def _api(self, request: Request) -> Response:
        method = request.path_params["method"]
        await asyncio.sleep(self.slow.get(method, 0.0))
        raw = await request.body()
        if request.headers.get("content-type", "").startswith("application/json"):
            body: dict[str, Any] = json.loads(raw or b"{}")
        else:  # a form body, or the query of a GET method (users.info)
            form = parse_qs(raw.decode()) if raw else parse_qs(request.url.query)
            body = {key: values[0] for key, values in form.items()}
        token = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
        if request.headers.get("authorization") != f"Bearer {token}":
            with self._lock:
                self.refused += 1
            return JSONResponse({"ok": False, "error": "invalid_auth"})
        with self._lock:
            if method == "auth.test" and self.auth_down > 0:
                self.auth_down -= 1
                return JSONResponse({"ok": False, "error": "service_unavailable"}, status_code=503)
            if method == "chat.postMessage" and self.failing > 0:
                self.failing -= 1
                return JSONResponse({"ok": False, "error": "fatal_error"}, status_code=500)
            if method == "chat.postMessage" and self.rate_limited > 0:
                self.rate_limited -= 1
                return JSONResponse(
                    {"ok": False, "error": "ratelimited"},
                    status_code=429,
                    headers={"Retry-After": "1"},
                )
            if method == "chat.postMessage":
                body["_ts"] = f"{int(time.time())}.{next(self._ts):06d}"  # the answer's ts
            self.calls.append((method, body))
        if method == "auth.test":
            return JSONResponse(
                {"ok": True, "user_id": BOT_USER, "bot_id": "B0001", "team_id": TEAM,
                 "team": "Test team", "user": "groupmate", "url": "https://test.slack.com/"}
            )  # fmt: skip
        if method == "apps.connections.open":
            return JSONResponse({"ok": True, "url": f"ws://127.0.0.1:{self.server.port}/socket"})
        if method == "users.list":  # two a page, as a cursor walks them
            everyone = list(USERS.values())
            start = int(body.get("cursor") or 0)
            page = everyone[start : start + 2]
            more = str(start + 2) if start + 2 < len(everyone) else ""
            return JSONResponse({"ok": True, "members": page,
                                 "response_metadata": {"next_cursor": more}})  # fmt: skip
        if method == "conversations.members":  # three a page
            start = int(body.get("cursor") or 0)
            more = str(start + 3) if start + 3 < len(IN_CHANNEL) else ""
            return JSONResponse({"ok": True, "members": IN_CHANNEL[start : start + 3],
                                 "response_metadata": {"next_cursor": more}})  # fmt: skip
        if method == "users.info":
            user = USERS.get(str(body.get("user")))
            if user is None:
                return JSONResponse({"ok": False, "error": "user_not_found"})
            return JSONResponse({"ok": True, "user": user})
        if method == "chat.update":
            return JSONResponse({"ok": True, "channel": body.get("channel"), "ts": body.get("ts"),
                                 "text": body.get("text")})  # fmt: skip
        if method == "chat.postEphemeral":
            return JSONResponse({"ok": True, "message_ts": f"{time.time():.6f}"})
        if method == "chat.postMessage":
            ts = body["_ts"]
            message = {"type": "message", "user": BOT_USER, "text": body.get("text"), "ts": ts}
            return JSONResponse({"ok": True, "channel": body.get("channel"), "ts": ts,
                                 "message": message})  # fmt: skip
        return JSONResponse({"ok": False, "error": "unknown_method"})

    def push(
        self, envelope: dict[str, Any], *, retry_attempt: int = 0, kind: str = "events_api"
    ) -> str:
        """Send an Events API envelope (or, `kind` "interactive", an interaction payload)
        over the socket, as Socket Mode does; its id."""
        envelope_id = f"env-{next(self._ts)}"
        with self._lock:
            self.outbox.append(
                {
                    "envelope_id": envelope_id,
                    "type": kind,
                    "payload": envelope,
                    "accepts_response_payload": False,
                    "retry_attempt": retry_attempt,
                    "retry_reason": "timeout" if retry_attempt else "",
                }
            )
        return envelope_id

    async def _socket(self, socket: WebSocket) -> None:
        await socket.accept()
        self.sockets += 1
        await socket.send_json({"type": "hello", "num_connections": 1,
                                "debug_info": {"host": "fake"}, "connection_info": {}})  # fmt: skip

        async def receive() -> None:
            while True:
                message = json.loads(await socket.receive_text())
                if "envelope_id" in message:
                    with self._lock:
                        self.acks.append(message["envelope_id"])

        receiving = asyncio.create_task(receive())
        try:
            while not receiving.done():
                with self._lock:
                    waiting = list(self.outbox)
                    self.outbox.clear()
                    dropped, self.drops = self.drops > 0, max(self.drops - 1, 0)
                if dropped:
                    await socket.close(code=1011)
                    return
                for envelope in waiting:
                    await socket.send_json(envelope)
                await asyncio.sleep(0.02)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            receiving.cancel()


def message_event(
    text: str,
    *,
    user: str = "UALICE",
    ts: str | None = None,
    channel: str = CHANNEL,
    channel_type: str = "channel",
    thread_ts: str | None = None,
    parent_user_id: str | None = None,
) -> dict[str, Any]:
    """An `event_callback` envelope of a `message` event, as Slack posts it: `text` as
    Slack writes it (`<@U123>` for a mention), and its rich-text blocks with a user
    element for each mention (Slack's mention entities)."""
    ts = ts or f"{time.time():.6f}"
    elements: list[dict[str, Any]] = []
    for index, part in enumerate(re.split(r"<@([A-Z0-9]+)>", text)):
        if index % 2:
            elements.append({"type": "user", "user_id": part})
        elif part:
            elements.append({"type": "text", "text": part})
    event: dict[str, Any] = {
        "type": "message",
        "channel": channel,
        "channel_type": channel_type,
        "user": user,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "blocks": [{"type": "rich_text", "block_id": "b1",
                    "elements": [{"type": "rich_text_section", "elements": elements}]}],
    }  # fmt: skip
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    if parent_user_id is not None:
        event["parent_user_id"] = parent_user_id
    return {
        "token": "legacy-verification-token",
        "team_id": TEAM,
        "api_app_id": "A0001",
        "event": event,
        "type": "event_callback",
        "event_id": f"Ev{ts.replace('.', '')}",
        "event_time": int(float(ts)),
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
    }


def mention_event(
    text: str,
    *,
    user: str = "UALICE",
    ts: str | None = None,
    channel: str = CHANNEL,
    thread_ts: str | None = None,
) -> dict[str, Any]:
    """An `event_callback` envelope of an `app_mention` event, as Slack posts it to an
    app subscribed to it (app_mentions:read): the message's fields as in `message_event`
    but no `channel_type`, and its own `type`; with `message.*` subscriptions too, Slack
    sends this and the `message` event for the same `ts`."""
    envelope = message_event(text, user=user, ts=ts, channel=channel, thread_ts=thread_ts)
    event = envelope["event"]
    del event["channel_type"]
    event["type"] = "app_mention"
    envelope["event_id"] = f"Ev{event['ts'].replace('.', '')}m"  # a distinct event
    return envelope


def reaction_event(
    reaction: str,
    ts: str,
    *,
    user: str = "UBOB",
    item_user: str = "UALICE",
    channel: str = CHANNEL,
    removed: bool = False,
    item_type: str = "message",
    event_ts: str | None = None,
) -> dict[str, Any]:
    """An `event_callback` envelope of a `reaction_added` (or `reaction_removed`) event,
    as Slack posts it: `user` put `reaction` (its name, no colons) on the message `ts` of
    `channel`, which `item_user` wrote. A new `event_ts` each time unless given (a resend
    of the same event carries the same one)."""
    event_ts = event_ts or f"{time.time():.6f}"
    item: dict[str, Any] = {"type": item_type, "channel": channel, "ts": ts}
    if item_type != "message":  # a file's reaction names the file instead
        item = {"type": item_type, "file": "F0001"}
    return {
        "token": "legacy-verification-token",
        "team_id": TEAM,
        "api_app_id": "A0001",
        "event": {
            "type": "reaction_removed" if removed else "reaction_added",
            "user": user,
            "reaction": reaction,
            "item_user": item_user,
            "item": item,
            "event_ts": event_ts,
        },
        "type": "event_callback",
        "event_id": f"Ev{event_ts.replace('.', '')}",
        "event_time": int(float(event_ts)),
        "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}],
    }


def press_payload(
    value: str,
    message_ts: str,
    *,
    user: str = "UALICE",
    channel: str = CHANNEL,
    action_ts: str | None = None,
    text: str = "⏰ a reminder",
) -> dict[str, Any]:
    """A `block_actions` payload, as Slack posts it when `user` presses the button with
    `value` under the bot's message `message_ts` in `channel` (the same `action_ts` again:
    the same press posted again)."""
    action_ts = action_ts or f"{time.time():.6f}"
    return {
        "type": "block_actions",
        "user": {"id": user, "username": USERS[user]["name"], "name": USERS[user]["name"],
                 "team_id": TEAM},
        "api_app_id": "A0001",
        "token": "legacy-verification-token",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel,
                      "is_ephemeral": False},
        "trigger_id": f"{int(float(action_ts))}.1.abcdef",
        "team": {"id": TEAM, "domain": "test"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel, "name": "general"},
        "message": {"type": "message", "user": BOT_USER, "ts": message_ts, "bot_id": "B0001",
                    "text": text},
        "state": {"values": {}},
        "response_url": "https://hooks.slack.com/actions/T0001/1/abc",
        "actions": [{"action_id": "groupmate_press_0", "block_id": "b0", "type": "button",
                     "text": {"type": "plain_text", "text": "✅ Done", "emoji": True},
                     "value": value, "action_ts": action_ts}],
    }  # fmt: skip


async def post_press(
    base_url: str, payload: dict[str, Any], *, path: str = "/slack/interactive", **signing: Any
) -> httpx.Response:
    """POST an interaction payload to the bot as Slack does: form-encoded `payload=`,
    signed like an event."""
    body = urlencode({"payload": json.dumps(payload)}).encode()
    headers = signed(body, **signing) | {"Content-Type": "application/x-www-form-urlencoded"}
    async with httpx.AsyncClient(base_url=base_url) as client:
        return await client.post(path, content=body, headers=headers)


def signed(body: bytes, secret: str = SIGNING_SECRET, at: int | None = None) -> dict[str, str]:
    """Slack's request signature headers for `body` (v0, HMAC-SHA256)."""
    stamp = str(at if at is not None else int(time.time()))
    base = b"v0:" + stamp.encode() + b":" + body
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {
        "X-Slack-Request-Timestamp": stamp,
        "X-Slack-Signature": f"v0={digest}",
        "Content-Type": "application/json",
    }


async def post_event(
    base_url: str, envelope: dict[str, Any], *, retry: int | None = None, **signing: Any
) -> httpx.Response:
    """POST one event to the bot as Slack does (signed; a retry says its number)."""
    body = json.dumps(envelope).encode()
    headers = signed(body, **signing)
    if retry is not None:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    async with httpx.AsyncClient(base_url=base_url) as client:
        return await client.post("/slack/events", content=body, headers=headers)
