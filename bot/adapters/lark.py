"""Lark/Feishu: lark-oapi, with events by webhook (Lark posts to /lark/events on
`groupmate serve`) or by the long connection (a WebSocket the bot opens to Lark).

Chat ids are "lk:<chat_id>" (oc_…), user ids "lk:<open_id>" (ou_…). With an encrypt key
set, Lark encrypts each event (AES-256-CBC) and signs the post; the verification token
is in every event. A post that fails a check is answered 401 and nothing runs. Each
event is acknowledged at once (Lark wants an answer within 1 s, else it pushes again)
and the message is answered after.

Lark re-pushes an event it got no timely answer for (a webhook post answered other than
200, a long-connection frame not acknowledged), with the same message: the message id
(om_…) is its id, and the chat log acts on an id once, for as long as it keeps the
message (`retention`: 30 days or 5000 messages a chat by default). A signed post
replayed after that (its timestamp is not checked: see lark_events.py) would be acted
on again: a command in it, such as setting a reminder, would run again. Until the bot
has its open_id, and after it stopped, posts are answered 503: Lark pushes them again.

Replies go through the reply API (in the thread when the message was in one) and
reminders are new messages, each with a `uuid` derived from the message it answers or
the reminder's occurrence: Lark posts one message per uuid within an hour, so a send
tried again after a lost answer does not post twice within that hour.

Reactions (im.message.reaction.created_v1 / deleted_v1, by either mode) are reported to
the bot for its digests, by `LarkReactions` (lark_reactions.py): it remembers each
message's chat, runs each message's work in order and drops reactions pushed late.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import itertools
import logging
from collections import deque
from collections.abc import Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.bot.adapters.base import (
    BotHost,
    Link,
    Piece,
    connection_status,
    finish,
    mention_targets,
    platform_chat,
    send_in_pieces,
    sent_with_retries,
    split_text,
)
from groupmate.bot.adapters.lark_api import LarkApi, LarkError
from groupmate.bot.adapters.lark_cards import CARD_EVENT, lark_content
from groupmate.bot.adapters.lark_events import (
    Malformed,
    Refused,
    mentions_of,
    open_webhook,
    text_of,
)
from groupmate.bot.adapters.lark_people import LarkPeople
from groupmate.bot.adapters.lark_presses import LarkPresses
from groupmate.bot.adapters.lark_reactions import REACTION_EVENTS, LarkReactions, lark_time
from groupmate.bot.adapters.lark_settings import LarkSettings
from groupmate.bot.adapters.lark_ws import LongConnection
from groupmate.bot.messages import IncomingMessage, Reply
from groupmate.storage import Member, OutgoingMessage, SendError, utc_now
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)

EVENTS_PATH = "/lark/events"
MESSAGE_LIMIT = 4000  # characters of one text message (Lark takes 150 KB; this reads well)
_BACKOFF_MAX = 60.0
_SENT_REMEMBERED = 1000  # ids of the bot's own recent messages, for "a reply to the bot"
_MESSAGE_EVENT = "im.message.receive_v1"


class LarkAdapter:
    """One Lark/Feishu custom app's bot, in the chats it was added to."""

    name = "lark"
    chat_prefix = CHAT_PREFIXES["lark"]

    def __init__(self, settings: LarkSettings, *, bot_name: str) -> None:
        self._settings = settings
        self._bot_name = bot_name
        self._api = LarkApi(settings)
        self._bot: BotHost | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._me = ""  # the bot's open_id
        self._sent: deque[str] = deque(maxlen=_SENT_REMEMBERED)
        self._people = LarkPeople(self._api)
        self._tasks: set[asyncio.Task[None]] = set()
        self._reactions = LarkReactions(
            self._api,
            self._tasks,
            me=lambda: self._me,
            describe=lambda exc: safe_error(exc, LarkError),
        )
        self._presses = LarkPresses(
            self._api,
            self._reactions,
            self._tasks,
            name=self._people.name,
            is_admin=self._people.is_admin,
        )
        self._connector: asyncio.Task[None] | None = None
        self._long: LongConnection | None = None
        self._ready = asyncio.Event()
        self._link = Link()
        self._stopped = False

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self, bot: BotHost) -> None:
        self._bot = bot
        self._reactions.start(bot)
        self._presses.start(bot)
        self._loop = asyncio.get_running_loop()
        self._connector = asyncio.create_task(self._connect(), name="lark")

    async def _connect(self) -> None:
        """The tenant token and the bot's own open_id (to know a mention of itself), then
        the long connection in websocket mode."""
        backoff = 1.0
        while True:
            try:
                info = await self._api.bot_info()
                self._me = str(info.get("open_id") or "")
                if not self._me:
                    raise LarkError("bot info", "no open_id")
            except LarkError as exc:
                self._link.last_error = str(exc)
                if exc.auth:
                    self._link.auth_failed = True
                    log.error("lark: %s (check adapters.lark.app_id/app_secret)", exc)
                    return  # waiting won't fix a refused secret
                log.warning("lark: %s; retrying in %.0fs", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)
                continue
            break
        self._ready.set()
        self._link.last_error = None
        if self._settings.mode == "websocket":
            assert self._bot is not None and self._loop is not None
            self._long = LongConnection(
                self._settings, self._bot, self._loop, self._accept, self._presses.answer
            )
            await self._long.start()
        self._link.since = utc_now()
        log.info("lark: ready as %s (%s mode)", self._me, self._settings.mode)

    async def stop(self) -> None:
        self._stopped = True
        if self._connector is not None:
            self._connector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._connector
        if self._long is not None:
            await self._long.stop()
        await finish(self._tasks)

    # -- incoming ----------------------------------------------------------------------

    def routes(self) -> Sequence[BaseRoute]:
        if self._settings.mode != "webhook":
            return ()
        return (Route(EVENTS_PATH, self._events, methods=["POST"]),)

    async def _events(self, request: Request) -> Response:
        if not self._ready.is_set() or self._stopped:
            # Without its open_id the bot can't tell a mention of itself; stopped, it
            # can't answer. Not 200: Lark pushes the event again (to the next process).
            return JSONResponse({"msg": "not ready"}, status_code=503)
        body = await request.body()
        try:
            event = open_webhook(body, request.headers, self._settings)
        except Refused as exc:
            log.warning("lark: refused a post to %s: %s", EVENTS_PATH, exc)
            return JSONResponse({"msg": "unauthorized"}, status_code=401)
        except Malformed as exc:
            log.warning("lark: unreadable post to %s: %s", EVENTS_PATH, exc)
            return JSONResponse({"msg": "bad request"}, status_code=400)
        if event.get("type") == "url_verification":
            return JSONResponse({"challenge": event.get("challenge")})
        if (event.get("header") or {}).get("event_type") == CARD_EVENT:  # within Lark's 3 s
            return JSONResponse(await self._presses.answer(event))
        self._accept(event)  # answered in a task: Lark wants its 200 within 1 s
        return JSONResponse({"msg": "success"})

    def _accept(self, event: dict[str, Any]) -> None:
        """One event (either mode, on the bot's loop): a message is answered in a task."""
        self._link.last_event = utc_now()
        header, body = event.get("header"), event.get("event")
        if not isinstance(header, dict) or not isinstance(body, dict):
            log.warning("lark: an event without a header or body; ignored")
            return
        kind = header.get("event_type")
        if kind in REACTION_EVENTS:
            self._reactions.accept(body, added=REACTION_EVENTS[kind])
            return
        if kind != _MESSAGE_EVENT:
            return  # subscribed to more than messages: not ours to act on
        message = body.get("message")
        message_id = message.get("message_id") if isinstance(message, dict) else None
        if isinstance(message, dict) and isinstance(message_id, str):
            self._reactions.remember(message_id, message.get("chat_id"), message.get("chat_type"))
        # After it, each reaction to the message (reported once the message is handled).
        self._reactions.run(self._answer(body), message_id if isinstance(message_id, str) else None)

    async def _answer(self, event: dict[str, Any]) -> None:
        bot = self._bot
        assert bot is not None
        try:
            if (event.get("sender") or {}).get("sender_type") != "user":
                return  # other apps' bots (and this one: no loops)
            incoming = await self._incoming(event)
            if incoming is None:
                return
            message_id = str(event["message"]["message_id"])
            chat = event["message"]["chat_id"]
            in_thread = bool(event["message"].get("thread_id"))
            pieces = itertools.count()

            async def answer(reply: Reply, last: int, piece: Piece) -> str | None:
                # Lark took the event (acknowledged): it won't push it again, so a reply
                # that fails for a moment is sent again, with the same uuid: Lark posts
                # one message per uuid (also when the message is answered again after a
                # restart, within Lark's hour). Buttons: a card, as the last piece.
                kind, content = lark_content(
                    piece.text, {}, reply.buttons, last=piece.index == last
                )
                uuid = _uuid(f"reply:{message_id}", next(pieces))
                post = functools.partial(
                    self._api.reply, message_id, content, in_thread, uuid, kind
                )
                sent = await sent_with_retries(post, what="lark: an answer")
                if sent:
                    self._sent.append(sent)
                    self._reactions.remember(sent, chat)
                return sent

            async def deliver(replies: list[Reply]) -> None:
                for reply in replies:
                    last = len(split_text(reply.text, MESSAGE_LIMIT)) - 1
                    each = functools.partial(answer, reply, last)
                    sent = await send_in_pieces(reply.text, MESSAGE_LIMIT, each)
                    if reply.reminder_id is not None and sent:
                        await bot.posted(reply, sent)

            await bot.handle(incoming, deliver)
        except Exception as exc:
            log.error("lark: answering a message failed: %s", safe_error(exc, LarkError))
            log.debug("lark: the failure", exc_info=True)

    async def _incoming(self, event: dict[str, Any]) -> IncomingMessage | None:
        """The bot's view of an im.message.receive_v1 event; None for what isn't text."""
        assert self._bot is not None  # events are answered once started
        message = event.get("message") or {}
        sender_id = ((event.get("sender") or {}).get("sender_id") or {}).get("open_id")
        chat, message_id = message.get("chat_id"), message.get("message_id")
        if not (isinstance(sender_id, str) and isinstance(chat, str) and message_id):
            log.warning("lark: a message event without chat, sender or id; ignored")
            return None
        chat_id = f"lk:{chat}"
        mentions = mentions_of(message)
        names = {m.key: self._bot_name if m.open_id == self._me else m.name for m in mentions}
        text = text_of(message, names)
        if text is None:
            log.info("lark: a %s message; only text is read", message.get("message_type"))
            return None
        seen = self._people.seen.setdefault(chat_id, {})
        people = [Member(f"lk:{m.open_id}", m.name) for m in mentions if m.open_id != self._me]
        for person in people:
            seen[person.user_id] = person
        sender = Member(f"lk:{sender_id}", await self._people.name(chat, sender_id))
        seen[sender.user_id] = sender
        private = message.get("chat_type") == "p2p"
        mentions_bot = any(m.open_id == self._me for m in mentions)
        parent = message.get("parent_id") or None
        reply_to_bot = parent is not None and await self._is_ours(str(parent))
        maybe_for_bot = mentions_bot or reply_to_bot or private or self._bot.may_address(text)
        is_admin = not private and maybe_for_bot and await self._people.is_admin(chat, sender_id)
        created = message.get("create_time")
        return IncomingMessage(
            chat_id=chat_id,
            chat_type="private" if private else "group",
            sender_id=sender.user_id,
            sender_name=sender.name,
            text=text,
            mention_entities=True,
            mentions_bot=mentions_bot,
            reply_to_bot=reply_to_bot,
            sender_is_admin=is_admin,
            message_id=str(message_id),
            timestamp=lark_time(created),
            mentions=tuple(people),
            reply_to_message_id=str(parent) if parent else None,
        )

    async def _is_ours(self, message_id: str) -> bool:
        """The message is one this bot sent: remembered, else asked of Lark."""
        if message_id in self._sent:
            return True
        try:
            sender = (await self._api.message(message_id)).get("sender") or {}
        except LarkError as exc:
            log.warning("lark: %s", exc)
            return False
        return sender.get("sender_type") == "app" and sender.get("id") == self._api.app_id

    async def find(self, chat_id: str, name: str) -> Member | None:
        """The member of the chat by that name or open_id (see `LarkPeople.find`)."""
        return await self._people.find(chat_id, name)

    # -- outgoing ----------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> str | None:
        chat = platform_chat(message, self.chat_prefix, "Lark", stopped=self._stopped)
        people = mention_targets(message.people, self.chat_prefix)
        key = message.idempotency_key
        last = len(split_text(message.text, MESSAGE_LIMIT)) - 1

        async def send(piece: Piece) -> str | None:
            uuid = _uuid(key, piece.index) if key is not None else None
            everyone = message.everyone and piece.first
            kind, content = lark_content(
                piece.text, people, message.buttons, everyone=everyone, last=piece.index == last
            )
            sent = await self._api.send(chat, content, uuid, kind)
            if sent:
                self._sent.append(sent)
                self._reactions.remember(sent, chat)
            return sent

        try:
            return await send_in_pieces(message.text, MESSAGE_LIMIT, send)
        except LarkError as exc:
            raise SendError(f"lark {exc}") from None

    def status(self) -> dict[str, Any]:
        long = self._long.status() if self._long is not None else None
        connected = self._link.since is not None and (long is None or long["connected"])
        last_error = self._link.last_error or (long["last_error"] if long else None)
        return connection_status(
            connected=connected,
            since=self._link.since,
            last_event=self._link.last_event,
            last_error=last_error,
            auth_failed=self._link.auth_failed or (long is not None and long["auth_failed"]),
            standby=long is not None and long["standby"],  # another process holds it
            mode=self._settings.mode,
            open_id=self._me or None,
        )


def _uuid(key: str, index: int) -> str:
    """Lark's idempotency key (at most 50 characters) for piece `index` of a message."""
    return f"gm-{hashlib.sha256(key.encode()).hexdigest()[:40]}-{index}"
