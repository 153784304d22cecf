"""Who is who in Discord chats, as far as the bot may know without the privileged Server
Members intent: the people seen in each chat (a message's author and the people it
mentions), by the names they go by, and each chat's guild, so that a name resolves
among the people seen anywhere in that guild."""

from __future__ import annotations

import discord

from groupmate.bot.adapters.discord_events import member_of
from groupmate.storage import Member


class DiscordPeople:
    """The people seen per chat, with the names they go by."""

    def __init__(self) -> None:
        self._seen: dict[str, dict[str, tuple[Member, frozenset[str]]]] = {}
        self._guild_of: dict[str, int] = {}  # chat id -> its guild, for the directory

    def remember(self, chat_id: str, message: discord.Message, *, me: int) -> None:
        """The author and the people mentioned, for the member directory."""
        seen = self._seen.setdefault(chat_id, {})
        for user in (message.author, *message.mentions):
            if user.id != me and not user.bot:
                member = member_of(user)
                seen[member.user_id] = (member, _names(user))
        if message.guild is not None:
            self._guild_of[chat_id] = message.guild.id

    def find(self, chat_id: str, name: str) -> Member | None:
        """The one person by that display name, username or id: among those seen in the
        chat, else among those seen in its guild's other channels and threads (the guild's
        member list needs the privileged Server Members intent, which the bot does not
        ask for). A name two people share is no one's: never guessed."""
        wanted = name.casefold().lstrip("@")
        found = {
            m.user_id: m for m, names in self._seen.get(chat_id, {}).values() if wanted in names
        }
        if not found:
            found = {m.user_id: m for m, names in self._guild_people(chat_id) if wanted in names}
        return next(iter(found.values())) if len(found) == 1 else None

    def _guild_people(self, chat_id: str) -> list[tuple[Member, frozenset[str]]]:
        guild_id = self._guild_of.get(chat_id)
        if guild_id is None:
            return []
        return [
            entry
            for chat, seen in self._seen.items()
            if self._guild_of.get(chat) == guild_id
            for entry in seen.values()
        ]


def _names(user: discord.abc.User) -> frozenset[str]:
    called = (user.display_name, user.name, user.global_name, str(user.id))
    return frozenset(n.casefold() for n in called if n)
