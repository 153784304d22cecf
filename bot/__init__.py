"""The runtime: config, router, the Bot wiring and platform adapters."""

from bot.app import Bot
from bot.config import Config, ConfigError, load_config
from bot.messages import IncomingMessage, Reply

__all__ = ["Bot", "Config", "ConfigError", "IncomingMessage", "Reply", "load_config"]
