"""Discord: a bot user over the gateway, with discord.py 2.x.

Chat ids are "dc:<channel id>" (a guild text channel, a thread of one, or a DM), user ids
"dc:<user id>". The bot answers a mention of itself or of its role (the event's mention
entities), a reply to one of its messages, the configured prefix and every DM; the rest is
only logged. Reading other messages' text needs the privileged Message Content intent:
Discord closes the gateway with 4014 when the Developer Portal has not enabled it, and the
adapter says so and connects without it (mentions, DMs and replies that ping the bot still
carry their text: Discord counts the ping as a mention).

discord.py resumes a dropped gateway session (RESUME with the last sequence number), and
Discord replays what was missed; a new session (a restart) replays nothing. The message's
snowflake is its id, and the chat log acts on an id once, so a replayed or repeated
event is answered once. Every send carries a `nonce` with `enforce_nonce`, one per piece:
a reminder's from its idempotency key, an answer's from the message it answers. For a few
minutes Discord answers a repeat with the message it already made, so a retried send
shows once; after that window a retry of a send whose answer was lost could show twice
(docs/platforms/discord.md). An answer is tried three times (1 s, 2 s apart): Discord will not
send the message it answers again.

People's reactions to messages (the non-privileged reactions intents) are reported to the
bot by the message's snowflake, the id the message was logged by, for digests to count.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import math
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any

import aiohttp
import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route
from starlette.routing import BaseRoute

from groupmate.bot.adapters.base import (
    BotHost,
    Link,
    Piece,
    finish,
    send_in_pieces,
    sent_with_retries,
    split_text,
)
from groupmate.bot.adapters.discord_buttons import answer_press, buttons_under, http_code
from groupmate.bot.adapters.discord_events import (
    MESSAGE_LIMIT,
    PREFIX,
    incoming,
    is_spoken,
    nonce,
    reaction_of,
    render,
    user_ids,
)
from groupmate.bot.adapters.discord_gateway import Gateway
from groupmate.bot.adapters.discord_people import DiscordPeople
from groupmate.bot.adapters.discord_settings import DiscordSettings
from groupmate.bot.config import ConfigError
from groupmate.bot.messages import IncomingReaction, Reply
from groupmate.storage import Member, OutgoingMessage, SendError, utc_now
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)

_BACKOFF_MAX = 60.0
_AUTH_FAILED = 4004  # gateway close code: the token was refused
_CONTENT_WARNING = (
    "the Message Content intent is not enabled in the Discord Developer Portal (Bot, "
    "Privileged Gateway Intents): mentions, DMs and replies that ping the bot work; the "
    "prefix and replies with the ping turned off don't"
)
# An answer notifies the person it answers (with its first piece), nobody else (no
# @everyone from echoed text).
_REPLY_MENTIONS = [
    discord.AllowedMentions(everyone=False, users=False, roles=False, replied_user=first)
    for first in (True, False)
]


class DiscordAdapter:
    """One Discord application's bot user, in the guilds it was invited to."""

    name = "discord"
    chat_prefix = PREFIX

    def __init__(self, settings: DiscordSettings, *, bot_name: str) -> None:
        if settings.token is None:  # DiscordSettings refuses a section without one
            raise ConfigError("adapters.discord.token is required")
        self._token = settings.token.get_secret_value()
        self._settings = settings
        self._bot_name = bot_name
        self._message_content = settings.message_content
        self._bot: BotHost | None = None
        self._client: Gateway | None = None
        self._runner: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._posts: set[asyncio.Future[discord.Message]] = set()
        # The longest a send is waited for: longer than discord.py's longest 429 wait
        # (the timeout, at least 30 s), plus the timeout for the request itself.
        self._wait = max(30.0, settings.timeout) + settings.timeout
        self._defaults = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)
        self._me = 0  # the bot's user id, once logged in
        self._people = DiscordPeople()
        self._link = Link()
        self._stopped = False
        self._backoff = 1.0

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self, bot: BotHost) -> None:
        self._bot = bot
        # discord.py builds every REST URL from this class attribute (its own API version
        # switch sets it the same way): the config's api_url is the REST base.
        Route.BASE = self._settings.api_url.rstrip("/")
        self._runner = asyncio.create_task(self._run(), name="discord")

    async def _run(self) -> None:
        """Log in, connect, and again after a failure the library does not recover from
        by itself (it resumes dropped sessions on its own), with a growing pause."""
        while not self._stopped:
            client = Gateway(
                self, message_content=self._message_content, wait=self._settings.timeout
            )
            self._client = client
            try:
                pause = await self._session(client)
            finally:
                self._link.since = None
                await client.close()
            if pause is None or self._stopped:
                return
            if pause:
                log.warning("discord: %s; reconnecting in %.0fs", self._link.last_error, pause)
                await asyncio.sleep(pause)
                self._backoff = min(self._backoff * 2, _BACKOFF_MAX)

    async def _session(self, client: Gateway) -> float | None:
        """One client's life: the pause before the next (0: at once), None for never."""
        try:
            async with asyncio.timeout(self._settings.timeout):
                await client.login(self._token)  # GET /users/@me: a refused token ends here
                # A Client connects to the library's constant gateway URL (and falls back
                # to it when a session is invalidated); Discord's way: GET /gateway/bot.
                _, url, _ = await client.http.get_bot_gateway()
            assert client.user is not None  # login sets it
            self._me = client.user.id
            DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)
            await client.connect(reconnect=True)  # returns when closed
        except discord.LoginFailure:
            self._auth("REST: 401 Unauthorized")
            return None
        except discord.PrivilegedIntentsRequired:
            if self._message_content:  # the only privileged intent asked for: drop it
                self._message_content = False
                log.error("discord: %s; connecting without it", _CONTENT_WARNING)
                return 0.0
            self._link.last_error = "gateway: 4014 disallowed intents"
        except discord.ConnectionClosed as exc:
            if exc.code == _AUTH_FAILED:
                self._auth("gateway: 4004 authentication failed")
                return None
            self._link.last_error = f"gateway: closed with {exc.code}"
        except discord.HTTPException as exc:
            self._link.last_error = f"REST: {safe_error(exc, code=http_code)}"
        except Exception as exc:  # the network or the library: logged, retried
            # Before its first connection, discord.py gives up with an AttributeError of
            # its own; the failure worth showing is that there was no connection.
            up = client.ws is not None
            self._link.last_error = (
                f"gateway: {safe_error(exc, code=http_code)}" if up else "could not connect"
            )
        return self._backoff

    def _auth(self, error: str) -> None:
        self._link.auth_failed, self._link.last_error = True, error
        log.error("discord: %s (check adapters.discord.token); not retried", error)

    def on_connected(self) -> None:
        self._link.since = utc_now()
        self._link.last_event = self._link.since
        self._link.last_error = None
        self._backoff = 1.0
        if self._refused_content:
            log.warning("discord: %s", _CONTENT_WARNING)
        log.info("discord: connected as %s", self._me)

    @property
    def _refused_content(self) -> bool:
        """Asked for the Message Content intent by the config, refused by Discord."""
        return self._settings.message_content and not self._message_content

    def on_disconnected(self, reason: str) -> None:
        if self._stopped:
            return
        self._link.since = None
        self._link.last_error = reason
        log.warning("discord: %s; reconnecting", reason)

    async def stop(self) -> None:
        self._stopped = True  # no new messages are taken up from here
        await finish(self._tasks)  # answers in flight may finish while the client is open
        for post in self._posts:
            post.cancel()
        await asyncio.gather(*self._posts, return_exceptions=True)
        if self._client is not None:
            with contextlib.suppress(Exception):
                await self._client.close()  # the gateway and the HTTP session
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
        # The library's own constants, as they were before start (another client in
        # this process, e.g. a test's next bot, starts from Discord's).
        Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = self._defaults

    def routes(self) -> Sequence[BaseRoute]:
        return ()  # the bot connects out: nothing to serve

    # -- incoming ----------------------------------------------------------------------

    def on_message(self, message: discord.Message) -> None:
        self._link.last_event = utc_now()
        if not is_spoken(message):
            return  # other bots (and this one: no loops), joins, pins
        if self._stopped:  # Discord will not send it again: say so
            log.warning(
                "discord: stopping; message %s in %s not read", message.id, message.channel.id
            )
            return
        self._spawn(self._answer(message))

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        """Run `work` as one of the answers in flight (which `stop` lets finish)."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, message: discord.Message) -> None:
        bot = self._bot
        assert bot is not None
        try:
            seen = incoming(message, me=self._me, bot_name=self._bot_name)
            self._people.remember(seen.chat_id, message, me=self._me)
            if not seen.text.strip():
                # Nothing to read: an attachment alone, or a guild message whose text
                # Discord withholds without the Message Content intent.
                return

            async def deliver(replies: list[Reply]) -> None:
                for index, reply in enumerate(replies):
                    sent = await self._reply(message, reply, index)
                    if reply.reminder_id is not None and sent is not None:
                        await bot.posted(reply, sent)

            await bot.handle(seen, deliver)
        except Exception as exc:
            log.error("discord: answering a message failed: %s", safe_error(exc, code=http_code))
            log.debug("discord: the failure", exc_info=True)

    def on_reaction(self, payload: discord.RawReactionActionEvent) -> None:
        self._link.last_event = utc_now()
        if self._stopped:
            return
        reaction = reaction_of(payload, me=self._me)
        if reaction is None:
            return
        self._spawn(self._react(reaction))

    async def _react(self, reaction: IncomingReaction) -> None:
        assert self._bot is not None
        try:
            await self._bot.react(reaction)
        except Exception as exc:  # a reaction not counted is all it costs
            log.error("discord: a reaction was not kept: %s", safe_error(exc, code=http_code))
            log.debug("discord: the failure", exc_info=True)

    def on_interaction(self, interaction: discord.Interaction) -> None:
        """A press of a button under one of the bot's messages (discord_buttons.py)."""
        self._link.last_event = utc_now()
        if self._bot is not None and not self._stopped:  # stopping: Discord says it failed
            self._spawn(answer_press(self._bot, interaction))

    async def _reply(self, message: discord.Message, reply: Reply, index: int) -> str | None:
        """The `index`th answer to `message` as a Discord reply, in its channel or thread
        (if it was deleted meanwhile, a plain message there), its buttons under its last
        piece; each piece tried again with the same nonce, so a try whose answer was lost
        shows once. The id of its first piece."""
        reference = message.to_reference(fail_if_not_exists=False)
        last = len(split_text(reply.text, MESSAGE_LIMIT)) - 1

        async def send(piece: Piece) -> str:
            post = functools.partial(
                message.channel.send,
                piece.text,
                reference=reference,
                allowed_mentions=_REPLY_MENTIONS[index > 0 or piece.index > 0],
                nonce=nonce(f"reply:{message.id}:{index}", piece.index),
                **buttons_under(reply.buttons, last=piece.index == last),
            )
            sent = functools.partial(self._sent, post)
            return str((await sent_with_retries(sent, what="discord: an answer")).id)

        return await send_in_pieces(reply.text, MESSAGE_LIMIT, send)

    async def _sent(self, post: Callable[[], Awaitable[discord.Message]]) -> discord.Message:
        """`post`, waited for at most the adapter's wait. It runs to its end even when the
        wait for it is given up (here, or by the reminder engine's own timeout):
        discord.py cancelled in its sleep out a global 429 would leave every later
        request waiting for good. A post that lands after all is, by its nonce, the
        message a retry gets back."""
        task = asyncio.ensure_future(post())
        self._posts.add(task)
        task.add_done_callback(self._posted)
        async with asyncio.timeout(self._wait):
            return await asyncio.shield(task)

    def _posted(self, task: asyncio.Future[discord.Message]) -> None:
        self._posts.discard(task)
        if not task.cancelled():
            task.exception()  # an abandoned post's failure: its waiter reported its own

    async def find(self, chat_id: str, name: str) -> Member | None:
        """The one person by that name (see `DiscordPeople.find`)."""
        return self._people.find(chat_id, name)

    # -- outgoing ----------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> str | None:
        channel_id = message.chat_id.removeprefix(PREFIX)
        if not message.chat_id.startswith(PREFIX) or not channel_id.isdigit():
            raise SendError(f"not a Discord chat id: {message.chat_id}")
        client = self._client
        if self._stopped or client is None or client.user is None or client.is_closed():
            raise SendError("the discord adapter is not connected")  # retried later
        channel = client.get_partial_messageable(int(channel_id))
        # Only the people it names, and @everyone when an admin's reminder is for
        # everyone (which the bot's role must be allowed to use, "Mention Everyone").
        allowed = discord.AllowedMentions(
            everyone=message.everyone,
            roles=False,
            users=user_ids(message.people),
            replied_user=False,
        )
        key = message.idempotency_key
        last = len(split_text(message.text, MESSAGE_LIMIT)) - 1

        async def send(piece: Piece) -> str:
            # discord.py sends `enforce_nonce` with each nonce. One per piece: a retry after
            # a partial send repeats none. Without a key (a progress line): the library's
            # random one.
            once = nonce(key, piece.index) if key is not None else None
            text = render(piece.text, message.people)
            if message.everyone and piece.first:
                text = f"@everyone {text}"
            post = functools.partial(
                channel.send,
                text,
                allowed_mentions=allowed,
                nonce=once,
                **buttons_under(message.buttons, last=piece.index == last),
            )
            return str((await self._sent(post)).id)

        try:
            return await send_in_pieces(message.text, MESSAGE_LIMIT, send)
        except discord.HTTPException as exc:
            raise SendError(f"discord send: HTTP {exc.status} (code {exc.code})") from None
        except discord.RateLimited as exc:  # longer than discord.py waits: retried later
            raise SendError(f"discord send: rate limited for {exc.retry_after:.0f} s") from None
        except (discord.DiscordException, TimeoutError, OSError, aiohttp.ClientError) as exc:
            raise SendError(f"discord send: {type(exc).__name__}") from None
        except RuntimeError:  # aiohttp: the session closed under the send (a stop)
            raise SendError("discord send: the connection closed") from None

    def status(self) -> dict[str, Any]:
        connected = self._link.since is not None
        # The last heartbeat's round trip: Discord ACKs each (inf before the first ACK).
        latency = self._client.latency if connected and self._client is not None else math.nan
        return self._link.status(
            warning=_CONTENT_WARNING if self._refused_content else None,
            user_id=str(self._me) if self._me else None,
            message_content=self._message_content,
            latency_ms=round(latency * 1000) if math.isfinite(latency) else None,
        )
