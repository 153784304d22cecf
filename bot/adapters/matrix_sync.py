"""What one /sync batch holds for the Matrix adapter: the filter it is asked with, the
invites in it answered (joined, or declined outside `allow_rooms`), a room's missed
events fetched when the batch was cut short, and per room the events to handle, in the
room's order. The sync loop, the saved position and the answering stay in the adapter.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nio import SyncResponse

from groupmate.bot.adapters.base import Link
from groupmate.bot.adapters.matrix_client import MatrixClient, MatrixError, RoomInfo
from groupmate.bot.adapters.matrix_format import after_join
from groupmate.storage import utc_now

if TYPE_CHECKING:
    from groupmate.bot.adapters.matrix_settings import MatrixSettings

log = logging.getLogger("groupmate.bot.adapters.matrix")

_GAP_PAGE = 100
# What the bot does something with: messages it may answer, reactions digests count.
_HANDLED = frozenset({"m.room.message", "m.reaction", "m.room.redaction"})
# The first sync only yields a token (and pending invites): no history.
FIRST_FILTER: dict[str, Any] = {"presence": {"types": []}, "room": {"timeline": {"limit": 0}}}
_MEMBERSHIP_TYPES = {"m.room.member", "m.room.power_levels"}

# A room's events to handle, in order, per room.
Handling = list[tuple[Hashable, list[dict[str, Any]]]]


@dataclass(frozen=True, slots=True)
class SyncReader:
    """Reads the sync batches of one account. `rooms` is the adapter's cache of room
    members (dropped for a room whose membership changed); `link` records the last event;
    `notice` tells an encrypted room, once, that the bot can't read it."""

    client: MatrixClient
    settings: MatrixSettings
    rooms: dict[str, RoomInfo]
    link: Link
    notice: Callable[[str], Awaitable[None]]

    def filter(self) -> dict[str, Any]:
        # No presence, account data or typing: only what the bot answers or tracks.
        return {
            "presence": {"types": []},
            "account_data": {"types": []},
            "room": {
                "timeline": {"limit": self.settings.timeline_limit},
                "ephemeral": {"types": []},
            },
        }

    async def events(self, data: SyncResponse, since: str) -> Handling:
        """A sync batch's messages to answer, and reactions to count, per room."""
        await self.invites(data)
        for room_id in data.rooms.leave:
            self.rooms.pop(room_id, None)  # left or kicked: its members are stale
        handling: Handling = []
        user_id = self.settings.user_id
        for room_id, room in data.rooms.join.items():
            # The raw events: the mapping below reads the wire format, not nio's classes.
            timeline: list[dict[str, Any]] = [e.source for e in room.timeline.events]
            if room.timeline.limited and room.timeline.prev_batch:
                # More happened since `since` than one sync carries (a long downtime):
                # the rest comes first, or those messages would never be answered.
                gap = await self._gap(room_id, room.timeline.prev_batch, since)
                timeline = [*gap, *timeline]
            states = [*(e.source for e in room.state), *timeline]
            if any(e.get("type") in _MEMBERSHIP_TYPES for e in states if "state_key" in e):
                self.rooms.pop(room_id, None)
            encrypted = any(e.get("type") == "m.room.encryption" for e in states)
            events = []
            for event in after_join(timeline, user_id):
                self.link.last_event = utc_now()
                if event.get("sender") == user_id:
                    continue
                if event.get("type") == "m.room.encrypted":
                    encrypted = True
                elif event.get("type") in _HANDLED:  # in the room's order, with its messages
                    events.append(event)
            if events:
                handling.append((room_id, events))
            if encrypted:
                await self.notice(room_id)
        return handling

    async def _gap(self, room_id: str, prev_batch: str, since: str) -> list[dict[str, Any]]:
        """The events between the last sync and this batch, oldest first, at most max_gap:
        beyond that the oldest are dropped (and logged), not the bot stalled."""
        events: list[dict[str, Any]] = []
        token: str | None = prev_batch
        while token is not None and len(events) < self.settings.max_gap:
            page_size = min(_GAP_PAGE, self.settings.max_gap - len(events))
            page, token = await self.client.events_before(room_id, token, since, page_size)
            events.extend(page)
        skipped = " (the limit; older ones are skipped)" if token is not None else ""
        log.info("matrix: %d missed events in %s%s", len(events), room_id, skipped)
        return events[::-1]

    async def invites(self, data: SyncResponse) -> None:
        for room_id in data.rooms.invite:
            allowed = self.settings.allow_rooms
            try:
                if not allowed or room_id in allowed:
                    await self.client.join(room_id)
                    log.info("matrix: joined %s on invite", room_id)
                else:
                    await self.client.leave(room_id)
                    log.info("matrix: declined an invite to %s (not in allow_rooms)", room_id)
            except MatrixError as exc:
                log.warning("matrix: answering the invite to %s failed: %s", room_id, exc)
