"""Who is who in a Lark chat: names of the people seen and of the chat's members (all
pages, cached), the chat's owner and managers as its admins, and a person found by name."""

from __future__ import annotations

import logging
import time

from groupmate.bot.adapters.lark_api import LarkApi, LarkError
from groupmate.storage import Member

log = logging.getLogger(__name__)

_ADMIN_TTL = 300.0  # seconds a chat's owner and managers are trusted
_DIRECTORY_TTL = 600.0  # seconds a chat's member list is trusted


class LarkPeople:
    """The people of the bot's Lark chats, as far as the adapter needs them."""

    def __init__(self, api: LarkApi) -> None:
        self._api = api
        self.seen: dict[str, dict[str, Member]] = {}  # chat id -> user id -> as seen
        self._admins: dict[str, tuple[float, frozenset[str]]] = {}
        self._directory: dict[str, tuple[float, list[Member]]] = {}

    async def name(self, chat: str, open_id: str) -> str:
        """A person's name as the chat's member list has it (events carry no names)."""
        known = self.seen.get(f"lk:{chat}", {}).get(f"lk:{open_id}")
        if known is not None:
            return known.name
        for member in await self._members(chat):
            if member.user_id == f"lk:{open_id}":
                return member.name
        return open_id

    async def is_admin(self, chat: str, open_id: str) -> bool:
        """The chat's owner and its managers (the config's `bot.admins` add others)."""
        now = time.monotonic()
        cached = self._admins.get(chat)
        if cached is None or cached[0] <= now:
            try:
                info = await self._api.chat(chat)
            except LarkError as exc:
                log.warning("lark: %s", exc)
                return False  # unknown is not admin; asked again next time
            ids = [info.get("owner_id"), *(info.get("user_manager_id_list") or [])]
            cached = (now + _ADMIN_TTL, frozenset(str(i) for i in ids if i))
            self._admins[chat] = cached
        return open_id in cached[1]

    async def find(self, chat_id: str, name: str) -> Member | None:
        """The member of the chat by that name or open_id, among those seen in it and its
        member list (all pages, cached). A name two people share is no one's."""
        wanted = name.casefold().lstrip("@")
        members = await self._members(chat_id.removeprefix("lk:"))
        found = {
            m.user_id: m
            for m in [*self.seen.get(chat_id, {}).values(), *members]
            if wanted in (m.name.casefold(), m.user_id.casefold().removeprefix("lk:"))
        }
        return next(iter(found.values())) if len(found) == 1 else None

    async def _members(self, chat: str) -> list[Member]:
        now = time.monotonic()
        cached = self._directory.get(chat)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            items = await self._api.members(chat)
        except LarkError as exc:
            log.warning("lark: %s", exc)
            return []
        members = [
            Member(f"lk:{m['member_id']}", str(m.get("name") or m["member_id"]))
            for m in items
            if isinstance(m.get("member_id"), str)
        ]
        self._directory[chat] = (now + _DIRECTORY_TTL, members)
        return members
