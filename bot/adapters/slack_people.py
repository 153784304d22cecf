"""Who is who in a Slack workspace, for the Slack adapter: names (users.info, kept),
admins (workspace admins and owners, kept 5 minutes) and the member directory that
"remind @Carol" asks (the people seen in a channel, then the channel's members by
conversations.members, named by users.list; both kept 10 minutes).

Slack answers each of these with its own error codes; a failed lookup is logged by code
and treated as "not known", never as a guess: an unknown name is no one, an unknown
admin flag is not admin.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from groupmate.bot.adapters.base import the_one
from groupmate.storage import Member
from groupmate.storage.outgoing import safe_error

log = logging.getLogger("groupmate.bot.adapters.slack")

_ADMIN_TTL = 300.0  # seconds a users.info answer is trusted
_DIRECTORY_TTL = 600.0  # seconds the workspace's member list (and a channel's) is trusted
_PAGE = 200  # members per users.list / conversations.members page
_FAILED = (TimeoutError, SlackApiError, SlackClientError, OSError)


class SlackPeople:
    """Names, admin flags and the member directory of one workspace."""

    def __init__(self, client: AsyncWebClient) -> None:
        self._client = client
        self._names: dict[str, str] = {}
        self._admins: dict[str, tuple[float, bool]] = {}
        self._seen: dict[str, dict[str, Member]] = {}  # chat id -> members seen there
        self._workspace: tuple[float, list[tuple[Member, frozenset[str]]]] | None = None
        self._channels: dict[str, tuple[float, frozenset[str]]] = {}

    def saw(self, chat_id: str, member: Member) -> None:
        """`member` wrote or was mentioned in `chat_id`: found there first by name."""
        self._seen.setdefault(chat_id, {})[member.user_id] = member

    async def name(self, uid: str) -> str:
        """How Slack shows the user: display name, else real name, else handle."""
        if uid not in self._names:
            user = await self._user(uid)
            if user is None:
                return uid  # not remembered: asked again next time
            self._names[uid] = _shown(user)
        return self._names[uid]

    async def is_admin(self, uid: str) -> bool:
        """Workspace admins and owners (Slack has no admins of a channel; the config's
        `bot.admins` add others)."""
        now = time.monotonic()
        cached = self._admins.get(uid)
        if cached is not None and cached[0] > now:
            return cached[1]
        user = await self._user(uid)
        if user is None:
            return False  # unknown is not admin; asked again next time
        is_admin = bool(user.get("is_admin") or user.get("is_owner"))
        self._admins[uid] = (now + _ADMIN_TTL, is_admin)
        return is_admin

    async def find(self, chat_id: str, name: str) -> Member | None:
        """The member of the chat by that display name, real name, handle or id: among
        those seen in the chat and the channel's members (named by the workspace's
        list). A name two people share is no one's: never guessed."""
        wanted = name.casefold().lstrip("@")
        seen = [
            member
            for member in self._seen.get(chat_id, {}).values()
            if wanted in (member.name.casefold(), member.user_id.casefold().removeprefix("sl:"))
        ]
        in_channel = await self._channel(chat_id.removeprefix("sl:"))
        listed = [
            member
            for member, names in await self._everyone()
            if wanted in names and (in_channel is None or member.user_id[3:] in in_channel)
        ]
        return the_one([*seen, *listed])

    async def _user(self, uid: str) -> dict[str, Any] | None:
        try:
            answer = await self._client.users_info(user=uid)
        except _FAILED as exc:
            log.warning("slack: users.info: %s", safe_error(exc, code=slack_code))
            return None
        user = answer.get("user")
        return user if isinstance(user, dict) else None

    async def _channel(self, channel: str) -> frozenset[str] | None:
        """The user ids in `channel` (conversations.members, cached); None when Slack
        won't say (a scope missing): then the workspace's members are the candidates,
        still people Slack vouches for, and a shared name is still no one's."""
        now = time.monotonic()
        cached = self._channels.get(channel)
        if cached is not None and cached[0] > now:
            return cached[1]
        ids: list[str] = []
        cursor: str | None = None
        try:
            while True:
                answer = await self._client.conversations_members(
                    channel=channel, cursor=cursor, limit=_PAGE
                )
                ids.extend(str(uid) for uid in answer.get("members") or [])
                cursor = (answer.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    break
        except _FAILED as exc:
            log.warning("slack: conversations.members: %s", safe_error(exc, code=slack_code))
            return None
        members = frozenset(ids)
        self._channels[channel] = (now + _DIRECTORY_TTL, members)
        return members

    async def _everyone(self) -> list[tuple[Member, frozenset[str]]]:
        """Every human member of the workspace, with the names they go by (cached)."""
        now = time.monotonic()
        if self._workspace is not None and self._workspace[0] > now:
            return self._workspace[1]
        users: list[dict[str, Any]] = []
        cursor: str | None = None
        try:
            while True:
                answer = await self._client.users_list(cursor=cursor, limit=_PAGE)
                users.extend(answer.get("members") or [])
                cursor = (answer.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    break
        except _FAILED as exc:
            log.warning("slack: users.list: %s", safe_error(exc, code=slack_code))
            return []
        found: list[tuple[Member, frozenset[str]]] = []
        for user in users:
            if user.get("deleted") or user.get("is_bot") or not user.get("id"):
                continue
            uid, profile = str(user["id"]), user.get("profile") or {}
            called = (profile.get("display_name"), profile.get("real_name"), user.get("name"))
            shown = _shown(user)
            self._names.setdefault(uid, shown)
            names = frozenset(str(n).casefold() for n in (*called, uid) if n)
            found.append((Member(f"sl:{uid}", shown), names))
        self._workspace = (now + _DIRECTORY_TTL, found)
        return found


def _shown(user: dict[str, Any]) -> str:
    profile = user.get("profile") or {}
    called = (profile.get("display_name"), profile.get("real_name"), user.get("name"))
    return next((str(n) for n in called if n), str(user.get("id", "")))


def slack_code(exc: BaseException) -> str | None:
    """Slack's error code, for `safe_error`: never its text (it may hold a URL)."""
    return code_of(exc) if isinstance(exc, SlackApiError) else None


def code_of(exc: SlackApiError) -> str:
    """Slack's error code ("channel_not_found"), or the HTTP status of a bare answer."""
    data = exc.response.data
    if isinstance(data, dict) and isinstance(data.get("error"), str):
        return str(data["error"])
    return f"HTTP {exc.response.status_code}"
