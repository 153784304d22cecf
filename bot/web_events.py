"""The web playground's chats ("web:…"): the bot's own messages to them (reminders,
progress lines) are logged in the chat's history and pushed live to the open pages, with
their buttons; a press that changes a message pushes it again, as an edit."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.storage import Button, OutgoingMessage
from groupmate.storage.chatlog import ChatLog, LogEntry

log = logging.getLogger(__name__)

WEB_PREFIX = CHAT_PREFIXES["web"]
# A page that stops reading loses its oldest events, never the bot's memory: the
# history endpoint still has every message.
_QUEUE_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class LiveEvent:
    """One message the bot sent to a web chat by itself."""

    id: str
    chat_id: str
    text: str
    kind: str
    mentions: tuple[str, ...]
    reminder_id: str | None
    at: datetime
    buttons: tuple[tuple[Button, ...], ...] = ()
    # The message `id` (sent before) now reads as this: a press changed it.
    edit: bool = False

    @property
    def name(self) -> str:
        """The server-sent event's name."""
        return "edit" if self.edit else "message"

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "chat_id": self.chat_id,
            "text": self.text,
            "kind": self.kind,
            "mentions": list(self.mentions),
            "reminder_id": self.reminder_id,
            "at": self.at.isoformat(),
            "buttons": [[asdict(b) for b in row] for row in self.buttons],  # label, data
            "edit": self.edit,
        }


class LiveEvents:
    """The sender for "web:" chats, and the pages listening to them."""

    def __init__(self, chatlog: ChatLog, *, bot_name: str, clock: Callable[[], datetime]) -> None:
        self._chatlog = chatlog
        self._bot_name = bot_name
        self._clock = clock
        self._listeners: set[asyncio.Queue[LiveEvent | None]] = set()
        self._closed = False

    async def send(self, message: OutgoingMessage) -> str:
        """Deliver: log it in the chat's history (so a reload shows it), then push it."""
        event = self._event(uuid.uuid4().hex, message, edit=False)
        said = LogEntry(f"bot-{event.id}", "bot", self._bot_name, message.text, event.at)
        await self._chatlog.append(message.chat_id, said, from_bot=True, answered=True)
        self._push(event)
        return event.id

    def edit(self, message_id: str, message: OutgoingMessage) -> None:
        """The message `message_id` now reads as `message` (a press changed it): the
        open pages redraw it in place."""
        self._push(self._event(message_id, message, edit=True))

    def _event(self, event_id: str, message: OutgoingMessage, *, edit: bool) -> LiveEvent:
        return LiveEvent(
            id=event_id,
            chat_id=message.chat_id,
            text=message.text,
            kind=message.kind,
            mentions=tuple(message.mentions),
            reminder_id=message.reminder_id,
            at=self._clock(),
            buttons=message.buttons,
            edit=edit,
        )

    def _push(self, event: LiveEvent) -> None:
        for queue in list(self._listeners):
            if queue.full():
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
            queue.put_nowait(event)

    @contextlib.contextmanager
    def listen(self) -> Iterator[asyncio.Queue[LiveEvent | None]]:
        """A queue of the events from now on; None means the bot is closing."""
        queue: asyncio.Queue[LiveEvent | None] = asyncio.Queue(_QUEUE_LIMIT)
        if self._closed:  # a page that connected as the server began to stop
            queue.put_nowait(None)
        self._listeners.add(queue)
        try:
            yield queue
        finally:
            self._listeners.discard(queue)

    def close(self) -> None:
        """End every page's stream (each reconnects later, to whichever bot then runs).
        Said when the server is told to stop, before it waits for its connections."""
        self._closed = True
        for queue in list(self._listeners):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)

    @property
    def listeners(self) -> int:
        return len(self._listeners)
