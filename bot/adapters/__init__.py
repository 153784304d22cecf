"""Chat platform adapters. Each platform is one module with one class that keeps the
contract in `bot.adapters.base` and is built as `Class(settings, bot_name=...)` from its
config section (`<platform>_settings.py`); `configured` builds those whose section is
present."""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from groupmate.bot.adapters.base import Adapter
    from groupmate.bot.config import Config

# Section name -> "module:Class". Imported only when configured: a bot without Matrix
# never loads its library.
PLATFORMS = {
    "telegram": "groupmate.bot.adapters.telegram:TelegramAdapter",
    "matrix": "groupmate.bot.adapters.matrix:MatrixAdapter",
    "onebot": "groupmate.bot.adapters.onebot:OneBotAdapter",
    "slack": "groupmate.bot.adapters.slack:SlackAdapter",
    "discord": "groupmate.bot.adapters.discord:DiscordAdapter",
    "lark": "groupmate.bot.adapters.lark:LarkAdapter",
    "dingtalk": "groupmate.bot.adapters.dingtalk:DingTalkAdapter",
}

# Section name -> the top-level module of the SDK its extra installs (the extra is named as
# the section, pyproject's optional-dependencies). Found without importing it: `check`
# stays quick, and a missing SDK is named with its pip line rather than as a traceback.
SDKS = {
    "telegram": "telegram",
    "matrix": "nio",
    "onebot": "websockets",
    "slack": "slack_bolt",
    "discord": "discord",
    "lark": "lark_oapi",
    "dingtalk": "dingtalk_stream",
}


def missing_sdks(config: Config) -> list[str]:
    """The configured platforms whose SDK is not installed, in PLATFORMS' order."""
    return [
        name
        for name in PLATFORMS
        if getattr(config.adapters, name) is not None
        and importlib.util.find_spec(SDKS[name]) is None
    ]


def install_line(names: list[str]) -> str:
    """What a configured platform without its SDK is told: the platforms and the exact
    pip line that installs their extras."""
    sections = ", ".join(f"adapters.{name}" for name in names)
    return f'{sections}: not installed; pip install "groupmate[{",".join(names)}]"'


# Each platform's chat ids begin with its prefix, defined here once: reminders are routed
# by it, and a process claims only the chats of the platforms it delivers to. Ids under
# none of them are the webhook's own (`/v1/messages` callers choose them).
CHAT_PREFIXES = {
    "console": "console:",
    "web": "web:",
    "telegram": "tg:",
    "matrix": "mx:",
    "onebot": "qq:",
    "slack": "sl:",
    "discord": "dc:",
    "lark": "lk:",
    "dingtalk": "dt:",
}


def platform_of(chat_id: str) -> str:
    """The platform a chat is on, by its id: a key of CHAT_PREFIXES, or "webhook"."""
    for name, prefix in CHAT_PREFIXES.items():
        if chat_id.startswith(prefix):
            return name
    return "webhook"


def configured(config: Config) -> list[Adapter]:
    """The adapters whose sections are present in the config, in a fixed order."""
    # Here, not at the top: bot.config reads each adapter's settings module, which runs
    # this package first.
    from groupmate.bot.config import ConfigError

    missing = missing_sdks(config)
    if missing:
        raise ConfigError(install_line(missing))
    adapters: list[Adapter] = []
    for name, target in PLATFORMS.items():
        section = getattr(config.adapters, name)
        if section is None:
            continue
        module_name, _, class_name = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            raise ConfigError(f"adapters.{name}: this version has no {name} adapter") from None
        factory = getattr(module, class_name)
        adapters.append(cast("Adapter", factory(section, bot_name=config.bot.name)))
    return adapters
