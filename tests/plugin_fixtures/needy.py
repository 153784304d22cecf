"""A plugin whose service asks for something nothing provides."""

from __future__ import annotations

from collections.abc import AsyncIterator

from groupmate import Plugin, tool_function

plugin = Plugin("needy")


class Unprovided:
    pass


class Client:
    pass


@plugin.service
async def client(thing: Unprovided) -> AsyncIterator[Client]:
    yield Client()


@tool_function(description="Needs the client.", command="needy")
async def use_client(client: Client) -> str:
    return "never"
