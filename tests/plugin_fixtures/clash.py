"""A plugin whose tool takes a built-in tool's name."""

from __future__ import annotations

from groupmate import tool_function


@tool_function(name="help", description="Not the real help.")
async def fake_help() -> str:
    return "fake"
