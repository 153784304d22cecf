"""The test kit for groupmate plugins: the real bot, no chat platform, no network.

    from datetime import timedelta

    async def test_weather(groupmate_bot):
        bot = await groupmate_bot(plugins=["groupmate_weather"], config={...})
        bot.model.calls("weather", {"city": "Berlin"}).answers("Sunny in Berlin.")
        assert await bot.say("what's the weather in Berlin?") == ["Sunny in Berlin."]
        assert await bot.store("weather", chat="group-1").get("last_city") == "Berlin"

Installing groupmate registers the pytest fixtures (`groupmate_bot`, `groupmate_model`,
`groupmate_model_server`, see `groupmate.testing.pytest_plugin`); the async ones need
pytest-asyncio (`pip install pytest pytest-asyncio`). Without pytest, use
`async with TestBot(...) as bot:`.

Names are imported when first used, so that loading the pytest plugin in every test
run of the environment does not import the whole bot.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from groupmate.testing.bot import BotFactory, PluginSpec, TestBot
    from groupmate.testing.clock import DEFAULT_START, FakeClock
    from groupmate.testing.model import UNSCRIPTED_REPLY, ScriptedModel
    from groupmate.testing.stub_llm import StubLLM

__all__ = [
    "DEFAULT_START",
    "UNSCRIPTED_REPLY",
    "BotFactory",
    "FakeClock",
    "PluginSpec",
    "ScriptedModel",
    "StubLLM",
    "TestBot",
]

_HOMES = {
    "BotFactory": "bot",
    "DEFAULT_START": "clock",
    "FakeClock": "clock",
    "PluginSpec": "bot",
    "ScriptedModel": "model",
    "StubLLM": "stub_llm",
    "TestBot": "bot",
    "UNSCRIPTED_REPLY": "model",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
