"""Plugins: tools in a package of one's own, loaded when the config names them.

`Plugin` declares a plugin's settings and services (all optional), `PluginStore` is its
storage, `load_plugins` loads what the config names (each plugin on its own: one that
fails leaves the others and the bot running).
"""

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
