"""DingTalk: an app's robot, by dingtalk-stream's Stream mode (the bot opens a WebSocket
to DingTalk: POST /v1.0/gateway/connections/open with the Client ID/Secret gives an
endpoint and a ticket) or by HTTP callbacks (DingTalk posts each message to
/dingtalk/events on `groupmate serve`'s port, signed with the app secret).

Chat ids are "dt:<conversationId>" (a group's openConversationId), user ids
"dt:<staffId>" (or the DingTalk id of someone outside the org). DingTalk delivers single
chats with the robot and the group messages that @ it, each acknowledged before it is
answered (Stream: the library's ack frame; HTTP: a 200); it re-pushes one whose ack came
late with the same `msgId`, the message's id: the chat log acts on an id once, also
after a restart.

Replies go through the message's session webhook while it is valid (it notifies the
people it @-s), each piece tried three times (the message was acknowledged: DingTalk
won't bring it back). Reminders too when their chat has a valid one; else the robot's
proactive send: groupMessages/send in a group, which shows "@Name" but can't @ anyone,
so each person it mentions (by staff id: someone outside the org has none, and is only
logged) also gets it in their single chat with the robot (one oToMessages/batchSend,
which notifies); oToMessages/batchSend for a single chat.

DingTalk has no idempotency key on any send. A reminder's send is one request (a rate
limit fails it at once; the reminder engine retries with backoff): one whose answer is
lost (a timeout, or the engine's 30 s cancel, after DingTalk took it) is retried and
shows twice; a reminder of several pieces whose later piece fails is sent again whole
(docs/platforms/dingtalk.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import time
from collections.abc import Coroutine, Sequence
from typing import Any, Literal
from urllib.parse import quote_plus

import websockets
from dingtalk_stream import AckMessage, CallbackHandler, ChatbotMessage, Credential
from dingtalk_stream import DingTalkStreamClient as StreamClient
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from groupmate.bot.adapters.base import (
    BotHost,
    Link,
    finish,
    mention_targets,
    platform_chat,
    sent_with_retries,
    split_text,
)
from groupmate.bot.adapters.dingtalk_api import (
    CredentialsRefused,
    DingTalkError,
    OpenApi,
    redact_urls_in_logs,
)
from groupmate.bot.adapters.dingtalk_cards import CARD_TOPIC
from groupmate.bot.adapters.dingtalk_events import (
    Hook,
    fingerprint,
    hook_of,
    incoming,
    parse,
    render_mentions,
    sender_of,
    title_of,
)
from groupmate.bot.adapters.dingtalk_http import UsedSignatures, callback_payload
from groupmate.bot.adapters.dingtalk_people import PREFIX, People
from groupmate.bot.adapters.dingtalk_presses import CardCallbacks, DingTalkCards
from groupmate.bot.adapters.dingtalk_settings import DingTalkSettings
from groupmate.bot.messages import Reply
from groupmate.storage import Member, OutgoingMessage, SendError, StorageError, utc_now
from groupmate.storage.database import Database
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)

EVENTS_PATH = "/dingtalk/events"
MESSAGE_LIMIT = 4000  # characters of one text message (DingTalk takes 20,000 bytes)
_BACKOFF_MAX = 30.0
_STEADY = 30.0  # seconds a connection must stay up before the backoff starts anew
_HOOK_MARGIN_MS = 60_000  # a session webhook this close to its expiry is not used
# DingTalk's answer to a session webhook whose session ended before its stated expiry:
# the robot's own send takes over. Any other refusal keeps the webhook.
_SESSION_ENDED = ("errcode 300001",)
# The library's client logger warns about every keep-alive ping as an "unknown topic"
# (its `start` loop, not used: see _stream_once, logs the ticket). Its errors stay.
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
        # The library parses frames, runs the handler and sends its ack; the connection
        # is opened here (_stream_once), by the adapter's own client with a timeout.
        self._stream = StreamClient(
            Credential(settings.client_id, self._secret),
            logger=logging.getLogger("dingtalk_stream.client"),
        )
        self._stream.register_callback_handler(ChatbotMessage.TOPIC, _Callbacks(self._accept))
        self._bot: BotHost | None = None
        self._hooks: dict[str, Hook] = {}  # conversation -> its freshest session webhook
        self._people = People(self._database)
        self._cards: DingTalkCards | None = None  # reminders' buttons (dingtalk_cards.py)
        if settings.card_template_id and settings.mode == "stream":
            template = settings.card_template_id
            cards = DingTalkCards(self._api, self._people, template, lambda: self._bot)
            # A press: acknowledged at once, acted on in a task.
            pressed = CardCallbacks(lambda data, frame: self._spawn(cards.accept(data, frame)))
            self._stream.register_callback_handler(CARD_TOPIC, pressed)
            self._cards = cards
        self._signatures = UsedSignatures()
        self._tasks: set[asyncio.Task[None]] = set()
        self._runner: asyncio.Task[None] | None = None
        self._link = Link()
        self._stopped = False

    def _database(self) -> Database | None:
        return self._bot.database if self._bot is not None else None

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self, bot: BotHost) -> None:
        self._bot = bot
        self._runner = asyncio.create_task(self._run(), name="dingtalk")

    async def _run(self) -> None:
        """HTTP mode: check the credentials by getting a token. Stream mode: hold the
        connection, reconnecting with backoff. A refused secret is not retried; anything
        else (a throttle, a proxy's page, a network error) is, and never ends the loop."""
        backoff = 1.0
        while not self._stopped:
            up_for = 0.0
            try:
                if self._settings.mode == "http":
                    await self._api.token()
                    self._up()
                    return
                up_for = await self._stream_once()
            except CredentialsRefused as exc:
                self._link.auth_failed, self._link.last_error = True, str(exc)
                log.error("dingtalk: %s (check adapters.dingtalk.client_secret)", exc)
                return
            except DingTalkError as exc:
                self._link.last_error = str(exc)
            except Exception as exc:  # an answer no one foresaw must not end the loop
                self._link.last_error = f"stream: {type(exc).__name__}"
            self._link.since = None
            if up_for >= _STEADY:
                backoff = 1.0  # it was up a while: this is a new trouble
            log.warning("dingtalk: %s; reconnecting in %.0fs", self._link.last_error, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX)

    async def _stream_once(self) -> float:
        """One Stream connection, until it ends; how long it was up. This replaces the
        library's `start`, which opens it by an untimed blocking request, retries every
        10 s without backoff and can't report its state."""
        topics = list(self._stream.callback_handler_map)
        ticket = await self._api.open_stream(topics, self._stream.get_host_ip())
        uri = f"{ticket.endpoint}?ticket={quote_plus(ticket.ticket)}"
        began: float | None = None
        try:
            async with websockets.connect(uri, open_timeout=self._settings.timeout) as socket:
                self._stream.websocket = socket
                self._up()
                began = time.monotonic()
                async for raw in socket:
                    if await self._frame(raw) == StreamClient.TAG_DISCONNECT:
                        break  # DingTalk moves the client: connect anew
            self._link.last_error = "stream: closed by DingTalk"
        except (OSError, TimeoutError, websockets.WebSocketException) as exc:
            self._link.last_error = f"stream: {type(exc).__name__}"
        return 0.0 if began is None else time.monotonic() - began

    def _up(self) -> None:
        self._link.since = utc_now()
        self._link.last_error = None
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
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._runner
        self._link.since = None
        await finish(self._tasks)  # they end before the client they use is closed
        await self._api.aclose()

    # -- incoming ----------------------------------------------------------------------

    def routes(self) -> Sequence[BaseRoute]:
        if self._settings.mode != "http":
            return ()
        return (Route(EVENTS_PATH, self._events, methods=["POST"]),)

    async def _events(self, request: Request) -> Response:
        if self._bot is None or self._stopped:
            return Response(status_code=503)  # DingTalk re-pushes it later
        data = await callback_payload(request, self._secret, self._signatures)
        if isinstance(data, Response):
            return data
        self._accept(data)
        # Answered at once (DingTalk re-pushes a slow one); the reply goes by webhook.
        return JSONResponse({})

    def _accept(self, data: Any) -> None:
        """A robot message from either mode: answered in a task, after the ack."""
        self._link.last_event = utc_now()
        message = parse(data)
        if message is None:
            log.warning("dingtalk: a robot message without msgId/conversation/sender dropped")
            return
        self._spawn(self._answer(message))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, message: ChatbotMessage) -> None:
        bot = self._bot
        assert bot is not None
        conversation = str(message.conversation_id)
        try:
            hook = hook_of(message)
            known = self._hooks.get(conversation)
            if hook is not None and (known is None or hook.expires_ms >= known.expires_ms):
                self._hooks[conversation] = hook
            sender = sender_of(message)
            if message.conversation_type == "1":
                await self._people.saw_single_chat(conversation, sender.user_id)
            seen = await self._people.members(conversation)
            seen[sender.user_id] = sender
            note = incoming(message, bot_name=self._bot_name, seen=seen)
            await self._people.saw(conversation, sender, note.mentions, title_of(message))

            async def deliver(replies: list[Reply]) -> None:
                for reply in replies:
                    sent, _ = await self._send_text(
                        conversation, reply.text, (), answer=True, all_=False
                    )
                    if reply.reminder_id is not None:
                        await bot.posted(reply, sent)

            await bot.handle(note, deliver)
        except Exception as exc:
            log.error("dingtalk: answering a message failed: %s", safe_error(exc, DingTalkError))
            log.debug("dingtalk: the failure", exc_info=True)

    async def find(self, chat_id: str, name: str) -> Member | None:
        """The member seen in the chat (a sender, or someone @-ed) by that nick or id;
        DingTalk lets a robot list no group's members. Two by one name: no one."""
        if not chat_id.startswith(PREFIX):
            return None
        return await self._people.find(chat_id.removeprefix(PREFIX), name)

    # -- outgoing ----------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> str | None:
        conversation = platform_chat(message, PREFIX, "DingTalk", stopped=self._stopped)
        try:
            if self._cards is not None and await self._cards.send(conversation, message):
                return fingerprint(conversation, message.text)  # its @s notified
            sent_id, notified = await self._send_text(
                conversation, message.text, message.people, answer=False, all_=message.everyone
            )
        except DingTalkError as exc:
            raise SendError(f"dingtalk {exc}") from None
        except StorageError as exc:
            raise SendError(f"dingtalk: the database ({type(exc).__name__})") from None
        if not notified and message.people and message.kind == "reminder":
            # Off the engine's clock: the group message is sent, and a retry of it
            # would show it twice.
            self._spawn(self._notify(conversation, message.text, message.people))
        return sent_id

    async def _notify(self, conversation: str, text: str, people: Sequence[Member]) -> None:
        """A reminder the group was sent without an @ (the robot's own send can't @),
        to each person it mentions in their single chat with the robot, which notifies."""
        ids = list(mention_targets(people, PREFIX).values())
        staff = [i for i in dict.fromkeys(ids) if not i.startswith("$:")]
        if len(staff) < len(set(ids)):
            log.warning(
                "dingtalk: %d mentioned people outside the org can't be sent a reminder in "
                "their single chat (DingTalk takes staff ids only): shown by name only",
                len(set(ids)) - len(staff),
            )
        if not staff:
            return
        place = await self._people.title(conversation) or "your group"
        body = f"⏰ Reminder in {place}: {text.removeprefix('⏰').lstrip()}"
        try:
            refused = await self._api.private_send(staff, body, wait=True)
        except DingTalkError as exc:
            log.warning("dingtalk: a reminder's single-chat notices failed: %s", exc)
            return
        if refused:
            log.warning("dingtalk: %d single-chat notices not taken by DingTalk", len(refused))

    async def _send_text(
        self, conversation: str, text: str, people: Sequence[Member], *, answer: bool, all_: bool
    ) -> tuple[str, bool]:
        """`text` in pieces (an answer's each tried three times: its message was
        acknowledged); the id a quote of the first piece gives, and whether it notified
        (a session webhook's @s do, a single chat's message does; the group API can't).
        `all_`: the first piece @s everyone too, where it can (a session webhook)."""
        pieces = [p for p in split_text(text, MESSAGE_LIMIT) if p.strip()] or [text]
        notified = True
        for index, piece in enumerate(pieces):
            first = all_ and index == 0
            send = functools.partial(self._send_piece, conversation, piece, people, answer, first)
            if answer:
                route = await sent_with_retries(send, what="dingtalk: an answer")
            else:
                route = await send()
            notified = notified and route != "group"  # a single chat's message notifies
        return fingerprint(conversation, pieces[0]), notified

    async def _send_piece(
        self, conversation: str, piece: str, people: Sequence[Member], wait: bool, everyone: bool
    ) -> Literal["session", "group", "single"]:
        """One piece by the chat's session webhook while it is valid, else by the
        robot's own send; which way it went."""
        hook = self._hooks.get(conversation)
        if hook is not None and hook.expires_ms - _HOOK_MARGIN_MS > time.time() * 1000:
            content, at_ids = render_mentions(piece, people)
            try:
                await self._api.webhook_send(
                    hook.url, content, at_ids, wait=wait, everyone=everyone
                )
                return "session"
            except DingTalkError as exc:
                # Unreachable, a 5xx (maybe taken), too fast, or a refused message: the
                # caller (or the engine) tries again later. Only a session DingTalk ended
                # early goes to the robot's own send.
                if exc.code not in _SESSION_ENDED:
                    raise
                log.warning("dingtalk: %s; sending without the session webhook", exc)
                if self._hooks.get(conversation) is hook:  # not a fresher one meanwhile
                    del self._hooks[conversation]
        person = await self._people.single_chat_person(conversation)
        if person is None:
            await self._api.group_send(conversation, piece, wait=wait)
            return "group"
        if person.startswith("$:"):
            raise DingTalkError("oToMessages/batchSend", 0, "a person outside the org")
        if await self._api.private_send([person], piece, wait=wait):
            raise DingTalkError("oToMessages/batchSend", 200, "not taken")
        return "single"

    def status(self) -> dict[str, Any]:
        return self._link.status(
            mode=self._settings.mode,
            robot_code=self._api.robot_code,
        )
