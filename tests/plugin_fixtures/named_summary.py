"""A plugin that takes a built-in family's name (and so its store's namespace)."""

from __future__ import annotations

from groupmate import Plugin, tool_function

plugin = Plugin("summary")


@tool_function(description="A second summary.", command="summary2")
async def summary_two() -> str:
    return "never"
