"""Discord messages as the bot sees them, and the bot's text as Discord shows it.

Everything here reads what discord.py already parsed from the gateway: the mention
entities (`message.mentions` and `role_mentions`, from the event's `mentions` and
`mention_roles` arrays, never from the text),
the replied-to message (`referenced_message`), and the author as a guild Member whose
permissions the library computes from the guild's roles (GUILD_CREATE) and the member's
role ids (MESSAGE_CREATE's `member`). Reactions come from the raw reaction events
(MESSAGE_REACTION_ADD / _REMOVE), which name the message by id whether or not the library
still has it cached.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import discord

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.bot.adapters.base import mention_pieces, mention_targets
from groupmate.bot.messages import IncomingMessage, IncomingReaction
from groupmate.storage import Member

PREFIX = CHAT_PREFIXES["discord"]
MESSAGE_LIMIT = 2000  # characters: Discord refuses longer messages
NONCE_LENGTH = 25  # Discord's limit on a nonce string
# Discord's encoding of a user mention in text: <@123> (or <@!123>, a nickname mention),
# and of a role mention: <@&123>.
_MENTION_TOKEN = re.compile(r"<@(!|&)?(\d+)>")
# The message types that are someone speaking (others: joins, pins, thread starts).
_SPOKEN = (discord.MessageType.default, discord.MessageType.reply)


def is_spoken(message: discord.Message) -> bool:
    """A person's message (not a bot's, not a system notice)."""
    return message.type in _SPOKEN and not message.author.bot


def member_of(user: discord.abc.User) -> Member:
    return Member(f"{PREFIX}{user.id}", user.display_name)


def incoming(message: discord.Message, *, me: int, bot_name: str) -> IncomingMessage:
    """The bot's view of one Discord message. Guild channels and their threads are group
    chats (the thread is its own chat: replies stay in it), DMs private chats."""
    # A DM by its channel: a guild message whose guild is not cached has no guild either.
    private = isinstance(message.channel, discord.DMChannel)
    people = [member_of(user) for user in message.mentions if user.id != me]
    reference = message.reference
    resolved = reference.resolved if reference is not None else None
    author = message.author
    # A guild message's author comes with its member (roles): the library computes its
    # permissions; the owner and Administrator have them all.
    is_admin = isinstance(author, discord.Member) and author.guild_permissions.manage_guild
    return IncomingMessage(
        chat_id=f"{PREFIX}{message.channel.id}",
        chat_type="private" if private else "group",
        sender_id=f"{PREFIX}{author.id}",
        sender_name=author.display_name,
        text=plain_text(message, me=me, bot_name=bot_name),
        mention_entities=True,
        mentions_bot=any(user.id == me for user in message.mentions)
        or _own_role(message) is not None,
        reply_to_bot=isinstance(resolved, discord.Message) and resolved.author.id == me,
        sender_is_admin=is_admin and not private,
        message_id=str(message.id),
        timestamp=message.created_at,
        mentions=tuple(people),
        reply_to_message_id=(
            str(reference.message_id)
            if reference is not None and reference.message_id is not None
            else None
        ),
    )


def reaction_of(payload: discord.RawReactionActionEvent, *, me: int) -> IncomingReaction | None:
    """The bot's view of a reaction put on a message or taken back, in the chat its
    message is in (the same chat id `incoming` gives the message: a thread's own id);
    None for the bot's own, and another bot's (their messages are not logged either)."""
    if payload.user_id == me or (payload.member is not None and payload.member.bot):
        return None
    emoji = payload.emoji
    if not emoji.name:  # a deleted custom emoji may come nameless: nothing to match it by
        return None
    return IncomingReaction(
        chat_id=f"{PREFIX}{payload.channel_id}",
        # Only a DM's event has no guild (bots are in no group DMs); the payload says so
        # itself, cached guild or not.
        chat_type="private" if payload.guild_id is None else "group",
        sender_id=f"{PREFIX}{payload.user_id}",
        message_id=str(payload.message_id),
        # A unicode emoji as its character; a server's own as ":name:", as people type
        # it (its "<:name:id>" form would show as code in a digest).
        emoji=emoji.name if emoji.is_unicode_emoji() else f":{emoji.name}:",
        added=payload.event_type == "REACTION_ADD",
    )


def _own_role(message: discord.Message) -> discord.Role | None:
    """The role Discord gave the bot in the message's guild, if the message mentions it
    (autocomplete offers it next to the bot: "@groupmate" may be either)."""
    role = message.guild.self_role if message.guild is not None else None
    return role if role is not None and role in message.role_mentions else None


def plain_text(message: discord.Message, *, me: int, bot_name: str) -> str:
    """The text as people read it: each `<@id>` the message's entities name as "@Name"
    (the bot, and its role, as its config name, which the router strips); others (an
    escaped one is no mention) stay as written."""
    names = {user.id: user.display_name for user in message.mentions}
    if me in names:
        names[me] = bot_name
    own_role = _own_role(message)
    roles = {own_role.id: bot_name} if own_role is not None else {}

    def name(match: re.Match[str]) -> str:
        known = (roles if match.group(1) == "&" else names).get(int(match.group(2)))
        return f"@{known}" if known is not None else match.group()

    return _MENTION_TOKEN.sub(name, message.content)


def render(text: str, people: Sequence[Member]) -> str:
    """`text` for Discord: each "@name" of `people` a `<@id>` mention (which notifies
    them when the send's allowed_mentions lists them)."""
    # Only snowflakes: anything else in `<@…>` would be shown as typed, not notify.
    links = {name: uid for name, uid in mention_targets(people, PREFIX).items() if uid.isdigit()}
    return "".join(
        f"<@{links[piece]}>" if mention else piece for piece, mention in mention_pieces(text, links)
    )


def user_ids(people: Sequence[Member]) -> list[discord.Object]:
    """The Discord users among `people`, for allowed_mentions (only they are pinged)."""
    found = (p.user_id.removeprefix(PREFIX) for p in people if p.user_id.startswith(PREFIX))
    return [discord.Object(id=int(uid)) for uid in found if uid.isdigit()]


def nonce(key: str, piece: int) -> str:
    """A stable nonce for one piece of an idempotent send: Discord returns the message it
    already made for a repeated nonce (with enforce_nonce) instead of posting again."""
    return hashlib.sha256(f"{key}#{piece}".encode()).hexdigest()[:NONCE_LENGTH]
