"""One of two plugins with a service of the same type: each handler gets its own."""

from __future__ import annotations

from groupmate import Plugin, tool_function
from tests.plugin_fixtures.greeter import Greeter, GreeterSettings, greeter

plugin = Plugin("twin_a", settings=GreeterSettings)
plugin.service(greeter)


@tool_function(description="Greets.", command="hia")
async def greet_a(greeter: Greeter) -> str:
    return greeter.words
