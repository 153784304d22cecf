"""The few Matrix client-server API calls the adapter needs, over httpx.

Kept apart from the adapter so that rate limits, errors and token hygiene live in one
place: every call goes through `request`, which waits out M_LIMIT_EXCEEDED as the server
asks and turns any other failure into a `MatrixError` whose text never holds the token.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

log = logging.getLogger(__name__)

_MAX_RATE_LIMIT_WAITS = 5
_CREATOR_POWER = 2**53  # "infinite": above any power level an event can carry
_MAX_RETRY_AFTER = 60.0  # seconds; a server asking for longer is treated as down


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


class MatrixError(Exception):
    """A refused or failed call: the Matrix errcode (or HTTP status) and its message."""

    def __init__(self, errcode: str, message: str, status: int = 0) -> None:
        super().__init__(f"{errcode}: {message}")
        self.errcode = errcode
        self.status = status


def _path(*parts: str) -> str:
    return "/".join(quote(part, safe="") for part in parts)


class MatrixClient:
    def __init__(
        self,
        homeserver: str,
        *,
        access_token: str | None = None,
        transport: httpx.AsyncBaseTransport | None = None,  # tests: a fake server
    ) -> None:
        self.access_token = access_token
        self._http = httpx.AsyncClient(
            base_url=homeserver.rstrip("/"), timeout=30, transport=transport
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, str] | None = None,
        read_timeout: float = 30,
    ) -> dict[str, Any]:
        headers = {}
        if self.access_token:
            headers["Authorization"] = f"Bearer {self.access_token}"
        for _ in range(_MAX_RATE_LIMIT_WAITS):
            try:
                response = await self._http.request(
                    method,
                    "/_matrix/client/v3/" + path,
                    json=body,
                    params=params,
                    headers=headers,
                    timeout=read_timeout,
                )
            except httpx.HTTPError as exc:
                # The exception text may contain the URL, never the header: still, name
                # only the kind of failure.
                raise MatrixError("M_CONNECTION", type(exc).__name__) from None
            try:
                parsed: Any = response.json()
            except json.JSONDecodeError:
                parsed = None
            data: dict[str, Any] = parsed if isinstance(parsed, dict) else {}
            if response.status_code == 429 or data.get("errcode") == "M_LIMIT_EXCEEDED":
                wait = _retry_after(response, data)
                if wait > _MAX_RETRY_AFTER:
                    break
                log.warning("matrix: rate limited, waiting %.1fs", wait)
                await asyncio.sleep(wait)
                continue
            if response.status_code >= 400:
                raise MatrixError(
                    str(data.get("errcode") or f"HTTP_{response.status_code}"),
                    str(data.get("error", ""))[:200],
                    response.status_code,
                )
            return data
        raise MatrixError("M_LIMIT_EXCEEDED", "rate limited for too long", 429)

    async def login(self, user_id: str, password: str, device_id: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": "m.login.password",
            "identifier": {"type": "m.id.user", "user": user_id},
            "password": password,
            "initial_device_display_name": "groupmate",
        }
        if device_id:
            body["device_id"] = device_id
        return await self.request("POST", "login", body=body)

    async def whoami(self) -> str:
        return str((await self.request("GET", "account/whoami"))["user_id"])

    async def sync(self, since: str | None, timeout_ms: int, sync_filter: str) -> dict[str, Any]:
        params = {"timeout": str(timeout_ms), "filter": sync_filter}
        if since:
            params["since"] = since
        # The HTTP timeout outlasts the long poll, so only a dead server times it out.
        return await self.request("GET", "sync", params=params, read_timeout=timeout_ms / 1000 + 30)

    async def join(self, room_id: str) -> None:
        await self.request("POST", _path("rooms", room_id, "join"), body={})

    async def leave(self, room_id: str) -> None:
        await self.request("POST", _path("rooms", room_id, "leave"), body={})

    async def send(self, room_id: str, content: dict[str, Any], txn_id: str) -> str:
        """PUT with a transaction id: the server answers a repeat with the first event."""
        path = _path("rooms", room_id, "send", "m.room.message", txn_id)
        return str((await self.request("PUT", path, body=content))["event_id"])

    async def joined_members(self, room_id: str) -> dict[str, str]:
        """User id -> display name (the localpart when none is set)."""
        data = await self.request("GET", _path("rooms", room_id, "joined_members"))
        joined: dict[str, Any] = data.get("joined", {})
        return {
            user: str((info or {}).get("display_name") or localpart(user))
            for user, info in joined.items()
        }

    async def state(self, room_id: str, event_type: str) -> dict[str, Any]:
        try:
            return await self.request("GET", _path("rooms", room_id, "state", event_type))
        except MatrixError as exc:
            if exc.errcode == "M_NOT_FOUND":
                return {}
            raise

    async def state_event(self, room_id: str, event_type: str) -> dict[str, Any]:
        """The whole state event (with its sender), not only its content."""
        path = _path("rooms", room_id, "state", event_type, "")
        return await self.request("GET", path, params={"format": "event"})

    async def room_info(self, room_id: str) -> RoomInfo:
        members = await self.joined_members(room_id)
        levels = await self.state(room_id, "m.room.power_levels")
        create = await self.state_event(room_id, "m.room.create")
        users = levels.get("users", {})
        extra = create.get("content", {}).get("additional_creators", [])
        return RoomInfo(
            members=members,
            power={u: int(p) for u, p in users.items() if isinstance(p, int)},
            default_power=int(levels.get("users_default", 0)),
            creators=frozenset([str(create.get("sender", "")), *map(str, extra)]),
        )

    async def event(self, room_id: str, event_id: str) -> dict[str, Any]:
        return await self.request("GET", _path("rooms", room_id, "event", event_id))


def localpart(user_id: str) -> str:
    return user_id.removeprefix("@").split(":", 1)[0]


def _retry_after(response: httpx.Response, data: dict[str, Any]) -> float:
    milliseconds = data.get("retry_after_ms")
    if isinstance(milliseconds, int | float) and milliseconds >= 0:
        return float(milliseconds) / 1000
    header = response.headers.get("Retry-After", "")
    return float(header) if header.isdigit() else 1.0
