"""The message context every handler receives as `ctx`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import ValidationInfo

from groupmate.function_calls.deps import Deps
from groupmate.function_calls.vocabulary import AuthMethod, CallSource
from groupmate.storage.clock import utc_now
from groupmate.storage.outgoing import Member
from groupmate.storage.vocabulary import (
    ChatType as ChatType,  # re-exported: function_calls.ChatType
)

MESSAGE_CONTEXT_KEY = "message_context"


@dataclass(frozen=True, slots=True)
class MessageContext:
    """Who wrote, where, and with which services (`deps`, by type); always set by the
    router, never by the model.

    `clock` returns an aware datetime and is injectable so that tests control time.
    """

    chat_id: str
    chat_type: ChatType
    sender_id: str
    sender_name: str = ""
    is_admin: bool = False
    timezone: str = "UTC"
    # The country whose work days "every weekday" follows here (None: Monday to Friday).
    workdays: str | None = None
    deps: Deps = field(default_factory=Deps)
    clock: Callable[[], datetime] = utc_now
    # Users the platform says this message mentions (members of the chat).
    mentioned: tuple[Member, ...] = ()
    # The platform id of the message this one replies to, if any.
    reply_to: str | None = None
    # The words of the message the tools act on (what the user wrote to the bot): the
    # reminder tools check a model's call against the time they name.
    text: str = ""
    # The words of the message this one replies to, when the chat log has it: "summarize
    # this" in reply to a link.
    reply_text: str = ""
    # How many of the sender's newest logged messages make up this request: a burst
    # (`bot.burst_ms`) joins several into one. "Since my last message" starts before them.
    request_messages: int = 1
    # Where the call comes from and how the caller was authenticated: the audit log's.
    source: CallSource = "model"
    auth: AuthMethod = "platform"
    # One of the bot's own admins (`bot.admins`, the operator, an API token holder
    # acting as admin): the tools policy's `admins` in a private chat, where every
    # sender administers their own chat (`is_admin`).
    bot_admin: bool = False
    # Tools a chat admin switched off for this chat (`/tools off NAME`).
    tools_off: frozenset[str] = frozenset()
    # The words after the command's name when a slash command called the tool (None
    # otherwise): what a `CommandText` parameter is given.
    command_text: str | None = None
    # The occurrence of a reminder a pressed button names (source "button"/"reaction"):
    # what a done is said to. None: the latest that went out.
    occurrence: datetime | None = None
    # Set by the invoker for one call: the tools policy says the sender may act only on
    # what they created (`who: creator_or_admin`).
    owner_only: bool = False

    def __post_init__(self) -> None:
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError, OSError):  # OSError: 'Europe' is a folder
            raise ValueError(f"unknown time zone {self.timezone!r}; use an IANA name") from None

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def now(self) -> datetime:
        """The current time in the chat's time zone."""
        return self.clock().astimezone(self.zone)


class CommandText(str):
    """The words after a command's name, exactly as the user wrote them: a handler that
    reads its own words asks for them by this type, as NoneBot2's `CommandArg`::

        @tool_function(description="Roll dice, e.g. 2d6+1.", command="roll")
        async def roll(words: CommandText) -> FunctionResult: ...

    Such a tool is a command's alone: it takes no arguments model, needs `command=`, and
    is not offered to the model (there is nothing for it to fill). Called another way
    (the API, a plugin's `PluginTools`), it is given "".
    """

    __slots__ = ()


def validation_context(info: ValidationInfo) -> MessageContext | None:
    """The message context inside a Pydantic validator, when the tool is called for a chat."""
    context = info.context
    if isinstance(context, Mapping):
        found = context.get(MESSAGE_CONTEXT_KEY)
        if isinstance(found, MessageContext):
            return found
    return None
