"""Telegram updates as the bot sees them, and the bot's text as Telegram shows it.

Everything here reads what python-telegram-bot already parsed from the update: the chat's
type, the message's entities (mentions, text mentions, bot commands; Telegram counts
their offsets in UTF-16 code units), and a reaction update's whole set of emoji before
and after. What needs the adapter's memory (the people it has seen in a chat, who is an
admin) stays in the adapter.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from telegram import (
    Chat,
    Message,
    MessageEntity,
    MessageReactionUpdated,
    ReactionType,
    ReactionTypeCustomEmoji,
    ReactionTypeEmoji,
    User,
)

from groupmate.bot.adapters.base import mention_pieces
from groupmate.bot.adapters.telegram_api import user_number
from groupmate.bot.messages import IncomingReaction
from groupmate.storage import Member


def is_answered(chat: Chat) -> bool:
    """Private chats and groups: a channel's posts (and reactions to them) are not."""
    return chat.type in (chat.PRIVATE, chat.GROUP, chat.SUPERGROUP)


@dataclass(frozen=True, slots=True)
class Mentioned:
    """Someone other than the bot whom a message mentions, as the text shows them: an
    "@username" (found among the people the adapter has seen) or a text mention, which
    names the user."""

    shown: str
    user: User | None  # a text mention's; None for an @username


@dataclass(frozen=True, slots=True)
class Addressing:
    """What a message's entities say: its text with the bot's own @username (also in
    "/remind@username") as the router knows the bot, whether it mentions the bot, and
    whom else it mentions, in order."""

    text: str
    mentions_bot: bool
    others: tuple[Mentioned, ...]


def addressing(message: Message, *, username: str, me: int | None, bot_name: str) -> Addressing:
    text = message.text or ""
    mentions_bot = False
    others: list[Mentioned] = []
    spans: list[tuple[int, int, str]] = []
    for entity in message.entities:
        offset, length = entity.offset, entity.length
        part = message.parse_entity(entity)  # Telegram counts in UTF-16 code units
        if entity.type == MessageEntity.MENTION:
            if part[1:].casefold() == username.casefold():
                mentions_bot = True
                spans.append((offset, length, f"@{bot_name}"))  # the router strips it
            else:
                others.append(Mentioned(part, None))
        elif entity.type == MessageEntity.TEXT_MENTION and entity.user is not None:
            if entity.user.id == me:
                mentions_bot = True
            else:
                others.append(Mentioned(part, entity.user))
        elif entity.type == MessageEntity.BOT_COMMAND and "@" in part:
            command, _, target = part.partition("@")
            if target.casefold() == username.casefold():
                # "/remind@groupmate_bot": the router knows the bot by its config name.
                spans.append((offset, length, f"{command}@{bot_name}"))
    if spans:
        text = replace_spans(text, spans)
    return Addressing(text, mentions_bot, tuple(others))


def reactions_of(update: MessageReactionUpdated, sender: str) -> list[IncomingReaction]:
    """What `sender`'s reactions to a message lost, then what they gained."""
    chat = update.chat
    added, removed = reaction_changes(update.old_reaction, update.new_reaction)
    changes = [(emoji, False) for emoji in removed] + [(emoji, True) for emoji in added]
    return [
        IncomingReaction(
            chat_id=f"tg:{chat.id}",
            chat_type="private" if chat.type == chat.PRIVATE else "group",
            sender_id=sender,
            message_id=str(update.message_id),  # as IncomingMessage.message_id
            emoji=emoji,
            added=on,
            timestamp=update.date,
        )
        for emoji, on in changes
    ]


def reaction_changes(
    old: Sequence[ReactionType], new: Sequence[ReactionType]
) -> tuple[list[str], list[str]]:
    """The emoji a `message_reaction` update added and took back: Telegram sends a
    person's whole set before and after, not the change. A custom emoji stands as
    "custom:<id>" (a digest can't draw it, but counts it apart from the others); a paid
    reaction (stars) is left out: it is no emoji the person picked."""
    before, after = _names(old), _names(new)
    return [e for e in after if e not in before], [e for e in before if e not in after]


def _names(reactions: Sequence[ReactionType]) -> list[str]:
    found: list[str] = []
    for reaction in reactions:
        if isinstance(reaction, ReactionTypeEmoji):
            found.append(reaction.emoji)
        elif isinstance(reaction, ReactionTypeCustomEmoji):
            found.append(f"custom:{reaction.custom_emoji_id}")
    return list(dict.fromkeys(found))


def render_html(text: str, people: Sequence[Member]) -> str:
    """`text` as Telegram HTML: everything escaped, and each "@name" of `people` a text
    mention (a link to the user, which notifies them even without a username)."""
    links: dict[str, int] = {}
    for person in people:
        number = user_number(person.user_id)
        if person.name and number is not None:
            links.setdefault(f"@{person.name.lstrip('@')}", number)
    out = []
    for piece, mention in mention_pieces(text, links):
        if mention:
            out.append(f'<a href="tg://user?id={links[piece]}">{html.escape(piece)}</a>')
        else:
            out.append(html.escape(piece, quote=False))
    return "".join(out)


def replace_spans(text: str, spans: Sequence[tuple[int, int, str]]) -> str:
    """`text` with each (UTF-16 offset, length, replacement) applied."""
    units = text.encode("utf-16-le")
    out = bytearray()
    position = 0
    for offset, length, replacement in sorted(spans):
        out += units[position : 2 * offset] + replacement.encode("utf-16-le")
        position = 2 * (offset + length)
    out += units[position:]
    return out.decode("utf-16-le", errors="replace")
