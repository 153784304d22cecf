"""groupmate's public API: the one import path for plugins and for programs that embed
the bot.

    from groupmate import FunctionResult, MessageContext, Plugin, PluginStore, tool_function
    from groupmate import Bot, FunctionCallLLM, IncomingMessage, ToolRegistry

The repository's folders `bot/`, `function_calls/` and `storage/` are installed as
`groupmate.bot`, `groupmate.function_calls` and `groupmate.storage` (the symbolic links
in this folder; the wheel holds copies), so nothing but `groupmate` lands in
site-packages. `groupmate.testing` is the test kit (a pytest plugin: see
docs/developers/test-kit.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate import bot, function_calls, storage
from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    # The names of `groupmate.bot`, `groupmate.function_calls` and the storage errors are
    # their modules' own `__all__`; the rest are the exception tree (and the plugin kit)
    # from the modules that raise it.
    from groupmate.bot import *  # noqa: F403
    from groupmate.bot.adapters.dingtalk_api import CredentialsRefused as CredentialsRefused
    from groupmate.bot.adapters.dingtalk_api import DingTalkError as DingTalkError
    from groupmate.bot.adapters.lark_api import LarkError as LarkError
    from groupmate.bot.adapters.matrix_client import MatrixError as MatrixError
    from groupmate.bot.adapters.matrix_client import Unreachable as Unreachable
    from groupmate.bot.adapters.telegram_api import ApiError as ApiError
    from groupmate.bot.command_fields import CommandWordsError as CommandWordsError
    from groupmate.bot.scaffold import ScaffoldError as ScaffoldError
    from groupmate.bot.tool_calls import CommandError as CommandError
    from groupmate.function_calls import *  # noqa: F403
    from groupmate.function_calls.context_window import ContextOverflowError as ContextOverflowError
    from groupmate.function_calls.grammar.spec import GrammarError as GrammarError
    from groupmate.function_calls.links.fetch import LinkError as LinkError
    from groupmate.function_calls.links.fetch import LinkRefused as LinkRefused
    from groupmate.function_calls.links.fetch import LinkUnreadable as LinkUnreadable
    from groupmate.function_calls.plugin_calls import PluginTools as PluginTools
    from groupmate.function_calls.plugin_store import JsonValue as JsonValue
    from groupmate.function_calls.plugin_store import PluginStore as PluginStore
    from groupmate.function_calls.plugins.declare import Plugin as Plugin
    from groupmate.function_calls.plugins.found import PluginError as PluginError
    from groupmate.function_calls.search._types import SearchAuthError as SearchAuthError
    from groupmate.function_calls.search._types import SearchError as SearchError
    from groupmate.function_calls.search._types import SearchLimitError as SearchLimitError
    from groupmate.function_calls.search._types import SearchRateLimitError as SearchRateLimitError
    from groupmate.function_calls.search._types import SearchTimeoutError as SearchTimeoutError
    from groupmate.function_calls.search._types import (
        SearchUnavailableError as SearchUnavailableError,
    )
    from groupmate.function_calls.search._types import (
        SearchUnreadableError as SearchUnreadableError,
    )
    from groupmate.storage.errors import *  # noqa: F403
    from groupmate.storage.exceptions import GroupmateError as GroupmateError
    from groupmate.storage.outgoing import SendError as SendError

# Where each public name lives: the one list of them. `__all__` and the lazy imports
# below are derived from it, and the subpackages' own names come from their `__all__`.
_HOMES: dict[str, tuple[str, ...]] = {
    "groupmate.bot": tuple(bot.__all__),
    "groupmate.function_calls": tuple(function_calls.__all__),
    "groupmate.function_calls.plugin_calls": ("PluginTools",),
    "groupmate.function_calls.plugin_store": ("JsonValue", "PluginStore"),
    "groupmate.function_calls.plugins.declare": ("Plugin",),
    "groupmate.storage.exceptions": ("GroupmateError",),
    "groupmate.storage.errors": tuple(storage.errors.__all__),
    "groupmate.storage.outgoing": ("SendError",),
    "groupmate.bot.adapters.dingtalk_api": ("CredentialsRefused", "DingTalkError"),
    "groupmate.bot.adapters.lark_api": ("LarkError",),
    "groupmate.bot.adapters.matrix_client": ("MatrixError", "Unreachable"),
    "groupmate.bot.adapters.telegram_api": ("ApiError",),
    "groupmate.bot.scaffold": ("ScaffoldError",),
    "groupmate.bot.tool_calls": ("CommandError",),
    "groupmate.bot.command_fields": ("CommandWordsError",),
    "groupmate.function_calls.context_window": ("ContextOverflowError",),
    "groupmate.function_calls.grammar.spec": ("GrammarError",),
    "groupmate.function_calls.links.fetch": ("LinkError", "LinkRefused", "LinkUnreadable"),
    "groupmate.function_calls.plugins.found": ("PluginError",),
    "groupmate.function_calls.search._types": (
        "SearchAuthError",
        "SearchError",
        "SearchLimitError",
        "SearchRateLimitError",
        "SearchTimeoutError",
        "SearchUnavailableError",
        "SearchUnreadableError",
    ),
}

__all__ = sorted(name for names in _HOMES.values() for name in names)

# Imported when first used (PEP 562), not with the package: every `groupmate.*` import
# runs this file first, and `groupmate --help` must not import the model client.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(__name__, _HOMES)
