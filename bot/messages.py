"""What platforms hand the bot, and what it hands back."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from groupmate.function_calls import ChatType
from groupmate.storage import Button, Member


@dataclass(frozen=True, slots=True)
class IncomingMessage:
    """One chat message as a platform adapter reports it."""

    chat_id: str
    chat_type: ChatType
    sender_id: str
    sender_name: str
    text: str
    mentions_bot: bool = False
    message_id: str | None = None
    timestamp: datetime | None = None
    reply_to_bot: bool = False
    # The platform says the sender administers this chat (in addition to bot.admins).
    sender_is_admin: bool = False
    # The platform marks its mentions (entities, at segments): then `mentions_bot` alone
    # says whether the bot was mentioned, and "@<bot name>" typed as plain text is not.
    mention_entities: bool = False
    # Chat members the message mentions, as the platform resolved them.
    mentions: tuple[Member, ...] = ()
    # The platform id of the message this one replies to (a reminder, to snooze it).
    reply_to_message_id: str | None = None
    # `reply_to_message_id` is the first message of the thread this one was posted in
    # (Slack's threads, Matrix's m.thread), not a message the sender picked to answer:
    # it neither sets the message apart from a burst nor ends a follow-up.
    in_thread: bool = False
    # The adapter hands over this chat's messages one at a time, each once the last is
    # answered (Telegram's and Matrix's ordered queues): a burst can't gather there, so
    # the router waits for none (waiting would only hold the chat up).
    one_at_a_time: bool = False
    # Typed by the bot's operator at its own terminal (the console): an admin of every
    # simulated chat, and never rate-limited. No network adapter may set this.
    from_operator: bool = False


@dataclass(frozen=True, slots=True)
class IncomingReaction:
    """Someone put an emoji on a message, or took it back (`added` False), as a platform
    adapter reports it. The bot's own reactions are not reported. `reaction_id`: the
    platform's id of the reaction itself, where it takes one back by that id alone
    (Matrix redacts the reaction's event): then `message_id` and `emoji` may be ""."""

    chat_id: str
    chat_type: ChatType
    sender_id: str
    message_id: str  # the platform's id of the message reacted to
    emoji: str  # as the platform names it: "👍", ":tada:" (Slack), "THUMBSUP" (Lark)
    added: bool = True
    timestamp: datetime | None = None
    reaction_id: str | None = None
    # As the chat shows the person, where the platform says (a reaction that acts on a
    # reminder says "✅ Done by <name>"); "" for unknown.
    sender_name: str = ""
    # The platform says the person administers the chat (see `IncomingMessage`).
    sender_is_admin: bool = False


@dataclass(frozen=True, slots=True)
class Reply:
    """A message for the chat the incoming one came from."""

    chat_id: str
    text: str
    mentions: tuple[str, ...] = ()
    # The reminder this reply confirms (set, changed): an adapter that knows the id of
    # the message it sent reports it (`BotHost.posted`), so a 👍 on it means "me too".
    reminder_id: str | None = None
    # Buttons under the reply, as on a delivered reminder (`OutgoingMessage.buttons`).
    buttons: tuple[tuple[Button, ...], ...] = ()
