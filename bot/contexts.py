"""The one place a `MessageContext` is made, for every entry point: a chat message (the
router), a REST call, an MCP client, the dashboard. Each gets the same services (the
member directory included), the chat's zone and switched-off tools, and the bot's clock;
who calls, and how they proved it, is the caller's part."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from datetime import datetime

from groupmate.bot.config import Config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls import AuthMethod, CallSource, ChatType, MessageContext
from groupmate.function_calls.deps import Deps, Progress
from groupmate.function_calls.policy import tools_off
from groupmate.storage import Member, ReminderService
from groupmate.storage.chat_calendar import chat_workdays


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls a tool from outside a chat message (REST, MCP, the dashboard)."""

    chat_id: str
    sender_id: str
    source: CallSource
    auth: AuthMethod
    chat_type: ChatType = "group"
    sender_name: str = ""
    is_admin: bool = False
    mentioned: tuple[Member, ...] = ()
    # One of the bot's own admins (see MessageContext.bot_admin).
    bot_admin: bool = False


@dataclass(frozen=True, slots=True)
class Rights:
    """What a caller may do as an admin: of the chat (`MessageContext.is_admin`), and of
    the bot itself (`MessageContext.bot_admin`)."""

    is_admin: bool
    bot_admin: bool


def rights(
    admins: Collection[str],
    sender_id: str,
    chat_type: ChatType,
    *,
    chat_admin: bool = False,
    operator: bool = False,
) -> Rights:
    """The one rule for who is an admin, for every entry point. The bot's own admins
    (`bot.admins`) and its operator (at its terminal, on MCP stdio) are admins of the bot
    and so of every chat; a chat's admins (as its platform says: `chat_admin`) of theirs;
    and whoever is in a private chat is its owner."""
    bot_admin = operator or sender_id in admins
    return Rights(is_admin=chat_admin or bot_admin or chat_type == "private", bot_admin=bot_admin)


class ContextFactory:
    """Builds the tools' context of a call; see the module's docstring."""

    def __init__(
        self,
        config: Config,
        *,
        reminders: ReminderService,
        deps: Deps,
        clock: Callable[[], datetime],
    ) -> None:
        self._config = config
        self._reminders = reminders
        self.deps = deps
        self._clock = clock

    async def for_message(
        self,
        message: IncomingMessage,
        *,
        progress: Callable[[str], Awaitable[None]] | None = None,
        source: CallSource = "model",
    ) -> MessageContext:
        """The context for tools run on behalf of `message`'s sender. With `progress`,
        a slow tool's "searching…" line goes to the chat."""
        admin = rights(
            self._config.bot.admins,
            message.sender_id,
            message.chat_type,
            chat_admin=message.sender_is_admin,
            operator=message.from_operator,
        )
        deps = self.deps if progress is None else self.deps.with_(Progress, progress)
        return await self._build(
            Caller(
                chat_id=message.chat_id,
                sender_id=message.sender_id,
                source=source,
                auth="operator" if message.from_operator else "platform",
                chat_type=message.chat_type,
                sender_name=message.sender_name,
                is_admin=admin.is_admin,
                mentioned=message.mentions,
                bot_admin=admin.bot_admin,
            ),
            deps,
            reply_to=message.reply_to_message_id,
        )

    async def for_caller(self, caller: Caller) -> MessageContext:
        """The context for a caller outside any chat message."""
        return await self._build(caller, self.deps)

    async def _build(
        self, caller: Caller, deps: Deps, *, reply_to: str | None = None
    ) -> MessageContext:
        # Through the service's short-lived cache: a chat's row is read once per 10 s.
        chat = await self._reminders.chats.chat_row(caller.chat_id)
        return MessageContext(
            chat_id=caller.chat_id,
            chat_type=caller.chat_type,
            sender_id=caller.sender_id,
            sender_name=caller.sender_name,
            is_admin=caller.is_admin,
            timezone=chat.timezone or self._reminders.default_timezone,
            workdays=chat_workdays(chat.settings, self._reminders.chats.default_workdays),
            deps=deps,
            clock=self._clock,
            mentioned=caller.mentioned,
            reply_to=reply_to,
            source=caller.source,
            auth=caller.auth,
            bot_admin=caller.bot_admin,
            tools_off=tools_off(chat.settings),
        )
