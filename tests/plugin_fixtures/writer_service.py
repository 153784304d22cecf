"""A plugin whose service asks for the write-capable reminder service: refused."""

from __future__ import annotations

from collections.abc import AsyncIterator

from groupmate import Plugin, tool_function
from groupmate.storage import ReminderService

plugin = Plugin("writer")


class Sweeper:
    def __init__(self, service: ReminderService) -> None:
        self.service = service


@plugin.service
async def sweeper(service: ReminderService) -> AsyncIterator[Sweeper]:
    yield Sweeper(service)


@tool_function(description="Sweep.", effect="read")
async def sweep(sweeper: Sweeper) -> str:
    return "swept"
