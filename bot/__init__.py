"""The runtime: config, router, the Bot wiring and platform adapters."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.app import Bot, settle_heap
    from bot.config import Config, ConfigError, load_config
    from bot.messages import IncomingMessage, Reply

__all__ = ["Bot", "Config", "ConfigError", "IncomingMessage", "Reply", "load_config", "settle_heap"]

# Imported when first used, not with the package: `groupmate --help` imports bot.cli,
# hence this package, and the bot's modules take seconds to import.
_HOMES = {
    "Bot": "bot.app",
    "settle_heap": "bot.app",
    "Config": "bot.config",
    "ConfigError": "bot.config",
    "load_config": "bot.config",
    "IncomingMessage": "bot.messages",
    "Reply": "bot.messages",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'bot' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
