"""Telegram: long polling (getUpdates) by default, or a webhook on `groupmate serve`.

Chat ids are "tg:<chat id>", user ids "tg:<user id>". With privacy mode on (BotFather's
default) a bot in a group sees only commands, messages that mention it, and replies to
it: that is exactly what the router answers, so privacy mode can stay on.

Reactions (`message_reaction` updates, asked for in `allowed_updates`: Telegram sends
none unless asked, and only to a bot that is an administrator of the group) are reported
to the bot for its digests, in their chat's place among its messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import Hashable, Sequence
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from telegram import (
    BotCommand,
    Message,
    MessageReactionUpdated,
    Update,
)

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.bot.adapters.base import BotHost, Link, iso
from groupmate.bot.adapters.ordered import OrderedWork
from groupmate.bot.adapters.telegram_api import (
    ApiError,
    call,
    new_client,
    user_number,
)
from groupmate.bot.adapters.telegram_events import (
    addressing,
    is_answered,
    reactions_of,
)
from groupmate.bot.adapters.telegram_people import TelegramPeople
from groupmate.bot.adapters.telegram_presses import Pressed, answer_press
from groupmate.bot.adapters.telegram_send import send_reply, send_text
from groupmate.bot.adapters.telegram_settings import TelegramSettings
from groupmate.bot.commands import Commands
from groupmate.bot.config import ConfigError
from groupmate.bot.messages import IncomingMessage, Reply
from groupmate.storage import Member, OutgoingMessage, SendError, utc_now
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)

# What Telegram's "/" menu offers (setMyCommands at start).
BOT_COMMANDS = (
    ("remind", "Set a reminder: /remind <when> <what>"),
    ("reminders", "List this chat's reminders"),
    ("snooze", "Snooze a reminder: /snooze [id] [10m]"),
    ("cancel", "Cancel a reminder: /cancel <id>"),
    ("summary", "Summarise the recent conversation"),
    ("search", "Search the web"),
    ("tz", "Set this chat's time zone"),
    ("help", "What I can do"),
)
_BACKOFF_MAX = 30.0
_DRAIN_TIMEOUT = 10.0  # stop() waits this long for messages being answered
# The updates asked for (getUpdates and setWebhook): Telegram leaves out message_reaction
# unless it is named, and remembers the last list it was given (so callback_query, a
# press of a reminder's button, must be named too).
_UPDATES = (Update.MESSAGE, Update.MESSAGE_REACTION, Update.CALLBACK_QUERY)
_Work = Message | MessageReactionUpdated | Pressed


class TelegramAdapter:
    """One Telegram bot account."""

    name = "telegram"
    chat_prefix = CHAT_PREFIXES["telegram"]

    def __init__(self, settings: TelegramSettings, *, bot_name: str) -> None:
        if settings.token is None:
            raise ConfigError("adapters.telegram.token is required")
        if settings.webhook_url and settings.webhook_secret is None:
            raise ConfigError("adapters.telegram.webhook_secret is required with webhook_url")
        self._settings = settings
        self._bot_name = bot_name
        self._client, self._requests = new_client(
            settings.token.get_secret_value(), settings.api_base
        )
        self._bot: BotHost | None = None
        self._me_id: int | None = None
        self._username = ""
        self._offset: int | None = None
        self._poller: asyncio.Task[None] | None = None
        # Chats answered concurrently, each in order; says which updates are finished.
        self._work: OrderedWork[int, _Work] = OrderedWork(self._answer_in_chat)
        self._people = TelegramPeople(self._client)
        self._link = Link()
        self._stopped = False

    # -- lifecycle ---------------------------------------------------------------------

    async def start(self, bot: BotHost) -> None:
        self._bot = bot
        self._poller = asyncio.create_task(self._run(), name="telegram")

    async def stop(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
        await self._work.drain(_DRAIN_TIMEOUT)
        await self._work.cancel()
        self._stopped = True
        offset = self._work.unfinished() or self._offset
        if offset is not None and not self._settings.webhook_url:
            # Confirm what was answered, which only the next getUpdates would have: a
            # restart must not replay it (but must replay what was cut short).
            with contextlib.suppress(ApiError):
                await call(
                    "getUpdates",
                    lambda: self._client.get_updates(offset=offset, timeout=0, limit=1),
                )
        await asyncio.gather(*(request.shutdown() for request in self._requests))

    async def _run(self) -> None:
        backoff = 1.0
        while True:
            try:
                if self._me_id is None:
                    await self._connect()
                if self._settings.webhook_url:
                    return  # updates arrive at routes(); nothing more to poll
                await self._poll_once()
                backoff = 1.0
            except ApiError as exc:
                self._link.since = None
                self._link.last_error = str(exc)
                wait = exc.retry_after if exc.retry_after is not None else backoff
                log.warning("telegram: %s; retrying in %.0fs", exc, wait)
                await asyncio.sleep(wait)
                backoff = min(backoff * 2, _BACKOFF_MAX)

    async def _connect(self) -> None:
        client = self._client
        await call("getMe", client.initialize)  # initialize() caches getMe as `client.bot`
        url, secret = self._settings.webhook_url, self._settings.webhook_secret
        if url:
            assert secret is not None  # checked in __init__
            await call(
                "setWebhook",
                lambda: client.set_webhook(
                    url, secret_token=secret.get_secret_value(), allowed_updates=_UPDATES
                ),
            )
        else:
            # getUpdates is refused while a webhook is set.
            await call("deleteWebhook", lambda: client.delete_webhook(drop_pending_updates=False))
        commands = [BotCommand(c, d) for c, d in BOT_COMMANDS]
        await call("setMyCommands", lambda: client.set_my_commands(commands))
        self._me_id, self._username = client.bot.id, client.bot.username or ""
        self._link.since = utc_now()
        self._link.last_error = None
        log.info("telegram: connected as @%s", self._username)

    async def _poll_once(self) -> None:
        # PTB adds the poll's timeout to the read timeout of new_client's poll request.
        # Asking from an offset confirms every earlier update to Telegram for good, so
        # ask from the oldest update still being answered: if the process dies during a
        # model's answer, Telegram still has that message for the next run.
        await self._work.checkpoint()
        offset = self._work.unfinished() or self._offset
        timeout = timedelta(seconds=self._settings.poll_timeout)
        if offset != self._offset:
            timeout = timedelta(0)  # the in-flight ones come straight back: don't wait
        updates = await call(
            "getUpdates",
            lambda: self._client.get_updates(
                offset=offset, timeout=timeout, allowed_updates=_UPDATES
            ),
        )
        if self._link.since is None:
            self._link.since = utc_now()
            self._link.last_error = None
        fresh = [u for u in updates if self._offset is None or u.update_id >= self._offset]
        for update in fresh:
            self._dispatch(update)
        if not fresh and offset != self._offset:
            # Only answers in flight came back: wait for one to finish (or a moment) rather
            # than ask again at once.
            await self._work.wait_oldest(0.5)

    # -- incoming ----------------------------------------------------------------------

    def _dispatch(self, update: Update) -> None:
        """Answer one update in its own task: a slow model answer in one chat must not
        hold up the others (the router keeps each chat's messages in order)."""
        update_id = update.update_id
        if self._offset is not None and update_id < self._offset:
            return  # seen already (a webhook retry)
        self._offset = update_id + 1
        self._link.last_event = utc_now()
        query = update.callback_query
        if query is not None:
            # Presses in a queue of their own per chat: a press must be answered within
            # seconds, not after the model's answer to the chat's last message.
            chat = query.message.chat.id if query.message is not None else None
            self._work.add(update_id, [(("press", chat), [Pressed(query)])])
            return
        reaction = update.message_reaction
        if reaction is not None:
            # In its chat's queue, after the messages that came before it: the message it
            # is on has been logged by then (a reaction to a message not logged yet would
            # count for nothing), and a taking back never passes the adding.
            self._work.add(update_id, [(reaction.chat.id, [reaction])])
            return
        message = update.message
        if message is None or message.text is None:
            self._work.add(update_id, [])  # nothing to answer: done at once
            return
        self._work.add(update_id, [(message.chat.id, [message])])

    async def _answer_in_chat(self, chat: Hashable, item: _Work) -> None:
        if isinstance(item, Pressed):
            await self._press(item)
        elif isinstance(item, MessageReactionUpdated):
            await self._react(item)
        else:
            await self._answer(item)

    async def _press(self, pressed: Pressed) -> None:
        """A press of a button under one of the bot's messages, acted on as the presser."""
        assert self._bot is not None
        try:
            await answer_press(self._client, self._bot, self._people, pressed)
        except Exception as exc:
            log.error("telegram: answering a press failed: %s", safe_error(exc, ApiError))

    async def _react(self, update: MessageReactionUpdated) -> None:
        """Reports what a person's reactions to a message gained and lost (Telegram sends
        the whole set before and after)."""
        assert self._bot is not None
        chat = update.chat
        if not is_answered(chat):
            return
        chat_id = f"tg:{chat.id}"
        person = update.user
        if person is not None:
            if person.is_bot or person.id == self._me_id:
                return  # this bot's own reactions are never counted; nor other bots'
            # Someone who reacts is in the chat: "remind @them" can find them now.
            sender = self._people.remember(chat_id, person).user_id
        elif update.actor_chat is not None:
            # Anonymous: a group's anonymous admin (the group itself) or a channel. Counted
            # as that chat: Telegram doesn't say which admin, so they all count once per
            # emoji, which undercounts but never invents a reaction.
            sender = f"tg:{update.actor_chat.id}"
        else:
            return
        try:
            for reaction in reactions_of(update, sender):
                await self._bot.react(reaction)
        except Exception as exc:
            log.error("telegram: reporting a reaction failed: %s", safe_error(exc, ApiError))

    async def _answer(self, message: Message) -> None:
        bot = self._bot
        assert bot is not None
        try:
            incoming = await self._incoming(message)
            if incoming is None:
                return

            async def deliver(replies: list[Reply]) -> None:
                chat = message.chat.id
                for reply in replies:
                    sent = await send_reply(
                        self._client, chat, reply.text, message.message_id, reply.buttons
                    )
                    if reply.reminder_id is not None and sent is not None:
                        await bot.posted(reply, sent)  # a 👍 on it: "me too"

            await bot.handle(incoming, deliver)
        except Exception as exc:
            log.error("telegram: answering a message failed: %s", safe_error(exc, ApiError))

    async def _incoming(self, message: Message) -> IncomingMessage | None:
        """The bot's view of a Telegram message; None for what it ignores."""
        assert self._bot is not None  # updates are answered once started
        chat, sender = message.chat, message.from_user
        if not is_answered(chat):
            return None
        if sender is None or sender.is_bot:
            return None  # other bots (no bot-to-bot loops), anonymous admins
        chat_id = f"tg:{chat.id}"
        sender_member = self._people.remember(chat_id, sender)
        read = addressing(message, username=self._username, me=self._me_id, bot_name=self._bot_name)
        text, mentions_bot = read.text, read.mentions_bot
        mentions: list[Member] = []
        for other in read.others:
            if other.user is not None:  # a text mention: now a person seen in the chat
                self._people.remember(chat_id, other.user)
                mentions.append(Member(f"tg:{other.user.id}", other.shown))
            elif (found := self._people.find(chat_id, other.shown[1:])) is not None:
                mentions.append(found)
        replied = message.reply_to_message
        replied_from = replied.from_user if replied is not None else None
        reply_to_bot = replied_from is not None and replied_from.id == self._me_id
        group = chat.type != chat.PRIVATE
        # getChatMember costs a request: only for messages the router may answer.
        addressee = Commands.target(text) if text.startswith("/") else None
        for_bot = text.startswith("/") and addressee in (None, self._bot_name)
        prefixed = not text.startswith("/") and self._bot.may_address(text)
        maybe_for_bot = mentions_bot or reply_to_bot or for_bot or prefixed
        return IncomingMessage(
            chat_id=chat_id,
            chat_type="group" if group else "private",
            sender_id=sender_member.user_id,
            sender_name=sender_member.name,
            text=text,
            mentions_bot=mentions_bot,
            mention_entities=True,
            reply_to_bot=reply_to_bot,
            sender_is_admin=group
            and maybe_for_bot
            and await self._people.is_admin(chat.id, sender.id),
            message_id=str(message.message_id),
            timestamp=message.date,
            mentions=tuple(dict.fromkeys(mentions)),
            reply_to_message_id=str(replied.message_id) if replied is not None else None,
            one_at_a_time=True,  # OrderedWork: a chat's updates in order
        )

    async def find(self, chat_id: str, name: str) -> Member | None:
        """A member this adapter has seen in the chat (Telegram lists no members)."""
        return self._people.find(chat_id, name)

    # -- outgoing ----------------------------------------------------------------------

    async def send(self, message: OutgoingMessage) -> str | None:
        chat = user_number(message.chat_id)
        if chat is None or not message.chat_id.startswith(self.chat_prefix):
            raise SendError(f"not a Telegram chat id: {message.chat_id}")
        if self._stopped:
            raise SendError("the telegram adapter is stopped")  # retried after a restart
        try:
            # Telegram has no mention of everyone (`message.everyone`): its people, the
            # one who set it among them, are text mentions, which notify in a muted group.
            return await send_text(
                self._client, chat, message.text, message.people, None, message.buttons
            )
        except ApiError as exc:
            raise SendError(f"telegram {exc}") from None

    # -- webhook and status ------------------------------------------------------------

    def routes(self) -> Sequence[BaseRoute]:
        if not self._settings.webhook_url:
            return ()
        path = urlsplit(self._settings.webhook_url).path or "/"
        return (Route(path, self._webhook, methods=["POST"]),)

    async def _webhook(self, request: Request) -> Response:
        secret = self._settings.webhook_secret
        given = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
        if secret is None or not hmac.compare_digest(
            given.encode(), secret.get_secret_value().encode()
        ):
            return Response(status_code=401)
        try:
            body = await request.json()
            if self._bot is None or not isinstance(body, dict):
                return Response(status_code=503)
            self._dispatch(Update.de_json(body, self._client))
        except (ValueError, KeyError, TypeError, AttributeError):  # how a bad body fails
            return Response(status_code=400)
        return Response(status_code=200)

    def status(self) -> dict[str, Any]:
        return {
            "connected": self._link.since is not None,
            "mode": "webhook" if self._settings.webhook_url else "polling",
            "username": self._username or None,
            "since": iso(self._link.since),
            "last_update": iso(self._link.last_event),
            "last_error": self._link.last_error,
        }
