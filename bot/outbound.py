"""Outgoing messages the bot sends on its own (reminders), routed to the chat's adapter."""

from __future__ import annotations

import logging
import uuid

import httpx

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.function_calls.services import MemberDirectory
from groupmate.storage import Member, OutgoingMessage, Reach, Sender, SendError

log = logging.getLogger(__name__)


class OutboundRouter:
    """Picks the adapter for a chat by the longest registered chat-id prefix; the
    webhook's sender (`register_others`) takes the chats of no platform."""

    def __init__(self) -> None:
        self._senders: list[tuple[str, Sender]] = []
        self._others: Sender | None = None

    def register(self, sender: Sender, *, chat_prefix: str = "") -> None:
        """`sender` delivers the chats whose id starts with `chat_prefix` ("": all)."""
        self._senders.append((chat_prefix, sender))
        self._senders.sort(key=lambda item: len(item[0]), reverse=True)

    def register_others(self, sender: Sender) -> None:
        """`sender` delivers the chats under no platform's prefix: the webhook's own.
        Another platform's chats are never sent there, even when no process serves it."""
        self._others = sender

    def reach(self) -> Reach:
        """The chats this process delivers to: the scheduler claims only theirs."""
        prefixes = tuple(prefix for prefix, _ in self._senders)
        platforms = tuple({*CHAT_PREFIXES.values(), *(p for p in prefixes if p)})
        return Reach(prefixes, others=self._others is not None, platforms=platforms)

    async def __call__(self, message: OutgoingMessage) -> str | None:
        for prefix, sender in self._senders:
            if message.chat_id.startswith(prefix):
                return await sender(message)
        if self._others is not None and self.reach().covers(message.chat_id):
            return await self._others(message)
        # Claims are limited to `reach()`, so this is a notice to a chat of a platform
        # this process does not run.
        raise SendError(f"no adapter delivers to chat {message.chat_id!r}")


class MemberDirectories:
    """Each adapter's member directory, picked like senders, by chat-id prefix: who may
    be named in "remind @bob …" is what the chat's own platform says."""

    def __init__(self) -> None:
        self._directories: list[tuple[str, MemberDirectory]] = []

    def register(self, directory: MemberDirectory, *, chat_prefix: str = "") -> None:
        self._directories.append((chat_prefix, directory))
        self._directories.sort(key=lambda item: len(item[0]), reverse=True)

    async def find(self, chat_id: str, name: str) -> Member | None:
        for prefix, directory in self._directories:
            if chat_id.startswith(prefix):
                return await directory.find(chat_id, name)
        return None


class WebhookSender:
    """POSTs each outgoing message to adapters.webhook.outbound_url.

    Retries and backoff are the reminder dispatcher's; this raises SendError with a
    message that never contains the URL (it may embed a token).
    """

    def __init__(self, url: str, *, timeout: float = 10.0) -> None:
        self._url = url
        self._client = httpx.AsyncClient(timeout=timeout)

    async def __call__(self, message: OutgoingMessage) -> str | None:
        """POST the message; returns the `message_id` the receiver answered, if any."""
        body: dict[str, object] = {
            "chat_id": message.chat_id,
            "text": message.text,
            "mentions": list(message.mentions),
            # And everyone in the chat (an admin's reminder for everyone): the receiver
            # mentions them its platform's way.
            "everyone": message.everyone,
            "kind": message.kind,
        }
        headers = {}
        if message.reminder_id is not None and message.occurrence is not None:
            body["reminder_id"] = message.reminder_id
            body["occurrence"] = message.occurrence.isoformat()
        # Reminders carry a key stable across retries and restarts; notices get a fresh one.
        headers["Idempotency-Key"] = message.idempotency_key or uuid.uuid4().hex
        try:
            response = await self._client.post(self._url, json=body, headers=headers)
        except httpx.TimeoutException:
            raise SendError("the outbound webhook timed out") from None
        except httpx.HTTPError as exc:
            raise SendError(f"the outbound webhook is unreachable ({type(exc).__name__})") from None
        if response.status_code >= 300:
            raise SendError(f"the outbound webhook answered HTTP {response.status_code}")
        try:
            answer = response.json()
        except ValueError:
            return None  # any 2xx counts as delivered; an id is optional
        found = answer.get("message_id") if isinstance(answer, dict) else None
        return str(found) if isinstance(found, str | int) and not isinstance(found, bool) else None

    async def aclose(self) -> None:
        await self._client.aclose()
