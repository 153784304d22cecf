"""Confirmations: a tool that must not act on one message alone (`/forget me` deletes
for good) asks first, and the same sender's "yes" within `CONFIRM_TTL` runs the call it
held. The router hands that "yes" over (`bot.answering`); the tool, called again with
the held call's token, checks the token was granted by a "yes" and is not used yet, so
a caller can't skip the question by writing the token's argument itself.

Held in memory: a restart forgets them, and the sender is asked again.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

CONFIRM_TTL = timedelta(minutes=2)
# The argument a held call carries its token in.
TOKEN_FIELD = "confirmation"
_MAX_PENDING = 10_000


@dataclass(frozen=True, slots=True)
class HeldCall:
    """A tool call waiting for its sender's "yes"."""

    tool: str
    arguments: dict[str, Any]
    asked_at: datetime


class Confirmations:
    """Held calls per (chat, sender): at most one each, the newest question."""

    def __init__(self) -> None:
        self._held: dict[tuple[str, str], HeldCall] = {}
        self._granted: set[tuple[str, str, str]] = set()

    def ask(
        self, chat_id: str, sender_id: str, tool: str, arguments: dict[str, Any], now: datetime
    ) -> None:
        """Hold `tool(arguments)` until this sender says yes (or asks something else)."""
        if len(self._held) >= _MAX_PENDING:
            self._held.clear()
            self._granted.clear()
        token = secrets.token_hex(8)
        held = HeldCall(tool, {**arguments, TOKEN_FIELD: token}, now)
        self._held[(chat_id, sender_id)] = held

    def held(self, chat_id: str, sender_id: str, now: datetime) -> HeldCall | None:
        """The sender's held call, if it is still waiting."""
        found = self._held.get((chat_id, sender_id))
        if found is None or now - found.asked_at > CONFIRM_TTL:
            return None
        return found

    def take(self, chat_id: str, sender_id: str, now: datetime) -> HeldCall | None:
        """The sender said yes: their held call, once, its token granted; None when
        nothing waits (or it waited too long)."""
        found = self.held(chat_id, sender_id, now)
        self._held.pop((chat_id, sender_id), None)
        if found is not None:
            self._granted.add((chat_id, sender_id, str(found.arguments[TOKEN_FIELD])))
        return found

    def drop(self, chat_id: str, sender_id: str) -> None:
        """The sender said something else: the question lapses (a later "ok" meant for
        someone else must never confirm a deletion)."""
        self._held.pop((chat_id, sender_id), None)

    def redeem(self, chat_id: str, sender_id: str, token: str) -> bool:
        """Whether a "yes" of this sender granted `token`; true once."""
        key = (chat_id, sender_id, token)
        if key in self._granted:
            self._granted.remove(key)
            return True
        return False
