"""A local Discord: the REST API the adapter uses (`Authorization: Bot <token>`, Discord's
error bodies, 429 with `retry_after` and the X-RateLimit headers, global ones too, `nonce`
with `enforce_nonce`, 50035 for content over 2000 characters) and the gateway WebSocket
(HELLO, IDENTIFY checked -> READY + GUILD_CREATE, heartbeats ACKed, dispatches with
sequence numbers, RECONNECT, RESUME -> replay + RESUMED, close codes 4002, 4004 and
4014), on real sockets. The transport compression is the one the client's URL asks for
(discord.py asks for zstd-stream when a zstd module is installed, else zlib-stream).

Sessions are Discord's: a session goes on collecting its events while its client is away
(a RESUME of it replays them); a new IDENTIFY starts a new session that gets none of them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from groupmate.testing.threaded_server import ThreadedServer
from tests.fake_discord_guild import (
    APP,
    BOT,
    BOT_ROLE,
    BOT_USER,
    CHANNEL,
    DIRECT_MESSAGE_REACTIONS,
    GUILD,
    GUILD_MESSAGE_REACTIONS,
    MESSAGE_CONTENT,
    MODS,
    ROLES,
    THREAD,
    TOKEN,
    USERS,
    guild_create,
    now,
    snowflake,
)
from tests.fake_discord_interactions import Interactions


@dataclass
class Session:
    id: str
    intents: int
    events: list[dict[str, Any]] = field(default_factory=list)  # dispatches, seq = index + 1


class FakeDiscord:
    """`say()` posts a message as a user; `posted()` are the bot's created messages."""

    def __init__(self) -> None:
        self.message_content_enabled = True  # the Developer Portal's switch
        self.gateway_token = TOKEN  # what IDENTIFY must carry (a reset token: not it)
        self.refuse_gateway = False  # the gateway is down: handshakes answered 403
        self.heartbeat_ms = 200  # HELLO's interval (Discord's: 41250)
        self.rate_limited = 0  # the next N message posts answer 429
        self.global_limit = False  # ... as Discord's global limit
        self.refused = 0  # the next N message posts answer 503, nothing made
        self.lose_answers = 0  # the next N message posts are made, then answered `lost_status`
        self.lost_status = 502
        self.requests: list[tuple[str, str]] = []  # (method, path) of each REST call
        self.bodies: list[dict[str, Any]] = []  # each message post's body, retries too
        self.messages: dict[str, dict[str, Any]] = {}  # every message, by id
        self.created: list[dict[str, Any]] = []  # the bot's messages, in order
        self.identifies: list[dict[str, Any]] = []
        self.resumes: list[dict[str, Any]] = []
        self.heartbeats: list[int | None] = []  # each heartbeat's sequence number
        self.close_codes: list[int] = []
        self.compressed: list[str | None] = []  # per connection: the compression asked for
        self.sessions: dict[str, Session] = {}
        self.current: Session | None = None
        self._nonces: dict[str, str] = {}
        self._lock = threading.Lock()
        self._drop: int | None = None  # a close code, or 0: op 7 RECONNECT
        self.interactions = Interactions(self)  # presses of buttons, and their answers
        self.server = ThreadedServer(
            Starlette(
                routes=[
                    Route("/api/v10/{path:path}", self._rest, methods=["GET", "POST", "PATCH"]),
                    WebSocketRoute("/gateway", self._gateway),
                    WebSocketRoute("/resume", self._gateway),  # READY's resume_gateway_url
                ]
            )
        )

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/api/v10"

    def posted(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.created)

    # -- REST --------------------------------------------------------------------------

    async def _rest(self, request: Request) -> Response:
        path = "/" + request.path_params["path"]
        with self._lock:
            self.requests.append((request.method, path))
        # An interaction's answers are authorized by its token, in the path.
        answer = await self.interactions.rest(request, path)
        if answer is not None:
            return answer
        if request.headers.get("authorization") != f"Bot {TOKEN}":
            return JSONResponse({"message": "401: Unauthorized", "code": 0}, status_code=401)
        if path == "/users/@me":
            return JSONResponse(BOT_USER | {"verified": True, "mfa_enabled": False})
        if path == "/oauth2/applications/@me":
            return JSONResponse(
                {"id": APP, "name": "groupmate", "icon": None, "description": "",
                 "bot_public": True, "bot_require_code_grant": False, "verify_key": "00ff",
                 "owner": USERS["alice"], "flags": 0, "team": None, "summary": "",
                 "bot": BOT_USER}
            )  # fmt: skip
        if path == "/gateway/bot":
            return JSONResponse(
                {"url": f"ws://127.0.0.1:{self.server.port}/gateway", "shards": 1,
                 "session_start_limit": {"total": 1000, "remaining": 999,
                                         "reset_after": 14400000, "max_concurrency": 1}}
            )  # fmt: skip
        found = re.fullmatch(r"/channels/(\d+)/messages", path)
        if found is not None and request.method == "POST":
            return self._post_message(found.group(1), json.loads(await request.body()))
        return JSONResponse({"message": "404: Not Found", "code": 0}, status_code=404)

    def _post_message(self, channel: str, body: dict[str, Any]) -> Response:
        limits = {"X-RateLimit-Limit": "5", "X-RateLimit-Bucket": "f00d",
                  "X-RateLimit-Reset": f"{time.time() + 1:.3f}"}  # fmt: skip
        with self._lock:
            self.bodies.append(body)
            if self.rate_limited > 0:
                self.rate_limited -= 1
                scope = "global" if self.global_limit else "user"
                return JSONResponse(
                    {"message": "You are being rate limited.", "retry_after": 1.0,
                     "global": self.global_limit},
                    status_code=429,
                    headers=limits | {"Retry-After": "1", "X-RateLimit-Remaining": "0",
                                      "X-RateLimit-Reset-After": "1.000",
                                      "X-RateLimit-Scope": scope, "Via": "1.1 google"},
                )  # fmt: skip
            if self.refused > 0:
                self.refused -= 1
                return JSONResponse({"message": "503: Service Unavailable", "code": 0}, 503)
            if len(str(body.get("content", ""))) > 2000:
                too_long = {"code": "BASE_TYPE_MAX_LENGTH",
                            "message": "Must be 2000 or fewer in length."}  # fmt: skip
                return JSONResponse(
                    {"message": "Invalid Form Body", "code": 50035,
                     "errors": {"content": {"_errors": [too_long]}}}, status_code=400
                )  # fmt: skip
            nonce = body.get("nonce")
            if body.get("enforce_nonce") and nonce in self._nonces:
                # Discord: the message this nonce already made, not a second one.
                return JSONResponse(self.messages[self._nonces[str(nonce)]])
            message = self._message(channel, BOT_USER, str(body.get("content", "")))
            message["nonce"] = nonce
            message["components"] = body.get("components", [])  # action rows of buttons
            reference = body.get("message_reference")
            if reference is not None:
                replied = self.messages.get(str(reference["message_id"]))
                message["type"] = 19
                message["message_reference"] = {"message_id": str(reference["message_id"]),
                                                "channel_id": channel, "type": 0}  # fmt: skip
                message["referenced_message"] = replied
            self.messages[message["id"]] = message
            self.created.append(message | {"_body": body})
            if nonce is not None and body.get("enforce_nonce"):
                self._nonces[str(nonce)] = message["id"]
            guild = self.guild_of(channel)  # a DM's echo has no guild_id at all
            self._dispatch("MESSAGE_CREATE", message | ({"guild_id": guild} if guild else {}))
            lost = self.lose_answers > 0
            self.lose_answers -= int(lost)
        if lost:  # made, but the answer does not arrive: the client may try again
            status = self.lost_status
            return JSONResponse({"message": f"{status}: lost", "code": 0}, status_code=status)
        left = {"X-RateLimit-Remaining": "4", "X-RateLimit-Reset-After": "1.000"}
        return JSONResponse(message, headers=limits | left)

    def dispatch(self, name: str, data: dict[str, Any]) -> None:
        with self._lock:
            self._dispatch(name, data)

    def guild_of(self, channel: str) -> str | None:
        return GUILD if channel in (CHANNEL, THREAD) else None

    def _message(self, channel: str, author: dict[str, Any], content: str) -> dict[str, Any]:
        mentioned = [u for u in (*USERS.values(), BOT_USER)
                     if re.search(rf"(?<!\\)<@!?{u['id']}>", content)]  # fmt: skip
        roles = [r for r in (MODS, BOT_ROLE) if re.search(rf"(?<!\\)<@&{r}>", content)]
        return {"id": snowflake(), "channel_id": channel, "author": author,
                "content": content, "timestamp": now(), "edited_timestamp": None,
                "tts": False, "mention_everyone": False, "mentions": mentioned,
                "mention_roles": roles, "attachments": [], "embeds": [], "pinned": False,
                "type": 0, "flags": 0, "components": []}  # fmt: skip

    # -- what users do -----------------------------------------------------------------

    def say(
        self,
        text: str,
        *,
        user: str = "alice",
        channel: str = CHANNEL,
        reply_to: str | None = None,
        ping: bool = True,
    ) -> dict[str, Any]:
        """A user's message, dispatched as MESSAGE_CREATE (as Discord sends it: the
        mentions resolved from the `<@id>` in the text, the author's member in a guild,
        the replied-to message in full, its author among the mentions when the reply
        pings, Discord's default)."""
        with self._lock:
            message = self._message(channel, USERS[user], text)
            guild = self.guild_of(channel)
            if guild is not None:
                message["guild_id"] = guild
                message["member"] = {"roles": ROLES.get(user, []), "joined_at": now(),
                                     "deaf": False, "mute": False, "flags": 0}  # fmt: skip
            if reply_to is not None:
                message["type"] = 19
                message["message_reference"] = {"message_id": reply_to, "channel_id": channel,
                                                "guild_id": guild, "type": 0}  # fmt: skip
                replied = self.messages.get(reply_to)
                message["referenced_message"] = replied
                if ping and replied is not None and replied["author"] not in message["mentions"]:
                    message["mentions"].append(replied["author"])
            self.messages[message["id"]] = message
            self._dispatch("MESSAGE_CREATE", message)
            return message

    def react(
        self,
        message: dict[str, Any],
        emoji: str,
        *,
        user: str = "bob",
        custom_id: str | None = None,
        remove: bool = False,
    ) -> None:
        """`user` ("bot": the bot itself) puts `emoji` on `message` (a unicode emoji, or
        with `custom_id` the name of one of the server's own), or takes it back:
        MESSAGE_REACTION_ADD / _REMOVE as Discord sends them (the reactor's member on an
        add in a server, none on a remove; the message's author on an add)."""
        person = BOT_USER if user == "bot" else USERS[user]
        channel = str(message["channel_id"])
        data: dict[str, Any] = {
            "user_id": person["id"],
            "channel_id": channel,
            "message_id": message["id"],
            "emoji": {"id": custom_id, "name": emoji} | ({"animated": False} if custom_id else {}),
            "burst": False,
            "type": 0,  # normal (1: a super reaction)
        }
        with self._lock:
            guild = self.guild_of(channel)
            if guild is not None:
                data["guild_id"] = guild
            if not remove:
                data["message_author_id"] = message["author"]["id"]
                data["burst_colors"] = []
                if guild is not None:
                    data["member"] = {"user": person, "roles": ROLES.get(user, []),
                                      "joined_at": now(), "deaf": False, "mute": False,
                                      "flags": 0}  # fmt: skip
            self._dispatch("MESSAGE_REACTION_REMOVE" if remove else "MESSAGE_REACTION_ADD", data)

    def redeliver(self, message: dict[str, Any]) -> None:
        """Dispatch a message once more (a new sequence number, the same message)."""
        with self._lock:
            self._dispatch("MESSAGE_CREATE", message)

    def drop(self) -> None:
        """Close the live gateway socket (4000: the client may resume)."""
        self._drop = 4000

    def ask_to_reconnect(self) -> None:
        """Send op 7 RECONNECT (Discord's way to move a client: it resumes elsewhere)."""
        self._drop = 0

    def _dispatch(self, name: str, data: dict[str, Any]) -> None:
        """Into the current session (none: nobody is connected, Discord delivers to no one
        later). Reactions go only to a session with the reactions intent of their place
        (a server's, or DMs'). Without the Message Content intent Discord empties the text
        of a guild message that does not mention the bot and is not the bot's."""
        session = self.current
        if session is None:
            return
        if name == "MESSAGE_CREATE" and not session.intents & MESSAGE_CONTENT:
            mine = data["author"]["id"] == BOT
            if data.get("guild_id") and not mine and BOT not in [u["id"] for u in data["mentions"]]:
                data = data | {"content": "", "embeds": [], "attachments": []}
        if name.startswith("MESSAGE_REACTION_"):  # only to a session with their intent
            wanted = GUILD_MESSAGE_REACTIONS if data.get("guild_id") else DIRECT_MESSAGE_REACTIONS
            if not session.intents & wanted:
                return
        seq = len(session.events) + 1
        session.events.append({"op": 0, "t": name, "s": seq, "d": data})

    # -- the gateway -------------------------------------------------------------------

    async def _gateway(self, socket: WebSocket) -> None:
        if self.refuse_gateway:
            await socket.close()  # before accepting: the handshake is refused
            return
        await socket.accept()
        query = socket.query_params
        if query.get("encoding") != "json" or query.get("v") != "10":
            await socket.close(code=4012)  # invalid API version / encoding
            return
        compression = query.get("compress")
        self.compressed.append(compression)
        pack = _packer(compression)

        async def send(payload: dict[str, Any]) -> None:
            text = json.dumps(payload)
            await (socket.send_text(text) if pack is None else socket.send_bytes(pack(text)))

        hello = {"heartbeat_interval": self.heartbeat_ms}
        await send({"op": 10, "d": hello, "s": None, "t": None})
        replies: asyncio.Queue[dict[str, Any] | int] = asyncio.Queue()
        state: dict[str, Any] = {"session": None, "sent": 0}
        receiving = asyncio.create_task(self._receive(socket, replies, state))
        try:
            while not receiving.done():
                while not replies.empty():
                    reply = replies.get_nowait()
                    if isinstance(reply, int):  # a close code
                        self.close_codes.append(reply)
                        await socket.close(code=reply)
                        return
                    await send(reply)
                session: Session | None = state["session"]
                if session is not None:
                    with self._lock:
                        waiting = session.events[state["sent"] :]
                        state["sent"] = len(session.events)
                    for event in waiting:
                        await send(event)
                if self._drop is not None:
                    code, self._drop = self._drop, None
                    if code == 0:  # RECONNECT: the client closes and resumes
                        await send({"op": 7, "d": None, "s": None, "t": None})
                    else:
                        self.close_codes.append(code)
                        await socket.close(code=code)
                        return
                await asyncio.sleep(0.01)
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            receiving.cancel()

    async def _receive(
        self, socket: WebSocket, replies: asyncio.Queue[dict[str, Any] | int], state: dict[str, Any]
    ) -> None:
        with contextlib.suppress(WebSocketDisconnect, RuntimeError):
            while True:
                payload = json.loads(await socket.receive_text())
                op, data = payload.get("op"), payload.get("d")
                if op == 1:  # heartbeat: d is the client's last sequence number
                    with self._lock:
                        self.heartbeats.append(data)
                    replies.put_nowait({"op": 11, "d": None, "s": None, "t": None})
                else:
                    answer = {2: self._identify, 6: self._resume}.get(op, _nothing)(data, state)
                    if answer is not None:
                        replies.put_nowait(answer)

    def _identify(self, data: dict[str, Any], state: dict[str, Any]) -> int | None:
        with self._lock:
            self.identifies.append(data)
            if not _identify_shaped(data):
                return 4002  # decode error: not an IDENTIFY Discord reads
            if data["token"] != self.gateway_token:
                return 4004
            intents = data["intents"]
            if intents & MESSAGE_CONTENT and not self.message_content_enabled:
                return 4014
            session = Session(id=f"session-{len(self.sessions) + 1}", intents=intents)
            self.sessions[session.id] = session
            self.current = session
            state["session"], state["sent"] = session, 0
            resume_url = f"ws://127.0.0.1:{self.server.port}/resume"
            ready = {"v": 10, "user": BOT_USER, "guilds": [{"id": GUILD, "unavailable": True}],
                     "session_id": session.id, "resume_gateway_url": resume_url,
                     "session_type": "normal", "private_channels": [],
                     "application": {"id": APP, "flags": 0}}  # fmt: skip
            self._dispatch("READY", ready)
            self._dispatch("GUILD_CREATE", guild_create())
            return None

    def _resume(self, data: dict[str, Any], state: dict[str, Any]) -> dict[str, Any] | int | None:
        with self._lock:
            self.resumes.append(data)
            if data.get("token") != self.gateway_token:
                return 4004
            session = self.sessions.get(str(data.get("session_id")))
            if session is None or session is not self.current:
                return {"op": 9, "d": False, "s": None, "t": None}  # invalid session
            # Replays what came after the client's last sequence, then RESUMED.
            state["session"], state["sent"] = session, int(data.get("seq") or 0)
            self._dispatch("RESUMED", {})
            return None


