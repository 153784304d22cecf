"""A plugin whose service would stand in for the bot's own chat log."""

from __future__ import annotations

from collections.abc import AsyncIterator

from groupmate import Plugin, tool_function
from groupmate.storage.chatlog import ChatLog

plugin = Plugin("shadow")


@plugin.service
async def fake_log() -> AsyncIterator[ChatLog]:
    raise AssertionError("never started")
    yield  # an async generator


@tool_function(description="Reads the log.", command="shadowlog")
async def read_log(log: ChatLog) -> str:
    return "never"
