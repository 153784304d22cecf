"""Plugins: tools in a package of one's own, loaded when the config names them.

`Plugin` declares a plugin's settings and services (all optional), `PluginStore` is its
storage, `load_plugins` loads what the config names (each plugin on its own: one that
fails leaves the others and the bot running).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    from groupmate.function_calls.plugin_store import JsonValue, PluginStore, PluginStores
    from groupmate.function_calls.plugins.declare import Plugin, Service
    from groupmate.function_calls.plugins.found import PluginError, entry_points
    from groupmate.function_calls.plugins.loader import (
        LoadedPlugin,
        PluginSet,
        PluginStatus,
        available,
        load_plugins,
    )
    from groupmate.function_calls.plugins.spec import ENTRY_POINT_GROUP, BuiltinsConfig, PluginSpec

__all__ = [
    "ENTRY_POINT_GROUP",
    "BuiltinsConfig",
    "JsonValue",
    "LoadedPlugin",
    "Plugin",
    "PluginError",
    "PluginSet",
    "PluginSpec",
    "PluginStatus",
    "PluginStore",
    "PluginStores",
    "Service",
    "available",
    "entry_points",
    "load_plugins",
]

# Not for type checkers: they read the imports above, and a typo stays an error.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "groupmate.function_calls.plugin_store": ("JsonValue", "PluginStore", "PluginStores"),
            "groupmate.function_calls.plugins.declare": ("Plugin", "Service"),
            "groupmate.function_calls.plugins.found": ("PluginError", "entry_points"),
            "groupmate.function_calls.plugins.loader": (
                "LoadedPlugin",
                "PluginSet",
                "PluginStatus",
                "available",
                "load_plugins",
            ),
            "groupmate.function_calls.plugins.spec": (
                "ENTRY_POINT_GROUP",
                "BuiltinsConfig",
                "PluginSpec",
            ),
        },
    )
