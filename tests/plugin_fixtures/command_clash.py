"""A plugin whose commands take names already in use: /summary (a built-in command)
and /vote (the poll plugin's, when that comes first in the config)."""

from __future__ import annotations

from pydantic import BaseModel

from groupmate import Plugin, tool_function

plugin = Plugin("ballot")


class BallotArgs(BaseModel):
    option: str


@tool_function(description="A summary of its own.", command="summary")
async def my_summary() -> str:
    return "the plugin's summary"


@tool_function(description="A ballot of its own.", command="vote")
async def ballot(args: BallotArgs) -> str:
    return f"ballot: {args.option}"


@tool_function(description="A command no one else has.", command="ballots")
async def ballots() -> str:
    return "no ballots yet"
