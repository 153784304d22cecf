"""A stand-in for the bot behind an adapter's press handling: it answers each press with
the next scripted outcome (after `delay` seconds) and keeps the presses it was given, so
an adapter's rendering of an outcome (the toast, the message edited in place) and its
deadline are tested apart from what the router decides."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable

from groupmate.bot.messages import IncomingMessage, IncomingReaction, Reply
from groupmate.bot.presses import Press, PressOutcome
from groupmate.bot.router import Deliver
from groupmate.storage import Database


class ScriptedHost:
    """A `BotHost` whose `press` answers from a script."""

    def __init__(self, outcomes: Iterable[PressOutcome], *, delay: float = 0.0) -> None:
        self.outcomes = deque(outcomes)
        self.presses: list[Press] = []
        self.delay = delay

    @property
    def database(self) -> Database | None:
        return None

    async def handle(self, message: IncomingMessage, deliver: Deliver | None = None) -> list[Reply]:
        return []

    async def react(self, reaction: IncomingReaction) -> None:
        return None

    async def press(self, press: Press) -> PressOutcome:
        self.presses.append(press)
        await asyncio.sleep(self.delay)
        return self.outcomes.popleft()

    async def posted(self, reply: Reply, message_id: str) -> None:
        return None

    def may_address(self, text: str) -> bool:
        return False
