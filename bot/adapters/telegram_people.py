"""Who is who in the Telegram chats of one bot: the people it has seen in each chat (the
Bot API lists no members, so "remind @bob" can find only someone who spoke, reacted or
was text-mentioned there) and who is an admin (getChatMember, kept 5 minutes).

An admin flag Telegram could not say is "not admin", asked again next time; a display
name two people go by is no one's.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import telegram
from telegram import ChatMember, User

from groupmate.bot.adapters.base import the_one
from groupmate.bot.adapters.telegram_api import ApiError, call
from groupmate.storage import Member

log = logging.getLogger("groupmate.bot.adapters.telegram")

_ADMIN_TTL = 300.0  # seconds a getChatMember answer is trusted


@dataclass(frozen=True, slots=True)
class _Seen:
    """A user the adapter saw in a chat, so that "remind @bob" can find Bob."""

    member: Member
    username: str


class TelegramPeople:
    """The people seen in each chat, and the admin flags asked of Telegram."""

    def __init__(self, client: telegram.Bot) -> None:
        self._client = client
        self._admins: dict[tuple[int, int], tuple[float, bool]] = {}
        self._seen: dict[str, dict[str, _Seen]] = {}

    def remember(self, chat_id: str, user: User) -> Member:
        username = user.username or ""
        member = Member(f"tg:{user.id}", user.full_name or username or str(user.id))
        self._seen.setdefault(chat_id, {})[member.user_id] = _Seen(member, username)
        return member

    def find(self, chat_id: str, name: str) -> Member | None:
        wanted = name.casefold().lstrip("@")
        for seen in self._seen.get(chat_id, {}).values():
            if wanted == seen.username.casefold():
                return Member(seen.member.user_id, seen.username)  # shown as "@username"
        # A username is one person's; a display name may be several people's.
        return the_one(
            seen.member
            for seen in self._seen.get(chat_id, {}).values()
            if wanted == seen.member.name.casefold()
        )

    async def is_admin(self, chat: int, user: int) -> bool:
        now = time.monotonic()
        cached = self._admins.get((chat, user))
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            member = await call("getChatMember", lambda: self._client.get_chat_member(chat, user))
            is_admin = member.status in (ChatMember.OWNER, ChatMember.ADMINISTRATOR)
        except ApiError as exc:
            log.warning("telegram: %s", exc)
            return False  # unknown is not admin; ask again next time
        self._admins[(chat, user)] = (now + _ADMIN_TTL, is_admin)
        return is_admin
