"""A local Lark open API (the calls the adapter makes, in Lark's published shapes: tenant
tokens, `{"code": …, "msg": …}` answers, 429 with code 99991400 and x-ogw-ratelimit-reset,
message `uuid`s (at most 50 characters) deduplicated for an hour, a reply to an unknown
message refused with 230011), the long connection's endpoint and protobuf WebSocket (its
handshake refusals in lark-oapi's headers), and encrypted, signed event posts to the
bot, on real sockets."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import html
import itertools
import json
import os
import threading
import time
from collections import deque
from typing import Any

import httpx
from Crypto.Cipher import AES
from lark_oapi.ws.pb.pbbp2_pb2 import Frame
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from groupmate.testing.threaded_server import ThreadedServer

APP_ID = "cli_test0001"
APP_SECRET = "app-s3cret-for-tests"
VERIFICATION_TOKEN = "verif-t0ken-for-tests"
ENCRYPT_KEY = "encrypt-k3y-for-tests"
BOT_OPEN_ID = "ou_bot"
CHAT = "oc_group1"
SERVICE_ID = "7"
# The chat's members, two a page; two of them go by "Sam". Ada owns the chat, Max manages it.
MEMBERS = [("ou_alice", "Alice"), ("ou_bob", "Bob"), ("ou_ada", "Ada"), ("ou_max", "Max"),
           ("ou_carol", "Carol"), ("ou_sam1", "Sam"), ("ou_sam2", "Sam")]  # fmt: skip
OWNER, MANAGER = "ou_ada", "ou_max"
_BAD_TOKEN = {"code": 99991663, "msg": "Invalid access token for authorization."}
_NOT_FOUND = {"code": 230011, "msg": "The message is not found."}
_INVALID = {"code": 99992402, "msg": "field validation failed"}


class FakeLark:
    """Records the messages sent (`sent()`), the calls made and the long connection's acks."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []  # (method, path)
        self.messages: list[dict[str, Any]] = []  # each sent or replied message, as stored
        self.requests: dict[str, dict[str, Any]] = {}  # message id -> the send's body
        self.lose_answers = 0  # the next N sends are stored, then answered 500
        self.rate_limited = 0  # the next N message sends answer 429
        self.token_requests = 0
        self.unavailable = 0  # the next N token requests answer 503
        self.refused = 0  # token requests with a wrong secret
        self._tokens: set[str] = set()
        self._others: dict[str, dict[str, Any]] = {}  # messages people and apps sent
        self._uuids: dict[str, tuple[float, dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.outbox: deque[bytes] = deque()  # long connection: frames waiting to go out
        self.acks: list[tuple[str, int]] = []  # (frame message_id, code) the client sent back
        self.ack_data: dict[str, Any] = {}  # frame message_id -> the ack's data (a card's answer)
        self.patches: list[tuple[str, dict[str, Any]]] = []  # (message id, card) updated by API
        self.pings = 0
        self.sockets = 0
        self.handshakes = 0  # WebSocket handshakes begun
        self.drop = False  # close the open long connection(s)
        self.hold = False  # handshakes wait (unanswered) while set
        self.busy = 0  # the next N endpoint requests: "system busy"
        self.crowded = 0  # the next N handshakes: refused, too many connections
        self.secret = APP_SECRET  # the app's secret as Lark knows it (a reset changes it)
        self.server = ThreadedServer(
            Starlette(
                routes=[
                    Route("/open-apis/{path:path}", self._api, methods=["GET", "POST", "PATCH"]),
                    Route("/callback/ws/endpoint", self._endpoint, methods=["POST"]),
                    WebSocketRoute("/ws", self._socket),
                ]
            )
        )

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def sent(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.messages)

    def section(self, **overrides: Any) -> dict[str, Any]:
        """The adapter's config section for this fake (webhook mode, encrypted)."""
        return {"app_id": APP_ID, "app_secret": APP_SECRET, "encrypt_key": ENCRYPT_KEY,
                "verification_token": VERIFICATION_TOKEN,
                "api_url": self.api_url} | overrides  # fmt: skip

    async def wait_sent(self, count: int, within: float = 10.0) -> list[dict[str, Any]]:
        """The messages sent, once there are `count`."""
        deadline = time.monotonic() + within
        while len(self.sent()) < count:
            assert time.monotonic() < deadline, f"{len(self.sent())} messages sent, not {count}"
            await asyncio.sleep(0.02)
        return self.sent()

    def know(self, event: dict[str, Any]) -> None:
        """The message a person sent (in an event), as Lark keeps it."""
        message = (event.get("event") or {}).get("message")
        sender = (event.get("event") or {}).get("sender") or {}
        if message:
            open_id = (sender.get("sender_id") or {}).get("open_id")
            self.keep(message["message_id"], message["chat_id"], str(open_id), "open_id", "user")

    def keep(self, message_id: str, chat: str, sender: str, id_type: str, kind: str) -> None:
        """A message someone else sent (a person: "user", another app: "app")."""
        with self._lock:
            self._others[message_id] = {
                "message_id": message_id, "chat_id": chat, "msg_type": "text",
                "body": {"content": json.dumps({"text": "hi"})},
                "sender": {"id": sender, "id_type": id_type, "sender_type": kind},
                "create_time": str(int(time.time() * 1000))}  # fmt: skip

    def expire_tokens(self) -> None:
        with self._lock:
            self._tokens.clear()

    async def _api(self, request: Request) -> Response:
        path = "/open-apis/" + request.path_params["path"]
        raw = await request.body()
        body: dict[str, Any] = json.loads(raw) if raw else {}
        with self._lock:
            self.calls.append((request.method, path))
        if path == "/open-apis/auth/v3/tenant_access_token/internal":
            return self._token(body)
        bearer = request.headers.get("authorization", "").removeprefix("Bearer ")
        with self._lock:
            if bearer not in self._tokens:
                return JSONResponse(_BAD_TOKEN, status_code=400)
        if path == "/open-apis/bot/v3/info":
            return JSONResponse({"code": 0, "msg": "ok", "bot": {
                "activate_status": 2, "app_name": "groupmate", "avatar_url": "",
                "ip_white_list": [], "open_id": BOT_OPEN_ID}})  # fmt: skip
        if path == "/open-apis/im/v1/messages" and request.method == "POST":
            if request.query_params.get("receive_id_type") != "chat_id":
                return JSONResponse({"code": 230001, "msg": "bad receive_id_type"}, 400)
            return self._store(body, str(body.get("receive_id")), None)
        parts = path.removeprefix("/open-apis/im/v1/").split("/")
        if parts[0] == "messages" and len(parts) == 3 and parts[2] == "reply":
            return self._store(body, None, parts[1])
        if parts[0] == "messages" and len(parts) == 2 and request.method == "PATCH":
            return self._patch(parts[1], body)
        if parts[0] == "messages" and len(parts) == 2:
            with self._lock:
                found = [m for m in self.messages if m["message_id"] == parts[1]]
                found += [self._others[parts[1]]] if parts[1] in self._others else []
            if not found:
                return JSONResponse(_NOT_FOUND, 400)
            return JSONResponse({"code": 0, "msg": "success", "data": {"items": found}})
        if parts[0] == "chats" and len(parts) == 2:
            return JSONResponse({"code": 0, "msg": "success", "data": {
                "name": "Test group", "owner_id_type": "open_id", "owner_id": OWNER,
                "user_manager_id_list": [MANAGER], "bot_manager_id_list": [],
                "chat_mode": "group", "chat_type": "private"}})  # fmt: skip
        if parts[0] == "chats" and len(parts) == 3 and parts[2] == "members":
            start = int(request.query_params.get("page_token") or 0)
            page = MEMBERS[start : start + 2]
            more = start + 2 < len(MEMBERS)
            items = [{"member_id_type": "open_id", "member_id": i, "name": n,
                      "tenant_key": "t1"} for i, n in page]  # fmt: skip
            return JSONResponse({"code": 0, "msg": "success", "data": {
                "items": items, "page_token": str(start + 2) if more else "",
                "has_more": more, "member_total": len(MEMBERS)}})  # fmt: skip
        return JSONResponse({"code": 404, "msg": "404 page not found"}, 404)

    def _token(self, body: dict[str, Any]) -> Response:
        with self._lock:
            self.token_requests += 1
            if self.unavailable > 0:
                self.unavailable -= 1
                return JSONResponse({"code": 1, "msg": "system busy"}, status_code=503)
            if (body.get("app_id"), body.get("app_secret")) != (APP_ID, self.secret):
                self.refused += 1
                return JSONResponse({"code": 10014, "msg": "app secret invalid"}, 400)
            token = f"t-{next(self._ids)}-tenant"
            self._tokens.add(token)
        return JSONResponse({"code": 0, "msg": "ok", "tenant_access_token": token,
                             "expire": 7200})  # fmt: skip

    def _store(self, body: dict[str, Any], chat: str | None, parent: str | None) -> Response:
        with self._lock:
            if self.rate_limited > 0:
                self.rate_limited -= 1
                return JSONResponse(
                    {"code": 99991400, "msg": "request trigger frequency limit"},
                    status_code=429,
                    headers={"x-ogw-ratelimit-limit": "5", "x-ogw-ratelimit-reset": "1"},
                )
            uuid = body.get("uuid")
            if uuid is not None and not (isinstance(uuid, str) and 0 < len(uuid) <= 50):
                return JSONResponse(_INVALID, 400)
            if uuid and uuid in self._uuids and self._uuids[uuid][0] > time.time():
                return JSONResponse({"code": 0, "msg": "success", "data": self._uuids[uuid][1]})
            message_id = f"om_{next(self._ids)}"
            message: dict[str, Any] = {
                "message_id": message_id,
                "chat_id": chat,
                "msg_type": body.get("msg_type"),
                "body": {"content": body.get("content")},
                "sender": {"id": APP_ID, "id_type": "app_id", "sender_type": "app"},
                "create_time": str(int(time.time() * 1000)),
            }
            if parent is not None:
                known = {m["message_id"]: m for m in self.messages} | self._others
                if parent not in known:
                    return JSONResponse(_NOT_FOUND, 400)
                message |= {"chat_id": known[parent]["chat_id"], "parent_id": parent,
                            "root_id": known[parent].get("root_id") or parent}  # fmt: skip
                if body.get("reply_in_thread"):  # a thread: Lark answers its id
                    message["thread_id"] = known[parent].get("thread_id") or f"omt_{message_id}"
            if uuid:
                self._uuids[uuid] = (time.time() + 3600, message)  # Lark: one hour
            self.messages.append(message)
            self.requests[message_id] = body
            if self.lose_answers > 0:  # sent, but the answer is lost on the way
                self.lose_answers -= 1
                return JSONResponse({"code": 1, "msg": "system busy"}, status_code=500)
        return JSONResponse({"code": 0, "msg": "success", "data": message})

    def _patch(self, message_id: str, body: dict[str, Any]) -> Response:
        """PATCH im/v1/messages/:id: the bot's own card, updated (Lark: 230001 for a
        message that is not a card, 230027-ish refusals for others' messages)."""
        with self._lock:
            found = [m for m in self.messages if m["message_id"] == message_id]
            if not found:
                return JSONResponse(_NOT_FOUND, 400)
            if found[0]["msg_type"] != "interactive":
                return JSONResponse({"code": 230001, "msg": "not a card"}, 400)
            found[0]["body"]["content"] = body.get("content")
            self.patches.append((message_id, json.loads(str(body.get("content")))))
        return JSONResponse({"code": 0, "msg": "success", "data": {}})

    # -- the long connection -------------------------------------------------------------

    async def _endpoint(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            if (body.get("AppID"), body.get("AppSecret")) != (APP_ID, self.secret):
                self.refused += 1
                return JSONResponse({"code": 10014, "msg": "app secret invalid"})
            if self.busy > 0:
                self.busy -= 1
                return JSONResponse({"code": 1, "msg": "system busy"})
        port, device = self.server.port, f"d{next(self._ids)}"
        url = f"ws://127.0.0.1:{port}/ws?device_id={device}&service_id={SERVICE_ID}"
        config = {"ReconnectCount": -1, "ReconnectInterval": 1, "ReconnectNonce": 0,
                  "PingInterval": 120}  # fmt: skip
        return JSONResponse({"code": 0, "msg": "ok", "data": {"URL": url, "ClientConfig": config}})

    def push(self, event: dict[str, Any]) -> str:
        """An event down the long connection, as a DATA frame; the frame's message id."""
        frame_id = f"frame-{next(self._ids)}"
        frame = Frame(SeqID=0, LogID=0, service=int(SERVICE_ID), method=1)
        headers = {"type": "event", "message_id": frame_id, "trace_id": "tr1", "sum": "1",
                   "seq": "0"}  # fmt: skip
        for key, value in headers.items():
            header = frame.headers.add()
            header.key, header.value = key, value
        frame.payload = json.dumps(event).encode()
        self.know(event)
        with self._lock:
            self.outbox.append(frame.SerializeToString())
        return frame_id

    async def _socket(self, socket: WebSocket) -> None:
        with self._lock:
            self.handshakes += 1
            crowded, self.crowded = self.crowded > 0, max(self.crowded - 1, 0)
        if crowded:  # as Lark refuses it: the outcome in lark-oapi's handshake headers
            await socket.send_denial_response(Response(status_code=403, headers={
                "handshake-status": "514", "handshake-msg": "exceed connection limit",
                "handshake-autherrcode": "1000040350"}))  # fmt: skip
            return
        while self.hold:  # noqa: ASYNC110  # a flag the test's thread sets
            await asyncio.sleep(0.02)
        await socket.accept()
        with self._lock:
            self.sockets += 1

        async def receive() -> None:
            while True:
                frame = Frame()
                frame.ParseFromString(await socket.receive_bytes())
                headers = {h.key: h.value for h in frame.headers}
                if frame.method == 0 and headers.get("type") == "ping":
                    self.pings += 1
                elif frame.method == 1:
                    ack = json.loads(frame.payload)
                    with self._lock:
                        self.acks.append((headers["message_id"], ack.get("code")))
                        if ack.get("data"):  # base64 of the handler's answer (lark-oapi)
                            data = json.loads(base64.b64decode(ack["data"]))
                            self.ack_data[headers["message_id"]] = data

        receiving = asyncio.create_task(receive())
        try:
            while not receiving.done() and not self.drop:
                with self._lock:
                    waiting = list(self.outbox)
                    self.outbox.clear()
                for data in waiting:
                    await socket.send_bytes(data)
                await asyncio.sleep(0.02)
            if self.drop:
                self.drop = False
                await socket.close()
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            receiving.cancel()


def said(message: dict[str, Any]) -> str:
    """A sent message's text: a text message's, or a card's (its markdown as people read
    it: the escapes undone; a mention stays Lark's tag, `<at id=ou_…></at>`)."""
    content = json.loads(message["body"]["content"])
    if message["msg_type"] == "interactive":
        div = next(e for e in content["elements"] if e["tag"] == "div")
        return html.unescape(str(div["text"]["content"]))
    return str(content["text"])


def message_event(
    text: str,
    *,
    mentions: tuple[tuple[str, str], ...] = (),
    sender: str = "ou_alice",
    chat: str = CHAT,
    chat_type: str = "group",
    message_id: str | None = None,
    parent_id: str | None = None,
    thread_id: str | None = None,
    token: str = VERIFICATION_TOKEN,
) -> dict[str, Any]:
    """An im.message.receive_v1 event (schema 2.0) as Lark sends it: `text` with a key
    ("@_user_1") for each of `mentions` ((open_id, name)), and a mention entity for each."""
    message_id = message_id or f"om_in{time.time_ns()}"
    entities = [
        {"key": f"@_user_{n}", "id": {"open_id": oid, "union_id": f"on_{oid}", "user_id": None},
         "name": name, "tenant_key": "t1"}
        for n, (oid, name) in enumerate(mentions, 1)
    ]  # fmt: skip
    message: dict[str, Any] = {
        "message_id": message_id,
        "create_time": str(int(time.time() * 1000)),
        "chat_id": chat,
        "chat_type": chat_type,
        "message_type": "text",
        "content": json.dumps({"text": text}),
        "mentions": entities,
    }
    if parent_id is not None:
        message |= {"parent_id": parent_id, "root_id": parent_id}
    if thread_id is not None:
        message["thread_id"] = thread_id
    return {
        "schema": "2.0",
        "header": {"event_id": f"ev{message_id}", "event_type": "im.message.receive_v1",
                   "create_time": message["create_time"], "token": token,
                   "app_id": APP_ID, "tenant_key": "t1"},
        "event": {"sender": {"sender_id": {"open_id": sender, "union_id": f"on_{sender}"},
                             "sender_type": "user", "tenant_key": "t1"},
                  "message": message},
    }  # fmt: skip


def reaction_event(
    message_id: str,
    emoji: str = "THUMBSUP",
    *,
    user: str = "ou_bob",
    deleted: bool = False,
    app: str | None = None,
    at: int | None = None,
    token: str = VERIFICATION_TOKEN,
) -> dict[str, Any]:
    """An im.message.reaction.created_v1 (or, `deleted`, deleted_v1) event (schema 2.0) as
    Lark sends it: `user` put `emoji` on the message, or took it back, at `at` (ms; now
    when None). With `app` an app did (Lark then names the app_id, not a user)."""
    when = str(at if at is not None else int(time.time() * 1000))
    kind = "deleted" if deleted else "created"
    event: dict[str, Any] = {"message_id": message_id, "reaction_type": {"emoji_type": emoji},
                             "action_time": when}  # fmt: skip
    if app is None:
        event |= {"operator_type": "user", "user_id": {
            "open_id": user, "union_id": f"on_{user}", "user_id": None}}  # fmt: skip
    else:
        event |= {"operator_type": "app", "app_id": app}
    return {
        "schema": "2.0",
        "header": {"event_id": f"ev{time.time_ns()}", "token": token, "create_time": when,
                   "event_type": f"im.message.reaction.{kind}_v1", "app_id": APP_ID,
                   "tenant_key": "t1"},
        "event": event,
    }  # fmt: skip


def encrypted(payload: dict[str, Any], key: str = ENCRYPT_KEY) -> bytes:
    """`payload` sealed as Lark does: AES-256-CBC, sha256(key), a random IV first."""
    plain = json.dumps(payload).encode()
    pad = 16 - len(plain) % 16
    iv = os.urandom(16)
    cipher = AES.new(hashlib.sha256(key.encode()).digest(), AES.MODE_CBC, iv)
    sealed = iv + cipher.encrypt(plain + bytes([pad]) * pad)
    return json.dumps({"encrypt": base64.b64encode(sealed).decode()}).encode()


def signed(body: bytes, key: str = ENCRYPT_KEY) -> dict[str, str]:
    """Lark's signature headers for `body`: sha256(timestamp + nonce + key + body)."""
    stamp, nonce = str(int(time.time())), os.urandom(8).hex()
    digest = hashlib.sha256((stamp + nonce + key).encode() + body).hexdigest()
    return {"X-Lark-Request-Timestamp": stamp, "X-Lark-Request-Nonce": nonce,
            "X-Lark-Signature": digest, "Content-Type": "application/json"}  # fmt: skip


async def post_event(
    fake: FakeLark,
    base_url: str,
    payload: dict[str, Any],
    *,
    key: str = ENCRYPT_KEY,
    sign_key: str | None = None,
) -> httpx.Response:
    """POST one event to the bot as Lark does: encrypted with `key`, signed (and its
    message known to `fake`, as Lark knows every message)."""
    fake.know(payload)
    body = encrypted(payload, key)
    headers = signed(body, sign_key if sign_key is not None else key)
    async with httpx.AsyncClient(base_url=base_url) as client:
        return await client.post("/lark/events", content=body, headers=headers)


def card_of(message: dict[str, Any]) -> dict[str, Any]:
    """A sent card's JSON (msg_type "interactive")."""
    assert message["msg_type"] == "interactive", message["msg_type"]
    return dict(json.loads(message["body"]["content"]))


def card_buttons(card: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """A card's buttons, row by row (each `action` element's actions)."""
    return [e["actions"] for e in card["elements"] if e["tag"] == "action"]


def card_action_event(
    message: dict[str, Any],
    value: dict[str, Any],
    *,
    user: str = "ou_bob",
    event_id: str | None = None,
    token: str = VERIFICATION_TOKEN,
) -> dict[str, Any]:
    """A card.action.trigger callback (schema 2.0) as Lark sends it when `user` presses a
    button whose value is `value` on the card `message` (Lark's "card callback
    communication" document: operator, the card's update token, the action, the context
    with the card's message and chat; lark-oapi's P2CardActionTrigger has these fields)."""
    now = str(int(time.time() * 1000))
    return {
        "schema": "2.0",
        "header": {"event_id": event_id or f"evcard{time.time_ns()}", "token": token,
                   "create_time": now, "event_type": "card.action.trigger",
                   "tenant_key": "t1", "app_id": APP_ID},
        "event": {"operator": {"tenant_key": "t1", "user_id": None, "open_id": user,
                               "union_id": f"on_{user}"},
                  "token": f"c-{os.urandom(8).hex()}",
                  "action": {"value": value, "tag": "button"},
                  "host": "im_message",
                  "context": {"open_message_id": message["message_id"],
                              "open_chat_id": message["chat_id"]}},
    }  # fmt: skip
