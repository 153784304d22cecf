"""Who is who in DingTalk chats, as far as DingTalk lets a robot know: it lists no
group's members, so the directory is the people seen in each chat (a message's sender,
by their own nick, and the people it @-s, from DingTalk's atUsers), and a group's title
(`conversationTitle`); for a single chat, the one person in it. All are kept in the
bot's database (adapter state, one key per chat), so that names still resolve, and a
single chat's reminders still reach their person, after a restart. Writing them is
best effort: a database that fails for a moment costs a name, never a message.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.bot.adapters.base import the_one
from groupmate.storage import Member, StorageError
from groupmate.storage.adapter_state import load_state, save_state
from groupmate.storage.database import Database

log = logging.getLogger(__name__)
PREFIX = CHAT_PREFIXES["dingtalk"]


@dataclass(slots=True)
class _Chat:
    title: str | None = None
    people: dict[str, str] = field(default_factory=dict)  # user id -> name
    loaded: bool = False  # read from the database (until then, nothing is written back)
    # One write at a time, each of the chat as it is when its turn comes: two messages
    # seen at once must not land their snapshots out of order (the older last, a name
    # lost).
    writing: asyncio.Lock = field(default_factory=asyncio.Lock)


class People:
    """The chats' members and titles, loaded from the database the first time a chat
    is asked about and written back when something new was seen."""

    def __init__(self, database: Callable[[], Database | None]) -> None:
        self._database = database
        self._chats: dict[str, _Chat] = {}
        self._private: dict[str, str] = {}  # single-chat conversation -> the person's id
        self._not_private: set[str] = set()  # conversations known to be no single chat

    async def _chat(self, conversation: str) -> _Chat:
        chat = self._chats.setdefault(conversation, _Chat())
        if chat.loaded:
            return chat
        database = self._database()
        if database is None:
            return chat
        try:
            stored = await load_state(database, f"dingtalk:chat:{conversation}")
        except StorageError as exc:
            log.warning("dingtalk: reading a chat's directory failed (%s)", type(exc).__name__)
            return chat  # read again next time; what is seen meanwhile is kept in memory
        chat.loaded = True
        try:
            saved = json.loads(stored) if stored else {}
            people = saved.get("people") or {}
            for uid, name in people.items():
                chat.people.setdefault(str(uid), str(name))
            chat.title = chat.title or (str(saved["title"]) if saved.get("title") else None)
        except (ValueError, AttributeError, TypeError):
            log.warning("dingtalk: the stored directory of a chat is unreadable; starting anew")
        return chat

    async def members(self, conversation: str) -> dict[str, Member]:
        """The chat's people by user id ("dt:…")."""
        chat = await self._chat(conversation)
        return {uid: Member(uid, name) for uid, name in chat.people.items()}

    async def title(self, conversation: str) -> str | None:
        return (await self._chat(conversation)).title

    async def saw(
        self,
        conversation: str,
        sender: Member,
        mentioned: Iterable[Member],
        title: str | None,
    ) -> None:
        """A message's sender (their nick is theirs: it replaces an older one), the
        people it @-s by the names found for them (a name already known stays), and the
        group's title; written to the database when any of it is new."""
        chat = await self._chat(conversation)
        before = (chat.title, dict(chat.people))
        chat.people[sender.user_id] = sender.name
        for member in mentioned:
            if member.name != member.user_id.removeprefix(PREFIX):  # an id is no name
                chat.people.setdefault(member.user_id, member.name)
        if title:
            chat.title = title
        if chat.loaded and (chat.title, chat.people) != before:
            async with chat.writing:
                value = {"title": chat.title, "people": chat.people}
                await self._save(
                    f"dingtalk:chat:{conversation}", json.dumps(value, ensure_ascii=False)
                )

    async def find(self, conversation: str, name: str) -> Member | None:
        """The one member seen in the chat by that nick or id; two by one name: no one."""
        wanted = name.casefold().lstrip("@")
        return the_one(
            member
            for member in (await self.members(conversation)).values()
            if wanted in (member.name.casefold(), member.user_id.casefold().removeprefix(PREFIX))
        )

    async def saw_single_chat(self, conversation: str, user_id: str) -> None:
        """A single chat's person: a reminder there after a restart (its webhook gone)
        is sent to them by oToMessages/batchSend."""
        person = user_id.removeprefix(PREFIX)
        self._not_private.discard(conversation)
        if self._private.get(conversation) == person:
            return
        self._private[conversation] = person
        await self._save(f"dingtalk:single:{conversation}", person)

    async def single_chat_person(self, conversation: str) -> str | None:
        """The person of a single chat; None for a group (remembered: a group's every
        send must not read the database). Raises StorageError when it can't be read."""
        if conversation in self._private:
            return self._private[conversation]
        if conversation in self._not_private:
            return None
        database = self._database()
        if database is None:
            return None
        person = await load_state(database, f"dingtalk:single:{conversation}")
        if person is None:
            self._not_private.add(conversation)
            return None
        self._private[conversation] = person
        return person

    async def _save(self, key: str, value: str) -> None:
        database = self._database()
        if database is None:
            return
        try:
            await save_state(database, key, value)
        except StorageError as exc:
            log.warning("dingtalk: keeping %s failed (%s)", key.split(":")[1], type(exc).__name__)
