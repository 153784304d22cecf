"""The few Matrix client-server API calls the adapter needs, over matrix-nio.

Kept apart from the adapter so that rate limits, errors and token hygiene live in one
place: nio waits out M_LIMIT_EXCEEDED as the server asks, and every call goes through
`_call`, which turns an error response or a dead connection into a `MatrixError` whose
text never holds the token (nio sends it as a header, never in the URL).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from nio import (
    AsyncClient,
    AsyncClientConfig,
    ErrorResponse,
    LocalProtocolError,
    LoginResponse,
    MessageDirection,
    RoomMessagesResponse,
    SyncResponse,
)
from nio.api import RelationshipType

from groupmate.storage import SendError
from groupmate.storage.exceptions import GroupmateError

_MAX_RATE_LIMIT_WAITS = 5
_CREATOR_POWER = 2**53  # "infinite": above any power level an event can carry
_MAX_RETRY_AFTER_MS = 60_000  # a server asking for longer is treated as down


@dataclass(frozen=True, slots=True)
class RoomInfo:
    """Who is in a room and with what power, fetched once and dropped on a change."""

    members: Mapping[str, str]  # user id -> display name
    power: Mapping[str, int] = field(default_factory=dict)
    default_power: int = 0
    # Room version 12 gives the creators unlimited power and leaves them out of
    # m.room.power_levels; older versions list the creator there (usually at 100).
    creators: frozenset[str] = frozenset()

    def power_of(self, user_id: str) -> int:
        if user_id not in self.power and user_id in self.creators:
            return _CREATOR_POWER
        return self.power.get(user_id, self.default_power)


class MatrixError(GroupmateError):
    """A refused or failed call: the Matrix errcode (or HTTP status) and its message."""

    def __init__(self, errcode: str, message: str, status: int = 0) -> None:
        super().__init__(f"{errcode}: {message}")
        self.errcode = errcode
        self.status = status

    @property
    def transient(self) -> bool:
        """Unreachable or failing (a restart), not refused: worth trying again."""
        return self.errcode == "M_CONNECTION" or self.status >= 500


class Unreachable(SendError):
    """A send failed because the homeserver was unreachable or failing: try again."""


class MatrixClient:
    def __init__(self, homeserver: str, user_id: str, *, access_token: str | None = None) -> None:
        config = AsyncClientConfig(
            encryption_enabled=False,
            store_sync_tokens=False,  # the adapter keeps the token in the bot's database
            max_limit_exceeded=_MAX_RATE_LIMIT_WAITS,
            # nio would retry a dead server forever; the adapter backs off and reports it.
            max_timeouts=0,
            request_timeout=30,
        )
        self._nio = AsyncClient(homeserver.rstrip("/"), user_id, config=config)
        self._nio.user_id = user_id  # set by a login; a configured token skips that
        self._nio.add_response_callback(_refuse_long_waits, ErrorResponse)
        self.access_token = access_token

    @property
    def access_token(self) -> str | None:
        return str(self._nio.access_token) or None

    @access_token.setter
    def access_token(self, token: str | None) -> None:
        self._nio.access_token = token or ""

    async def aclose(self) -> None:
        await self._nio.close()

    async def _call(self, pending: Awaitable[Any]) -> Any:
        try:
            response = await pending
        except (aiohttp.ClientError, TimeoutError) as exc:
            # The exception text may contain the URL: name only the kind of failure.
            raise MatrixError("M_CONNECTION", type(exc).__name__) from None
        except LocalProtocolError:
            # nio refuses calls that need a token before one is set, as a server would.
            raise MatrixError("M_MISSING_TOKEN", "not logged in", 401) from None
        if isinstance(response, ErrorResponse):
            transport = response.transport_response
            status = int(transport.status) if transport is not None else 0
            raise MatrixError(
                str(response.status_code or f"HTTP_{status}"), str(response.message)[:200], status
            )
        return response

    async def login(self, password: str, device_id: str | None) -> LoginResponse:
        """A password login; the same device id keeps transaction ids deduplicating."""
        self._nio.device_id = device_id
        response: LoginResponse = await self._call(
            self._nio.login(password=password, device_name="groupmate")
        )
        return response

    async def whoami(self) -> str:
        return str((await self._call(self._nio.whoami())).user_id)

    async def sync(
        self, since: str | None, timeout_ms: int, sync_filter: dict[str, Any]
    ) -> SyncResponse:
        # nio gives the HTTP request the long poll plus 15s, so only a dead server times
        # out; a timeout of 0 would mean no HTTP timeout at all, so the least is 1 ms.
        pending = self._nio.sync(timeout=max(timeout_ms, 1), since=since, sync_filter=sync_filter)
        response: SyncResponse = await self._call(pending)
        return response

    async def join(self, room_id: str) -> None:
        await self._call(self._nio.join(room_id))

    async def leave(self, room_id: str) -> None:
        await self._call(self._nio.room_leave(room_id))

    async def send(
        self, room_id: str, content: dict[str, Any], txn_id: str, event_type: str = "m.room.message"
    ) -> str:
        """PUT with a transaction id: the server answers a repeat with the first event."""
        pending = self._nio.room_send(
            room_id, event_type, content, tx_id=txn_id, ignore_unverified_devices=True
        )
        return str((await self._call(pending)).event_id)

    async def own_reactions(self, room_id: str, event_id: str) -> dict[str, str]:
        """This account's reactions on `event_id`: their keys, with their event ids."""
        found: dict[str, str] = {}
        pages = self._nio.room_get_event_relations(
            room_id, event_id, RelationshipType.annotation, "m.reaction"
        )
        try:
            async for event in pages:  # nio ends the pages at an error response
                source = event.source
                relates = source.get("content", {}).get("m.relates_to", {})
                if source.get("sender") == self._nio.user_id and "key" in relates:
                    found[str(relates["key"])] = str(source["event_id"])
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise MatrixError("M_CONNECTION", type(exc).__name__) from None
        return found

    async def redact(self, room_id: str, event_id: str, txn_id: str) -> None:
        await self._call(self._nio.room_redact(room_id, event_id, tx_id=txn_id))

    async def room_info(self, room_id: str) -> RoomInfo:
        """Members, power levels and creators from one request for the room's state."""
        events: list[dict[str, Any]] = (await self._call(self._nio.room_get_state(room_id))).events
        members: dict[str, str] = {}
        levels: dict[str, Any] = {}
        create: dict[str, Any] = {}
        for event in events:
            content = event.get("content", {})
            if event["type"] == "m.room.member" and content.get("membership") == "join":
                user = event["state_key"]
                members[user] = str(content.get("displayname") or localpart(user))
            elif event["type"] == "m.room.power_levels" and event["state_key"] == "":
                levels = content
            elif event["type"] == "m.room.create" and event["state_key"] == "":
                create = event
        users = levels.get("users", {})
        extra = create.get("content", {}).get("additional_creators", [])
        return RoomInfo(
            members=members,
            power={u: int(p) for u, p in users.items() if isinstance(p, int)},
            default_power=int(levels.get("users_default", 0)),
            creators=frozenset([str(create.get("sender", "")), *map(str, extra)]),
        )

    async def events_before(
        self, room_id: str, start: str, stop: str | None, limit: int
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the room's timeline backwards from `start`, newest first, ending at
        the `stop` token; the token for the next page, or None at the end."""
        pending = self._nio.room_messages(room_id, start, stop, MessageDirection.back, limit)
        response: RoomMessagesResponse = await self._call(pending)
        events = [e.source for e in response.chunk]
        return events, (response.end if events and response.end != start else None)

    async def event(self, room_id: str, event_id: str) -> dict[str, Any]:
        source: dict[str, Any] = (
            await self._call(self._nio.room_get_event(room_id, event_id))
        ).event.source
        return source


def localpart(user_id: str) -> str:
    return user_id.removeprefix("@").split(":", 1)[0]


def _refuse_long_waits(response: ErrorResponse) -> None:
    """nio runs this before it sleeps on a 429: a wait past the limit ends the call."""
    if response.status_code == "M_LIMIT_EXCEEDED" and (
        (response.retry_after_ms or 0) > _MAX_RETRY_AFTER_MS
    ):
        raise MatrixError("M_LIMIT_EXCEEDED", "rate limited for too long", 429)
