"""The built-in tool families, each loaded as a plugin is (see function_calls.plugins),
and the order the model is shown their tools."""

from __future__ import annotations

from functools import cache

from groupmate.function_calls.plugins import BuiltinsConfig, PluginSet, PluginSpec, load_plugins
from groupmate.function_calls.registry import Tool, ToolRegistry
from groupmate.function_calls.toolsets import CombinedToolset

# Each family's module; "core" (/help, /tools) is always on.
BUILTIN_MODULES: dict[str, str] = {
    "core": "groupmate.function_calls.handlers.core",
    "reminders": "groupmate.function_calls.handlers.reminder_family",
    "timezone": "groupmate.function_calls.handlers.timezone",
    "budget": "groupmate.function_calls.handlers.budget",
    "summary": "groupmate.function_calls.handlers.summary_family",
    "links": "groupmate.function_calls.handlers.read_url",
    "search": "groupmate.function_calls.handlers.web_search",
    "memory": "groupmate.function_calls.handlers.chat_memory",
}

# The order the model is shown the built-in tools (the eval measured this one): setting
# a reminder first, the tools that put one off right after reminder_update.
BUILTIN_ORDER: tuple[str, ...] = (
    "reminder_set", "reminder_list", "reminder_delete", "token_budget", "chat_tools",
    "help", "summary", "chat_search", "chat_catchup", "read_url", "reminder_update",
    "reminder_snooze", "reminder_pause", "reminder_resume", "reminder_history", "reminder_rules",
    "set_timezone", "web_search", "delivery_retry", "chat_data_delete", "followup_settings",
    "chat_find", "chat_forget", "digest_settings", "reminder_done", "reminder_me_too",
    "calendar_feed",
)  # fmt: skip
_POSITION = {name: index for index, name in enumerate(BUILTIN_ORDER)}


def _position(tool: Tool) -> int:
    return _POSITION.get(tool.name, len(_POSITION))


def in_model_order(plugins: PluginSet) -> CombinedToolset:
    """The tools of `plugins` as one set: the built-ins first, in `BUILTIN_ORDER` (the
    one place it is applied), then each other plugin's own set."""
    return plugins.toolset(_position)


def builtin_plugins(switches: BuiltinsConfig | None = None) -> PluginSet:
    """The built-in families `switches` leave on ("core" always), loaded as plugins
    are; each family is loaded once per process (its tools are immutable)."""
    on = switches or BuiltinsConfig()
    families = [f for f in BUILTIN_MODULES if f == "core" or getattr(on, f)]
    return PluginSet.combined(*(_family(family) for family in families))


@cache
def _family(family: str) -> PluginSet:
    loaded = load_plugins([PluginSpec(module=BUILTIN_MODULES[family])], builtin=True)
    if loaded.failed:  # groupmate's own code: a bug, not a configuration
        raise RuntimeError(f"built-in tools failed to load: {loaded.failed}")
    return loaded


def builtin_tools() -> ToolRegistry:
    """Every built-in tool, in the model's order, in a registry of the caller's own."""
    return ToolRegistry(in_model_order(builtin_plugins()))
