"""The runtime: config, router, the Bot wiring and platform adapters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    from groupmate.bot.app import Bot, settle_heap
    from groupmate.bot.config import Config, ConfigError, load_config
    from groupmate.bot.messages import IncomingMessage, Reply

__all__ = ["Bot", "Config", "ConfigError", "IncomingMessage", "Reply", "load_config", "settle_heap"]

# Imported when first used, not with the package: `groupmate --help` imports bot.cli,
# hence this package, and the bot's modules take seconds to import. Not for type
# checkers: they read the imports above, and a typo stays an error.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "groupmate.bot.app": ("Bot", "settle_heap"),
            "groupmate.bot.config": ("Config", "ConfigError", "load_config"),
            "groupmate.bot.messages": ("IncomingMessage", "Reply"),
        },
    )