def _identify_shaped(data: Any) -> bool:
    """IDENTIFY's required fields: token, intents and the connection properties."""
    properties = data.get("properties") if isinstance(data, dict) else None
    return (
        isinstance(data.get("token"), str)
        and isinstance(data.get("intents"), int)
        and isinstance(properties, dict)
        and all(isinstance(properties.get(k), str) for k in ("os", "browser", "device"))
    )


def _packer(compression: str | None) -> Callable[[str], bytes] | None:
    """Transport compression: one stream per connection, each message flushed whole.
    zstd-stream is written as one zstd frame of raw blocks (RFC 8878: a frame header,
    then blocks of a 3-byte header each), which any zstd decoder reads; zlib-stream
    ends each message with the Z_SYNC_FLUSH suffix."""
    if compression == "zlib-stream":
        packer = zlib.compressobj()
        return lambda text: packer.compress(text.encode()) + packer.flush(zlib.Z_SYNC_FLUSH)
    if compression == "zstd-stream":
        # Magic number, no content size or checksum, a 128 KiB window (the block size).
        header = [b"\x28\xb5\x2f\xfd\x00\x38"]

        def zstd(text: str) -> bytes:
            data, block = text.encode(), 1 << 17
            chunks = [data[i : i + block] for i in range(0, len(data), block)]
            raw = b"".join((len(c) << 3).to_bytes(3, "little") + c for c in chunks)
            return (header.pop() if header else b"") + raw

        return zstd
    return None


def _nothing(data: Any, state: dict[str, Any]) -> None:
    return None  # other opcodes (presence updates): nothing to answer
