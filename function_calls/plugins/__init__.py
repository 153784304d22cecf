"""Plugins: tools in a package of one's own, loaded when the config names them.

`Plugin` declares a plugin's settings and services (all optional), `PluginStore` is its
storage, `load_plugins` loads what the config names (each plugin on its own: one that
fails leaves the others and the bot running).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from storage.lazy import lazy_exports

if TYPE_CHECKING:
    from function_calls.plugin_store import JsonValue, PluginStore, PluginStores
    from function_calls.plugins.declare import Plugin, Service
    from function_calls.plugins.found import PluginError, entry_points
    from function_calls.plugins.loader import (
        LoadedPlugin,
        PluginSet,
        PluginStatus,
        available,
        load_plugins,
    )
    from function_calls.plugins.spec import ENTRY_POINT_GROUP, BuiltinsConfig, PluginSpec

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
            "function_calls.plugin_store": ("JsonValue", "PluginStore", "PluginStores"),
            "function_calls.plugins.declare": ("Plugin", "Service"),
            "function_calls.plugins.found": ("PluginError", "entry_points"),
            "function_calls.plugins.loader": (
                "LoadedPlugin",
                "PluginSet",
                "PluginStatus",
                "available",
                "load_plugins",
            ),
            "function_calls.plugins.spec": ("ENTRY_POINT_GROUP", "BuiltinsConfig", "PluginSpec"),
        },
    )
