"""A plugin whose service fails to start."""

from __future__ import annotations

from collections.abc import AsyncIterator

from groupmate import Plugin, tool_function

plugin = Plugin("badservice")


class Client:
    pass


@plugin.service
async def client() -> AsyncIterator[Client]:
    raise ConnectionError("https://weather.example/?key=SECRET123 is down")
    yield Client()  # an async generator: what it yields is the service


@tool_function(description="Needs the client.", command="needsclient")
async def needs_client(client: Client) -> str:
    return "never"
