"""`PluginStore`: a plugin's own values in the bot's database, for one chat or for all.

A handler asks for it by type (`store: PluginStore`) and gets its own plugin's store for
the chat the call is in; `store.global_` is the plugin's store shared by every chat.
Values are JSON (what `json.dumps` takes: dicts, lists, strings, numbers, booleans,
None), at most 64 KiB each; keys are 1 to 200 characters. Each call is one transaction
through the database's write queue; `update` reads, changes and writes a value in one,
so two concurrent updates never lose one another. Deleting a chat's data deletes every
plugin's values for that chat.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from groupmate.storage.vocabulary import GLOBAL

if TYPE_CHECKING:
    from groupmate.storage.plugin_data import PluginData

# What a value may be (json.loads gives back one of these).
JsonValue: TypeAlias = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None


class PluginStore:
    """One plugin's values in one chat (or its global ones); see the module's docstring."""

    __slots__ = ("_chat_id", "_data", "_plugin")

    def __init__(self, data: PluginData, plugin: str, chat_id: str | None) -> None:
        self._data = data
        self._plugin = plugin
        self._chat_id = GLOBAL if chat_id is None else chat_id

    @property
    def plugin(self) -> str:
        return self._plugin

    @property
    def chat_id(self) -> str | None:
        """The chat these values belong to; None for the global store."""
        return None if self._chat_id == GLOBAL else self._chat_id

    @property
    def global_(self) -> PluginStore:
        """The plugin's values shared by every chat."""
        return PluginStore(self._data, self._plugin, None)

    async def get(self, key: str, default: Any = None) -> Any:
        """The value stored under `key`, or `default`."""
        found, value = await self._data.get(self._plugin, self._chat_id, key)
        return value if found else default

    async def set(self, key: str, value: Any) -> None:
        """Store `value` (JSON) under `key`; raises PluginValueError for one that isn't."""
        await self._data.set(self._plugin, self._chat_id, key, value)

    async def delete(self, key: str) -> bool:
        """Remove `key`; whether it was there."""
        return await self._data.delete(self._plugin, self._chat_id, key)

    async def keys(self, prefix: str = "") -> list[str]:
        """The keys that start with `prefix`, sorted (the first 1,000)."""
        return await self._data.keys(self._plugin, self._chat_id, prefix)

    async def update(self, key: str, change: Callable[[Any], Any], default: Any = None) -> Any:
        """Replace the value under `key` with `change(old)` (`default` when there is
        none) in one transaction; returns the new value. `change` must only compute:
        it may run again if the write is retried."""
        return await self._data.update(self._plugin, self._chat_id, key, change, default)


class PluginStores:
    """Opens plugins' stores on one database; the bot's, never a handler's (a handler
    gets its own plugin's store in the chat it runs for: see function_calls.deps)."""

    def __init__(self, data: PluginData) -> None:
        self._data = data

    def open(self, plugin: str, chat_id: str | None) -> PluginStore:
        if not plugin or chat_id == GLOBAL:  # "" is the global values' chat id
            raise ValueError("a plugin's store needs its plugin and a chat (None: global)")
        return PluginStore(self._data, plugin, chat_id)
