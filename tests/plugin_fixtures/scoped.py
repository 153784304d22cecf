"""A plugin whose tools say where they are offered (one per scope), for a config's
`scope:` to narrow: each runs by a command, so a test needs no model."""

from __future__ import annotations

from groupmate import FunctionResult, tool_function


@tool_function(description="Write in your diary.", command="diary", scope="private")
async def diary() -> FunctionResult:
    return FunctionResult.direct("diary written")


@tool_function(description="Start a poll.", command="poll")
async def poll() -> FunctionResult:
    return FunctionResult.direct("poll started")


@tool_function(description="Wave to the group.", command="wave", scope="group")
async def wave() -> FunctionResult:
    return FunctionResult.direct("waved")
