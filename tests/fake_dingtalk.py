"""A local DingTalk, in its published shapes: the open API (oauth2/accessToken,
gateway/connections/open, robot groupMessages/send and oToMessages/batchSend, with
`{"code", "message"}` refusals: 400 invalidClientSecret, 401 authFailed, 401
InvalidAuthentication, 429 + Retry-After and DingTalk's own 403
Forbidden.AccessDenied.QpsLimit… without it), the Stream WebSocket (CALLBACK
frames of /v1.0/im/bot/messages/get, SYSTEM ping and disconnect; the client's acks are
recorded), session webhooks (`{"errcode", "errmsg"}`), and signed HTTP callbacks."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import itertools
import json
import threading
import time
from collections import deque
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from groupmate.testing.threaded_server import ThreadedServer

CLIENT_ID = "dingtestappkey"
CLIENT_SECRET = "dt-client-s3cret-value"
ACCESS_TOKEN = "dt-access-token-value"
ROBOT = "$:LWCP_v1:$robot000"  # the robot's chatbotUserId
GROUP = "cidGROUP0001=="
CORP = "ding0corp"
# staff id -> (DingTalk id, nick)
PEOPLE = {
    "alice01": ("$:LWCP_v1:$alice", "Alice"),
    "bob01": ("$:LWCP_v1:$bob", "Bob"),
    "ada01": ("$:LWCP_v1:$ada", "Ada"),
    "carol01": ("$:LWCP_v1:$carol", "Carol"),
    "sam01": ("$:LWCP_v1:$sam1", "Sam"),
    "sam02": ("$:LWCP_v1:$sam2", "Sam"),
    "": ("$:LWCP_v1:$guest", "Guest"),  # outside the org: no staff id
}


class FakeDingTalk:
    """Records every call; `sent()` are the messages the robot sent, by any route."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.acks: list[dict[str, Any]] = []
        self.sessions: dict[str, int] = {}  # session webhook token -> expiry (ms)
        self.rate_limited = 0  # the next N robot sends answer 429 (Retry-After: 1)
        self.too_fast = 0  # the next N session-webhook posts answer errcode 130101
        self.opened = 0  # gateway/connections/open calls that gave a ticket
        self.token_requests = 0
        self.token = ACCESS_TOKEN  # the token DingTalk honours now (`revoke` changes it)
        self.outbox: deque[dict[str, Any]] = deque()
        self.drop_sockets = False  # close every open Stream socket
        self.qps_limited = 0  # the next N open API calls answer 403 QpsLimit (no Retry-After)
        self.gateway_pages: deque[str] = deque()  # answers (200, text/html) before a ticket
        self.session_errors: deque[tuple[int, dict[str, Any]]] = deque()  # next webhook answers
        self.open_times: list[float] = []
        self.bad_endpoints = 0  # the next N tickets come with an endpoint no one can reach
        self.cards: dict[str, dict[str, Any]] = {}  # outTrackId -> the card as delivered/updated
        self.card_updates: list[dict[str, Any]] = []  # each PUT's body
        self.subscribed: list[tuple[str, str]] = []  # the last Stream open's (type, topic)s
        self._tickets: set[str] = set()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.server = ThreadedServer(
            Starlette(
                routes=[
                    Route("/v1.0/oauth2/accessToken", self._token, methods=["POST"]),
                    Route("/v1.0/gateway/connections/open", self._open, methods=["POST"]),
                    Route("/v1.0/robot/groupMessages/send", self._robot, methods=["POST"]),
                    Route("/v1.0/robot/oToMessages/batchSend", self._robot, methods=["POST"]),
                    Route("/robot/sendBySession", self._session, methods=["POST"]),
                    Route(
                        "/v1.0/card/instances/createAndDeliver", self._card_send, methods=["POST"]
                    ),
                    Route("/v1.0/card/instances", self._card_update, methods=["PUT"]),
                    WebSocketRoute("/connect", self._socket),
                ]
            )
        )

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    def sent(self) -> list[dict[str, Any]]:
        """Each message the robot sent: its route, text and the ids it @-s."""
        out: list[dict[str, Any]] = []
        with self._lock:
            for name, body in self.calls:
                if name == "session":
                    at = body.get("at") or {}
                    out.append(
                        {
                            "via": "session",
                            "text": body["text"]["content"],
                            "at": at.get("atUserIds", []) + at.get("atDingtalkIds", []),
                            "body": body,
                        }
                    )
                elif name in ("groupMessages/send", "oToMessages/batchSend"):
                    text = json.loads(body["msgParam"])["content"]
                    out.append({"via": name, "text": text, "at": [], "body": body})
        return out

    def _qps_limited(self) -> JSONResponse | None:
        """DingTalk's own throttle: 403 with a QpsLimit code and no Retry-After."""
        with self._lock:
            if self.qps_limited <= 0:
                return None
            self.qps_limited -= 1
        code = "Forbidden.AccessDenied.QpsLimitForApi"
        return self._refused(403, code, "调用该接口超过限流阈值")

    @staticmethod
    def _refused(status: int, code: str, message: str) -> JSONResponse:
        return JSONResponse({"code": code, "requestid": "req-1", "message": message}, status)

    async def _token(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.token_requests += 1
        if (limited := self._qps_limited()) is not None:
            return limited
        if body.get("appKey") != CLIENT_ID or body.get("appSecret") != CLIENT_SECRET:
            return self._refused(400, "invalidClientSecret", "不合法的appSecret")
        return JSONResponse({"accessToken": self.token, "expireIn": 7200})

    def end_sessions(self) -> None:
        """DingTalk ends every session webhook before its stated expiry."""
        with self._lock:
            self.sessions = dict.fromkeys(self.sessions, 0)

    def revoke(self) -> None:
        """DingTalk drops the app's token before its expiry (a new one is issued)."""
        self.token = f"{ACCESS_TOKEN}-{next(self._ids)}"

    async def _open(self, request: Request) -> Response:
        body = await request.json()
        with self._lock:
            self.open_times.append(time.monotonic())
            page = self.gateway_pages.popleft() if self.gateway_pages else None
        if page is not None:  # a proxy's page in DingTalk's place
            return Response(page, 200, media_type="text/html")
        if (limited := self._qps_limited()) is not None:
            return limited
        if body.get("clientId") != CLIENT_ID or body.get("clientSecret") != CLIENT_SECRET:
            return self._refused(401, "authFailed", "鉴权失败")
        assert body.get("ua", "").startswith("dingtalk-sdk-python/") and "localIp" in body
        topics = [(s.get("type"), s.get("topic")) for s in body.get("subscriptions", [])]
        assert ("CALLBACK", "/v1.0/im/bot/messages/get") in topics, topics
        self.subscribed = topics
        ticket = f"ticket-{next(self._ids)}"
        with self._lock:
            self._tickets.add(ticket)
            self.opened += 1
            port = 99999 if self.bad_endpoints > 0 else self.server.port  # 99999: no port
            self.bad_endpoints -= 1
        return JSONResponse({"endpoint": f"ws://127.0.0.1:{port}/connect", "ticket": ticket})

    async def _robot(self, request: Request) -> Response:
        name = request.url.path.removeprefix("/v1.0/robot/")
        if request.headers.get("x-acs-dingtalk-access-token") != self.token:
            return self._refused(401, "InvalidAuthentication", "不合法的access_token")
        body = await request.json()
        if (limited := self._qps_limited()) is not None:
            return limited
        with self._lock:
            if self.rate_limited > 0:
                self.rate_limited -= 1
                return JSONResponse(
                    {"code": "Throttling", "requestid": "req-2", "message": "qps limit"},
                    status_code=429,
                    headers={"Retry-After": "1"},
                )
            if body.get("robotCode") != CLIENT_ID or body.get("msgKey") != "sampleText":
                return self._refused(400, "invalidParameter", "robotCode or msgKey")
            self.calls.append((name, body))
        if name == "oToMessages/batchSend":
            return JSONResponse(
                {
                    "processQueryKey": f"pqk-{next(self._ids)}",
                    "invalidStaffIdList": [],
                    "flowControlledStaffIdList": [],
                }
            )
        return JSONResponse({"processQueryKey": f"pqk-{next(self._ids)}"})

    async def _session(self, request: Request) -> Response:
        session = request.query_params.get("session", "")
        body = await request.json()
        with self._lock:
            expiry = self.sessions.get(session)
            if expiry is None or expiry < time.time() * 1000:
                return JSONResponse({"errcode": 300001, "errmsg": "session is invalid"})
            if self.too_fast > 0:
                self.too_fast -= 1
                return JSONResponse({"errcode": 130101, "errmsg": "send too fast"})
            if self.session_errors:
                status, answer = self.session_errors.popleft()
                return JSONResponse(answer, status)
            self.calls.append(("session", body))
        return JSONResponse({"errcode": 0, "errmsg": "ok"})

    # -- interactive cards (https://open.dingtalk.com/document/orgapp/create-and-deliver-cards,
    # .../interactive-card-update-interface; dingtalk-stream's card_replier.py) ----------

    async def _card_send(self, request: Request) -> Response:
        if request.headers.get("x-acs-dingtalk-access-token") != self.token:
            return self._refused(401, "InvalidAuthentication", "不合法的access_token")
        body = await request.json()
        track = body.get("outTrackId")
        params = (body.get("cardData") or {}).get("cardParamMap")
        if not body.get("cardTemplateId") or not track or not isinstance(params, dict):
            return self._refused(400, "invalidParameter", "cardTemplateId/outTrackId/cardData")
        if any(not isinstance(v, str) for v in params.values()):
            return self._refused(400, "invalidParameter", "cardParamMap values are strings")
        space = str(body.get("openSpaceId", ""))
        with self._lock:
            self.cards[track] = {"body": body, "params": dict(params), "private": {}}
            self.calls.append(("card", body))
        result = {"outTrackId": track, "deliverResults": [
            {"spaceType": "IM_GROUP", "spaceId": space.split(".", 1)[-1], "success": True,
             "carrierId": f"carrier-{next(self._ids)}"}]}  # fmt: skip
        return JSONResponse({"success": True, "result": result})

    async def _card_update(self, request: Request) -> Response:
        if request.headers.get("x-acs-dingtalk-access-token") != self.token:
            return self._refused(401, "InvalidAuthentication", "不合法的access_token")
        body = await request.json()
        with self._lock:
            card = self.cards.get(str(body.get("outTrackId")))
            if card is None:
                return self._refused(400, "param.cardNotExist", "卡片不存在")
            self.card_updates.append(body)
            card["params"] |= (body.get("cardData") or {}).get("cardParamMap") or {}
            for user, private in (body.get("privateData") or {}).items():
                card["private"].setdefault(user, {}).update(private.get("cardParamMap") or {})
        return JSONResponse({"success": True, "result": True})

    def press_card(
        self,
        track: str,
        action_id: str,
        *,
        user: str = "bob01",
        space: str = GROUP,
        frame: str | None = None,
    ) -> str:
        """`user` presses the button `action_id` on the card `track`: the card callback
        down the Stream connection (topic /v1.0/card/instances/callback), as DingTalk
        sends it (dingtalk-stream's CardCallbackMessage reads these fields). `frame`: the
        id of an earlier press's frame, sent again (DingTalk saw no ack for it)."""
        content = {"cardPrivateData": {"actionIds": [action_id], "params": {}}}
        data = {"extension": "{}", "corpId": CORP, "spaceType": "IM_GROUP", "spaceId": space,
                "userIdType": 1, "type": "actionCallback", "userId": user,
                "content": json.dumps(content), "outTrackId": track}  # fmt: skip
        frame_id = frame or f"frame-{next(self._ids)}"
        self._queue("CALLBACK", "/v1.0/card/instances/callback", frame_id, json.dumps(data))
        return frame_id

    def message(
        self,
        text: str,
        *,
        sender: str = "alice01",
        at: tuple[str, ...] = (),
        robot: bool = True,
        private: bool = False,
        msg_id: str | None = None,
        admin: bool = False,
        quote: str | None = None,
        webhook_for: float = 5400.0,
    ) -> dict[str, Any]:
        """A robot message payload as DingTalk sends it: the robot's @ cut from the text
        (`robot`: it was @-ed), the others' kept as "@Nick" and in atUsers by id."""
        dingtalk_id, nick = PEOPLE[sender]
        session = f"sess-{next(self._ids)}"
        expires = int((time.time() + webhook_for) * 1000)
        with self._lock:
            self.sessions[session] = expires
        at_users = [{"dingtalkId": PEOPLE[s][0]} | ({"staffId": s} if s else {}) for s in at]
        if robot and not private:
            at_users.insert(0, {"dingtalkId": ROBOT})
        data: dict[str, Any] = {
            "conversationId": f"cidSINGLE{sender}==" if private else GROUP,
            "atUsers": at_users,
            "chatbotCorpId": CORP,
            "chatbotUserId": ROBOT,
            "msgId": msg_id or f"msg{next(self._ids):06d}",
            "senderNick": nick,
            "isAdmin": admin,
            **({"senderStaffId": sender} if sender else {}),
            "sessionWebhookExpiredTime": expires,
            "createAt": int(time.time() * 1000),
            "senderCorpId": CORP,
            "conversationType": "1" if private else "2",
            "senderId": dingtalk_id,
            "sessionWebhook": f"{self.api_url}/robot/sendBySession?session={session}",
            "text": {"content": f" {text}"},
            "robotCode": CLIENT_ID,
            "msgtype": "text",
        }
        if not private:
            data |= {"conversationTitle": "Team", "isInAtList": robot}
        if quote is not None:
            data["text"] |= {
                "isReplyMsg": True,
                "repliedMsg": {
                    "msgType": "text",
                    "msgId": "msgQUOTED",
                    "senderId": ROBOT,
                    "createdAt": int(time.time() * 1000),
                    "content": {"text": quote},
                },
            }
        return data

    def push(self, data: dict[str, Any], *, frame_id: str | None = None) -> str:
        """Send a robot message as a Stream CALLBACK frame; the frame's messageId."""
        frame_id = frame_id or f"frame-{next(self._ids)}"
        self._queue("CALLBACK", "/v1.0/im/bot/messages/get", frame_id, json.dumps(data))
        return frame_id

    def system(self, topic: str) -> str:
        """A SYSTEM frame: "ping" (acked with its data) or "disconnect"."""
        frame_id = f"sys-{next(self._ids)}"
        self._queue("SYSTEM", topic, frame_id, json.dumps({"opaque": frame_id}))
        return frame_id

    def _queue(self, kind: str, topic: str, frame_id: str, data: str) -> None:
        headers = {
            "appId": "app-1",
            "connectionId": "conn-1",
            "contentType": "application/json",
            "messageId": frame_id,
            "time": str(int(time.time() * 1000)),
            "topic": topic,
        }
        with self._lock:
            self.outbox.append(
                {"specVersion": "1.0", "type": kind, "headers": headers, "data": data}
            )

    def acked(self, frame_id: str) -> bool:
        with self._lock:
            return any(
                a["headers"].get("messageId") == frame_id and a["code"] == 200 for a in self.acks
            )

    async def _socket(self, socket: WebSocket) -> None:
        with self._lock:
            valid = socket.query_params.get("ticket") in self._tickets
            self._tickets.discard(socket.query_params.get("ticket", ""))
        if not valid:
            await socket.close(code=1008)
            return
        await socket.accept()

        async def receive() -> None:
            while True:
                ack = json.loads(await socket.receive_text())
                with self._lock:
                    self.acks.append(ack)

        receiving = asyncio.create_task(receive())
        try:
            while not receiving.done() and not self.drop_sockets:
                with self._lock:
                    waiting = list(self.outbox)
                    self.outbox.clear()
                for frame in waiting:
                    await socket.send_text(json.dumps(frame))
                await asyncio.sleep(0.02)
            if self.drop_sockets:
                await socket.close(code=1011)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            receiving.cancel()


def signed(body: bytes, secret: str = CLIENT_SECRET, at_ms: int | None = None) -> dict[str, str]:
    """DingTalk's HTTP-callback headers: `timestamp` (ms) and `sign`."""
    stamp = str(at_ms if at_ms is not None else int(time.time() * 1000))
    digest = hmac.new(secret.encode(), f"{stamp}\n{secret}".encode(), hashlib.sha256).digest()
    return {
        "timestamp": stamp,
        "sign": base64.b64encode(digest).decode(),
        "Content-Type": "application/json",
    }


async def post_callback(base_url: str, data: dict[str, Any], **signing: Any) -> httpx.Response:
    """POST one robot message to the bot as DingTalk's HTTP mode does."""
    body = json.dumps(data).encode()
    async with httpx.AsyncClient(base_url=base_url) as client:
        return await client.post("/dingtalk/events", content=body, headers=signed(body, **signing))
