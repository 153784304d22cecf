"""Slack: slack-bolt (async), over the Events API on `groupmate serve`'s own port, or over
Socket Mode (a WebSocket the bot opens to Slack with its app-level token).

Chat ids are "sl:<channel id>", user ids "sl:<user id>". Slack signs every event it
posts (`v0` HMAC of the body with the signing secret, a timestamp within 5 minutes):
bolt checks it and answers 401 to anything else, before anything runs. It acknowledges
each event at once (Slack wants an answer within 3 s) and the message is answered after.

Reactions (`reaction_added`, `reaction_removed`) to a message are reported to the bot by
the message's `ts`, the id its message event was logged by, for the digest to count.
Presses of a reminder's buttons come to `/slack/interactive`, checked as events are: see
`slack_presses`.

Slack re-posts an event it got no timely answer for (`X-Slack-Retry-Num`, the same
message `ts`): the message's `ts` is its id, and the chat log acts on an id once. Slack
has no idempotency key on chat.postMessage: a send whose answer is lost (a timeout after
Slack took it) may be retried by the reminder engine and appear twice; that window is
one request's timeout (docs/platforms/slack.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.adapter.starlette.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.bot.adapters.base import BotHost, Link, finish, platform_chat
from groupmate.bot.adapters.slack_events import (
    ONLY_WHAT_IT_IS_SENT,
    USER_TOKEN,
    Reading,
    mentioned_ids,
    reaction_of,
    reading_of,
)
from groupmate.bot.adapters.slack_people import SlackPeople, code_of, slack_code
from groupmate.bot.adapters.slack_presses import answer_press
from groupmate.bot.adapters.slack_send import PRESS_ACTION, post
from groupmate.bot.adapters.slack_settings import SlackSettings
from groupmate.bot.config import ConfigError
from groupmate.bot.messages import IncomingMessage, Reply
from groupmate.storage import Member, OutgoingMessage, SendError, utc_now
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
INTERACTIVITY_PATH = "/slack/interactive"
_BACKOFF_MAX = 30.0
_READY_WAIT = 60.0  # seconds an early event waits for the connection
_SOCKET_POLL = 2.0  # seconds between two looks at the Socket Mode connection
# Subtypes that are someone's message (others: edits, joins, topic changes, bots).
_MESSAGE_SUBTYPES = (None, "thread_broadcast", "file_share")


class SlackAdapter:
    """One Slack app's bot user, in the workspace it is installed in."""

    name = "slack"
    chat_prefix = CHAT_PREFIXES["slack"]

    def __init__(self, settings: SlackSettings, *, bot_name: str) -> None:
        if settings.bot_token is None:  # SlackSettings checks what each mode needs
            raise ConfigError("adapters.slack.bot_token is required")
        self._settings = settings
        self._bot_name = bot_name
        self._client = AsyncWebClient(
            token=settings.bot_token.get_secret_value(),
            base_url=settings.api_url,
            timeout=settings.timeout,
            # 429s wait the Retry-After Slack says; connection resets are retried.
            retry_handlers=[
                AsyncRateLimitErrorRetryHandler(max_retry_count=5),
                AsyncConnectionErrorRetryHandler(max_retry_count=2),
            ],
        )
        secret = settings.signing_secret
        self._app = AsyncApp(
            client=self._client,
            signing_secret=secret.get_secret_value() if secret is not None else None,
            # Socket Mode has no HTTP route: the app token authenticates the socket.
            request_verification_enabled=settings.mode == "events",
            logger=logging.getLogger("slack_bolt"),
        )
        self._app.event("message")(self._on_message)
        # Both: an app with only `app_mention` (app_mentions:read, no channel history)
        # is answered too. One with both gets each mention twice, with the same `ts`:
        # the router acts on a chat's message id once (module doc of slack_events).
        self._app.event("app_mention")(self._on_message)
        self._app.event("reaction_added")(self._on_reaction)
        self._app.event("reaction_removed")(self._on_reaction)
        self._app.action(PRESS_ACTION)(self._on_press)
        self._handler = AsyncSlackRequestHandler(self._app)
        self._socket: AsyncSocketModeHandler | None = None
        self._bot: BotHost | None = None
        self._me = ""  # the bot's user id
        self._team = ""
        self._people = SlackPeople(self._client)
        self._scopes: Reading = "unknown"  # what auth.test's X-OAuth-Scopes allow
        self._channel_messages = False  # a channel's message event came
        self._tasks: set[asyncio.Task[None]] = set()
        self._connector: asyncio.Task[None] | None = None
        self._link = Link()
        self._stopped = False
        self._ready = asyncio.Event()  # auth.test answered: the bot knows its own id
        self._socket_up = False  # socket mode: the WebSocket is open (polled)
        self._monitor: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self, bot: BotHost) -> None:
        self._bot = bot
        self._connector = asyncio.create_task(self._connect(), name="slack")

    async def _connect(self) -> None:
        backoff = 1.0
        while True:
            try:
                answer = await self._client.auth_test()
            except SlackApiError as exc:
                self._link.last_error = f"auth.test: {code_of(exc)}"
                if code_of(exc) in ("invalid_auth", "not_authed", "token_revoked"):
                    self._link.auth_failed = True
                    log.error("slack: %s (check adapters.slack.bot_token)", self._link.last_error)
                    return  # waiting won't fix a wrong token
            except (TimeoutError, SlackClientError, OSError) as exc:
                self._link.last_error = f"auth.test: {type(exc).__name__}"
            else:
                self._me, self._team = str(answer["user_id"]), str(answer.get("team", ""))
                self._scopes = reading_of(answer.headers)
                self._ready.set()
                if self._settings.mode == "socket":
                    await self._open_socket()
                    self._monitor = asyncio.create_task(self._watch_socket(), name="slack-socket")
                self._link.since = utc_now()
                self._link.last_error = None
                log.info("slack: connected as %s in %s", self._me, self._team or "a workspace")
                return
            log.warning("slack: %s; retrying in %.0fs", self._link.last_error, backoff)
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX)

    async def _open_socket(self) -> None:
        """Socket Mode: apps.connections.open with the app token, then the WebSocket;
        slack_sdk's client reconnects by itself (a new URL each time) and acknowledges
        each envelope as bolt answers it."""
        app_token = self._settings.app_token
        assert app_token is not None  # checked in __init__
        self._socket = AsyncSocketModeHandler(
            self._app, app_token.get_secret_value(), web_client=self._client
        )
        await self._socket.connect_async()  # type: ignore[no-untyped-call]  # bolt: no hints

    async def _watch_socket(self) -> None:
        """Keep the status true to the socket: slack_sdk reconnects a dropped one by
        itself, without telling; this asks it every few seconds."""
        assert self._socket is not None
        while True:
            try:
                up = await self._socket.client.is_connected()
            except Exception as exc:
                up, self._link.last_error = False, f"socket: {type(exc).__name__}"
            if up and not self._socket_up:
                self._link.last_error = None
            elif not up and self._socket_up:
                self._link.last_error = "socket: disconnected; slack_sdk is reconnecting"
                log.warning("slack: %s", self._link.last_error)
            self._socket_up = up
            await asyncio.sleep(_SOCKET_POLL)

    async def stop(self) -> None:
        self._stopped = True
        if self._monitor is not None:
            self._monitor.cancel()
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await self._socket.close_async()  # type: ignore[no-untyped-call]
        if self._connector is not None:
            self._connector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._connector
        await finish(self._tasks)
        session = getattr(self._client, "session", None)
        if session is not None:
            await session.close()

    # -- incoming ----------------------------------------------------------------------

    def routes(self) -> Sequence[BaseRoute]:
        if self._settings.mode != "events":
            return ()
        # One handler for both: bolt checks each request's signature the same way.
        return tuple(
            Route(path, self._events, methods=["POST"])
            for path in (EVENTS_PATH, INTERACTIVITY_PATH)
        )

    async def _events(self, request: Request) -> Response:
        if self._bot is None or self._stopped or not self._ready.is_set():
            # Not knowing its own id yet, the bot can't tell what is for it; a 503 makes
            # Slack send the event again (at once, after 1 and 5 minutes) instead of an
            # acknowledged event waiting on a connection that may not come.
            return Response(status_code=503, headers={"Retry-After": "5"})
        # bolt checks the signature (401 when it fails), answers url_verification, and
        # acknowledges events at once; listeners run after the answer.
        return await self._handler.handle(request)

    async def _on_message(self, event: dict[str, Any]) -> None:
        self._link.last_event = utc_now()
        if event.get("type") == "message" and event.get("channel_type") != "im":
            self._channel_messages = True  # Slack sends this app its channels' messages
        if event.get("subtype") not in _MESSAGE_SUBTYPES or event.get("bot_id"):
            return  # edits, joins, other bots (and this one: no loops)
        if event.get("user") is None:
            return
        task = asyncio.create_task(self._answer(event))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _on_reaction(self, event: dict[str, Any]) -> None:
        self._link.last_event = utc_now()
        if self._stopped:
            return
        task = asyncio.create_task(self._react(event))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _on_press(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """Acknowledged at once (Slack's 3 s), acted on after: see `slack_presses`."""
        await ack()
        self._link.last_event = utc_now()
        assert self._bot is not None
        task = asyncio.create_task(answer_press(self._client, self._bot, self._people, body))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _react(self, event: dict[str, Any]) -> None:
        assert self._bot is not None
        try:
            # As for a message: the bot's own reactions are told apart by its id.
            await asyncio.wait_for(self._ready.wait(), _READY_WAIT)
            reaction = reaction_of(event, me=self._me)
            if reaction is not None:
                await self._bot.react(reaction)
        except Exception as exc:  # a reaction not counted is all it costs
            log.error("slack: a reaction was not kept: %s", safe_error(exc, code=slack_code))
            log.debug("slack: the failure", exc_info=True)

    async def _answer(self, event: dict[str, Any]) -> None:
        bot = self._bot
        assert bot is not None
        try:
            # An event that came before auth.test answered waits for it: the bot must
            # know its own id to tell a mention of itself (and its own messages).
            await asyncio.wait_for(self._ready.wait(), _READY_WAIT)
            if event.get("user") == self._me:
                return
            incoming = await self._incoming(event)
            channel = str(event["channel"])
            thread = event.get("thread_ts")

            async def deliver(replies: list[Reply]) -> None:
                for reply in replies:
                    sent = await post(
                        self._client, channel, reply.text, (), thread, attempts=3,
                        buttons=reply.buttons,
                    )  # fmt: skip
                    if reply.reminder_id is not None and sent is not None:
                        await bot.posted(reply, sent)  # a 👍 on it: "me too"

            await bot.handle(incoming, deliver)
        except Exception as exc:
            log.error("slack: answering a message failed: %s", safe_error(exc, code=slack_code))
            log.debug("slack: the failure", exc_info=True)

    async def _incoming(self, event: dict[str, Any]) -> IncomingMessage:
        """The bot's view of a Slack message event."""
        assert self._bot is not None  # events are answered once started
        channel, user, ts = str(event["channel"]), str(event["user"]), str(event["ts"])
        chat_id = f"sl:{channel}"
        # An `app_mention` has no channel_type; a DM's channel id starts with "D".
        kind = event.get("channel_type")
        private = kind == "im" or (kind is None and channel.startswith("D"))
        sender = Member(f"sl:{user}", await self._people.name(user))
        self._people.saw(chat_id, sender)
        mentioned = mentioned_ids(event)
        mentions_bot = self._me in mentioned
        people: list[Member] = []
        for uid in mentioned:
            if uid != self._me:
                member = Member(f"sl:{uid}", await self._people.name(uid))
                self._people.saw(chat_id, member)
                people.append(member)
        text = await self._plain(str(event.get("text", "")))
        thread = event.get("thread_ts")
        in_thread = thread is not None and thread != ts
        reply_to_bot = in_thread and event.get("parent_user_id") == self._me
        maybe_for_bot = mentions_bot or reply_to_bot or private or self._bot.may_address(text)
        is_admin = not private and maybe_for_bot and await self._people.is_admin(user)
        return IncomingMessage(
            chat_id=chat_id,
            chat_type="private" if private else "group",
            sender_id=sender.user_id,
            sender_name=sender.name,
            text=text,
            mentions_bot=mentions_bot,
            mention_entities=True,
            reply_to_bot=reply_to_bot,
            sender_is_admin=is_admin,
            message_id=ts,
            timestamp=datetime.fromtimestamp(float(ts), UTC),
            mentions=tuple(people),
            reply_to_message_id=str(thread) if in_thread else None,
            in_thread=in_thread,
        )

    async def _plain(self, text: str) -> str:
        """Slack's text as people read it: "<@U1>" as "@Name" (the bot as its config
        name, which the router strips), and &amp; &lt; &gt; unescaped."""
        parts: list[str] = []
        position = 0
        for match in USER_TOKEN.finditer(text):
            parts.append(text[position : match.start()])
            uid = match.group(1)
            name = self._bot_name if uid == self._me else await self._people.name(uid)
            parts.append(f"@{name}")
            position = match.end()
        parts.append(text[position:])
        plain = "".join(parts)
        return plain.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")

    async def find(self, chat_id: str, name: str) -> Member | None:
        """The member directory: see `SlackPeople.find`."""
        return await self._people.find(chat_id, name)

    # -- outgoing ----------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> str | None:
        channel = platform_chat(message, self.chat_prefix, "Slack", stopped=self._stopped)
        try:
            return await post(
                self._client,
                channel,
                message.text,
                message.people,
                None,
                everyone=message.everyone,
                buttons=message.buttons,
            )
        except SlackApiError as exc:
            raise SendError(f"slack chat.postMessage: {code_of(exc)}") from None
        except (TimeoutError, SlackClientError, OSError) as exc:
            raise SendError(f"slack chat.postMessage: {type(exc).__name__}") from None

    def status(self) -> dict[str, Any]:
        connected = self._link.since is not None and (
            self._settings.mode != "socket" or self._socket_up
        )
        status = self._link.status(
            connected=connected,
            mode=self._settings.mode,
            user_id=self._me or None,
            team=self._team or None,
        )
        return (
            status
            | {"reads": self.reads}
            | ({"memory": ONLY_WHAT_IT_IS_SENT} if self.reads == "only what it is sent" else {})
        )

    @property
    def reads(self) -> Reading:
        """How much of its channels the bot reads. From the token's scopes, which Slack
        itself states on auth.test's answer: the grant the workspace made, known at
        connect, and without channels:history Slack sends no channel message at all.
        Events seen could only prove reading (a quiet channel sends none, and a mention
        comes as an `app_mention` in either mode), so they count only that way: a
        channel's `message` event shows the bot reads them, whatever the header said."""
        return "every message" if self._channel_messages else self._scopes
