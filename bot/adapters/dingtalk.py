"""DingTalk: an app's robot, by dingtalk-stream's Stream mode (the bot opens a WebSocket
to DingTalk: POST /v1.0/gateway/connections/open with the Client ID/Secret gives an
endpoint and a ticket) or by HTTP callbacks (DingTalk posts each message to
/dingtalk/events on `groupmate serve`'s port, signed with the app secret).

Chat ids are "dt:<conversationId>" (a group's openConversationId), user ids
"dt:<staffId>" (or the DingTalk id of someone outside the org). DingTalk delivers the
single chats with the robot and the group messages that @ it. Each message is
acknowledged before it is answered (Stream: the library's ack frame, code 200, with the
frame's messageId; HTTP: a 200); DingTalk re-pushes one whose ack came late, with the
same `msgId`, which is the message's id: the chat log acts on an id once, also after a
restart.

Replies go through the message's session webhook while it is valid (it notifies the
people it @-s); reminders too when their chat has a valid one, else the robot's
proactive send (groupMessages/send, oToMessages/batchSend), which shows "@name" but
notifies no one. DingTalk has no idempotency key on any send: a send whose answer is lost
(a timeout after DingTalk took it) may be retried by the reminder engine and show twice;
that window is one request's timeout (README, "DingTalk").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any
from urllib.parse import quote_plus

import websockets
from dingtalk_stream import AckMessage, CallbackHandler, ChatbotMessage, Credential
from dingtalk_stream import DingTalkStreamClient as StreamClient
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from bot.adapters.base import BotHost, connection_state, mention_pieces, mention_targets, split_text
from bot.adapters.dingtalk_api import (
    CredentialsRefused,
    DingTalkError,
    OpenApi,
    fingerprint,
    redact_urls_in_logs,
    signed_by_dingtalk,
)
from bot.adapters.dingtalk_events import PREFIX, Hook, hook_of, incoming, parse, sender_of
from bot.config import DingTalkSettings
from bot.messages import Reply
from storage import Member, OutgoingMessage, SendError, utc_now
from storage.adapter_state import load_state, save_state

log = logging.getLogger(__name__)

EVENTS_PATH = "/dingtalk/events"
MESSAGE_LIMIT = 4000  # characters of one text message (DingTalk takes 20,000 bytes)
_BACKOFF_MAX = 30.0
_HOOK_MARGIN_MS = 60_000  # a session webhook this close to its expiry is not used
_MAX_BODY = 256 * 1024
# The library's client logger announces each connection at INFO, and its own
# `start` loop (not used: see _stream_once) logs the ticket there; it also warns about
# every keep-alive ping as an "unknown topic". Its errors stay visible.
logging.getLogger("dingtalk_stream.client").setLevel(logging.ERROR)


class _Callbacks(CallbackHandler):  # type: ignore[misc]  # dingtalk_stream has no hints
    """The robot-message topic's handler: hands the payload on and acknowledges at once
    (the library sends the ack frame with the code returned here)."""

    def __init__(self, accept: Any) -> None:
        super().__init__()
        self._accept = accept

    async def process(self, message: Any) -> tuple[int, str]:
        self._accept(message.data)
        return AckMessage.STATUS_OK, "OK"


class DingTalkAdapter:
    """One DingTalk app's robot, in the groups it was added to and its single chats."""

    name = "dingtalk"
    chat_prefix = PREFIX

    def __init__(self, settings: DingTalkSettings, *, bot_name: str) -> None:
        assert settings.client_id is not None and settings.client_secret is not None
        self._settings = settings
        self._bot_name = bot_name
        self._secret = settings.client_secret.get_secret_value()
        redact_urls_in_logs()
        self._api = OpenApi(settings)
        self._stream = StreamClient(
            Credential(settings.client_id, self._secret),
            logger=logging.getLogger("dingtalk_stream.client"),
        )
        self._stream.register_callback_handler(ChatbotMessage.TOPIC, _Callbacks(self._accept))
        # The library's documented endpoint constant, a class attribute it reads as
        # DingTalkStreamClient.OPEN_CONNECTION_API: the config's api_url overrides it.
        StreamClient.OPEN_CONNECTION_API = f"{self._api_base}/v1.0/gateway/connections/open"
        self._bot: BotHost | None = None
        self._hooks: dict[str, Hook] = {}  # conversation -> its freshest session webhook
        self._private: dict[str, str] = {}  # single-chat conversation -> the person's id
        self._seen: dict[str, dict[str, Member]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._runner: asyncio.Task[None] | None = None
        self._connected_since: datetime | None = None
        self._last_event: datetime | None = None
        self._last_error: str | None = None
        self._auth_failed = False
        self._stopped = False

    @property
    def _api_base(self) -> str:
        return self._settings.api_url.rstrip("/")

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self, bot: BotHost) -> None:
        self._bot = bot
        self._runner = asyncio.create_task(self._run(), name="dingtalk")

    async def _run(self) -> None:
        """Get a token (a refused secret is told apart here and not retried), then in
        Stream mode hold the connection, reconnecting with backoff."""
        backoff = 1.0
        while not self._stopped:
            try:
                await self._api.token()
                if self._settings.mode == "http":
                    self._up()
                    return
                if await self._stream_once():
                    backoff = 1.0  # it was up: the next try comes soon
            except CredentialsRefused as exc:
                self._auth_failed, self._last_error = True, str(exc)
                log.error("dingtalk: %s (check adapters.dingtalk.client_secret)", exc)
                return
            except DingTalkError as exc:
                self._last_error = str(exc)
            self._connected_since = None
            log.warning("dingtalk: %s; reconnecting in %.0fs", self._last_error, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX)

    async def _stream_once(self) -> bool:
        """One Stream connection, until it ends; whether it opened. The library opens
        it, parses each frame, runs the handler and sends the ack; this loop replaces
        the library's `start`, which blocks the event loop on an untimed request, retries
        every 10 s without backoff and can't report its state."""
        timeout = self._settings.timeout
        try:
            opened = await asyncio.wait_for(
                asyncio.to_thread(self._stream.open_connection), timeout
            )
        except TimeoutError:
            opened = None
        if not isinstance(opened, dict) or not opened.get("endpoint") or not opened.get("ticket"):
            self._last_error = "gateway/connections/open: refused or unreachable"
            return False
        uri = f"{opened['endpoint']}?ticket={quote_plus(str(opened['ticket']))}"
        was_up = False
        try:
            async with websockets.connect(uri, open_timeout=timeout) as socket:
                self._stream.websocket = socket
                self._up()
                was_up = True
                async for raw in socket:
                    if await self._frame(raw) == StreamClient.TAG_DISCONNECT:
                        break  # DingTalk moves the client: connect anew
            self._last_error = "stream: closed by DingTalk"
        except (OSError, TimeoutError, websockets.WebSocketException) as exc:
            self._last_error = f"stream: {type(exc).__name__}"
        return was_up

    def _up(self) -> None:
        self._connected_since = utc_now()
        self._last_error = None
        log.info(
            "dingtalk: connected (%s mode, robot %s)", self._settings.mode, self._api.robot_code
        )

    async def _frame(self, raw: str | bytes) -> str:
        """One frame through the library (parsed, handled, acked); its result."""
        try:
            result = await self._stream.route_message(json.loads(raw))
        except websockets.ConnectionClosed:
            raise  # the ack could not go out: the connection is gone
        except Exception as exc:  # a frame from the network must not end the connection
            log.warning("dingtalk: an unreadable stream frame dropped (%s)", type(exc).__name__)
            return ""
        return str(result or "")

    async def stop(self) -> None:
        self._stopped = True
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        self._connected_since = None
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=10)
        for task in self._tasks:
            task.cancel()
        await self._api.aclose()

    # -- incoming ----------------------------------------------------------------------

    def routes(self) -> Sequence[BaseRoute]:
        if self._settings.mode != "http":
            return ()
        return (Route(EVENTS_PATH, self._events, methods=["POST"]),)

    async def _events(self, request: Request) -> Response:
        if self._bot is None:
            return Response(status_code=503)
        headers = request.headers
        if not signed_by_dingtalk(headers.get("timestamp"), headers.get("sign"), self._secret):
            log.warning("dingtalk: a callback without a valid signature refused (401)")
            return Response(status_code=401)
        body = await request.body()
        if len(body) > _MAX_BODY:
            log.warning("dingtalk: a callback of %d bytes refused", len(body))
            return Response(status_code=413)
        try:
            data = json.loads(body)
        except ValueError:
            log.warning("dingtalk: a callback that is not JSON refused")
            return Response(status_code=400)
        self._accept(data)
        # Answered at once (DingTalk re-pushes a slow one); the reply goes by webhook.
        return JSONResponse({})

    def _accept(self, data: Any) -> None:
        """A robot message from either mode: answered in a task, after the ack."""
        self._last_event = utc_now()
        message = parse(data)
        if message is None:
            log.warning("dingtalk: a robot message without msgId/conversation/sender dropped")
            return
        task = asyncio.create_task(self._answer(message))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, message: ChatbotMessage) -> None:
        assert self._bot is not None
        conversation = str(message.conversation_id)
        try:
            hook = hook_of(message)
            known = self._hooks.get(conversation)
            if hook is not None and (known is None or hook.expires_ms >= known.expires_ms):
                self._hooks[conversation] = hook
            sender = sender_of(message)
            if message.conversation_type == "1":
                await self._remember_private(conversation, sender.user_id)
            chat_id = f"{PREFIX}{conversation}"
            seen = self._seen.setdefault(chat_id, {})
            seen[sender.user_id] = sender
            note = incoming(message, bot_name=self._bot_name, seen=seen)
            for member in note.mentions:
                if member.name != member.user_id.removeprefix(PREFIX):
                    seen.setdefault(member.user_id, member)

            async def deliver(replies: list[Reply]) -> None:
                for reply in replies:
                    await self._send_text(conversation, reply.text, ())

            await self._bot.handle(note, deliver)
        except Exception as exc:
            log.error("dingtalk: answering a message failed: %s", _safe(exc))
            log.debug("dingtalk: the failure", exc_info=True)

    async def _remember_private(self, conversation: str, user_id: str) -> None:
        """A single chat's person, kept in the database: a reminder there after a
        restart (its webhook gone) is sent to them by oToMessages/batchSend."""
        person = user_id.removeprefix(PREFIX)
        if self._private.get(conversation) == person:
            return
        self._private[conversation] = person
        reminders = self._bot.reminders if self._bot is not None else None
        if reminders is not None:
            await save_state(reminders.database, f"dingtalk:single:{conversation}", person)

    async def _single_chat_person(self, conversation: str) -> str | None:
        if conversation not in self._private:
            reminders = self._bot.reminders if self._bot is not None else None
            if reminders is None:
                return None
            person = await load_state(reminders.database, f"dingtalk:single:{conversation}")
            if person is None:
                return None
            self._private[conversation] = person
        return self._private[conversation]

    async def find(self, chat_id: str, name: str) -> Member | None:
        """The member seen in the chat (a sender, or someone @-ed) by that nick or id;
        DingTalk lets a robot list no group's members. Two by one name: no one."""
        wanted = name.casefold().lstrip("@")
        found = [
            member
            for member in self._seen.get(chat_id, {}).values()
            if wanted in (member.name.casefold(), member.user_id.casefold().removeprefix(PREFIX))
        ]
        return found[0] if len(found) == 1 else None

    # -- outgoing ----------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> str | None:
        if not message.chat_id.startswith(PREFIX):
            raise SendError(f"not a DingTalk chat id: {message.chat_id}")
        if self._stopped:
            raise SendError("the dingtalk adapter is stopped")  # retried after a restart
        conversation = message.chat_id.removeprefix(PREFIX)
        try:
            return await self._send_text(conversation, message.text, message.people)
        except DingTalkError as exc:
            raise SendError(f"dingtalk {exc}") from None

    async def _send_text(self, conversation: str, text: str, people: Sequence[Member]) -> str:
        """`text` in pieces, by the chat's session webhook while it is valid (its @s
        notify), else by the proactive API; the id a quote of the first piece gives."""
        pieces = [p for p in split_text(text, MESSAGE_LIMIT) if p.strip()] or [text]
        for piece in pieces:
            hook = self._hooks.get(conversation)
            if hook is not None and hook.expires_ms - _HOOK_MARGIN_MS > time.time() * 1000:
                content, at_ids = render_mentions(piece, people)
                try:
                    await self._api.webhook_send(hook.url, content, at_ids)
                    continue
                except DingTalkError as exc:
                    if exc.status == 0 or exc.code == "rate limited":
                        raise  # maybe taken, or still too fast: the engine retries later
                    # DingTalk refused the session (it ended early): the robot's own send.
                    log.warning("dingtalk: %s; sending without the session webhook", exc)
                    self._hooks.pop(conversation, None)
            if (person := await self._single_chat_person(conversation)) is not None:
                await self._api.private_send(person, piece)
            else:
                await self._api.group_send(conversation, piece)
        return fingerprint(conversation, pieces[0])

    def status(self) -> dict[str, Any]:
        connected = self._connected_since is not None
        state = connection_state(
            connected=connected, auth_failed=self._auth_failed, last_error=self._last_error
        )
        return {
            "state": state,
            "connected": connected,
            "mode": self._settings.mode,
            "robot_code": self._api.robot_code,
            "since": self._connected_since.isoformat() if self._connected_since else None,
            "last_event": self._last_event.isoformat() if self._last_event else None,
            "last_error": self._last_error,
        }


def render_mentions(text: str, people: Sequence[Member]) -> tuple[str, list[str]]:
    """`text` for a session webhook, each "@name" of `people` as "@<their id>" (where
    DingTalk puts the @ it notifies), and those ids for the message's `at`."""
    ids = mention_targets(people, PREFIX)
    parts: list[str] = []
    at_ids: list[str] = []
    for piece, mention in mention_pieces(text, ids):
        if mention:
            parts.append(f"@{ids[piece]}")
            at_ids.append(ids[piece])
        else:
            parts.append(piece)
    return "".join(parts), list(dict.fromkeys(at_ids))


def _safe(exc: Exception) -> str:
    """An error for the log: DingTalk's codes, others by type only (no URLs, tokens)."""
    return str(exc) if isinstance(exc, DingTalkError | SendError) else type(exc).__name__
