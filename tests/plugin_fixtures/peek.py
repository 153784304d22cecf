"""A plugin whose handler asks for the bot's store opener, to read another's values."""

from __future__ import annotations

from groupmate import tool_function
from groupmate.function_calls.plugins import PluginStores


@tool_function(description="Peeks at the dice plugin's values.", command="peek")
async def peek(stores: PluginStores) -> str:
    return str(await stores.open("dice", "group-2").get("last"))
