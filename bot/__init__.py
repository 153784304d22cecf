"""The runtime: config, router, the Bot wiring and platform adapters."""

from bot.app import Bot, settle_heap
from bot.config import Config, ConfigError, load_config
from bot.messages import IncomingMessage, Reply

__all__ = ["Bot", "Config", "ConfigError", "IncomingMessage", "Reply", "load_config", "settle_heap"]
