"""`PluginStore`: a plugin's own values in the bot's database, for one chat or for all.

A handler asks for it by type (`store: PluginStore`) and gets its own plugin's store for
the chat the call is in; `store.global_` is the plugin's store shared by every chat.
Values are JSON (what `json.dumps` takes: dicts, lists, strings, numbers, booleans,
None), at most 64 KiB each, or typed (a pydantic model, a dataclass: stored as their
JSON, validated when read); keys are 1 to 200 characters. Each call is one transaction
through the database's write queue; `update` reads, changes and writes a value
atomically, so two concurrent updates never lose one another. Deleting a chat's data
deletes every plugin's values for that chat. docs/developers/plugin-store.md has examples.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Awaitable, Callable, Hashable
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar, cast, overload

from pydantic import BaseModel, TypeAdapter, ValidationError

from groupmate.storage.errors import PluginValueError
from groupmate.storage.vocabulary import GLOBAL

if TYPE_CHECKING:
    from groupmate.storage.plugin_data import PluginData

# What a value may be (json.loads gives back one of these).
JsonValue: TypeAlias = dict[str, "JsonValue"] | list["JsonValue"] | str | int | float | bool | None
T = TypeVar("T")
_UNSET: Any = object()  # no default given (None is a default like any other)


@functools.cache
def _adapter(kind: Hashable) -> TypeAdapter[Any]:
    # Building an adapter compiles the type's schema: once per type, not per read.
    return TypeAdapter(cast(type[Any], kind))


def _typed(kind: type[T], value: Any, where: str) -> T:
    """A stored value read as `kind`; PluginValueError when it does not fit (a value
    written by an older version of the plugin, say), never a silent None."""
    try:
        adapter = _adapter(cast(Hashable, kind))
        return cast(T, adapter.validate_python(value))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'the value'}: {error['msg']}"
            for error in exc.errors(include_url=False, include_input=False)
        )
        raise PluginValueError(
            f"{where} does not fit {getattr(kind, '__name__', kind)}: {problems}"
        ) from None


def _plain(value: Any) -> Any:
    """A model or dataclass as the JSON it is stored as; anything else as it is (and
    checked as JSON when written)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _adapter(type(value)).dump_python(value, mode="json")
    return value


def _model_and_default(model_or_default: Any, default: Any) -> tuple[type[Any] | None, Any]:
    """(model, default) from `get`'s arguments: a class is the model (no JSON value is
    one), anything else the untyped default."""
    if isinstance(model_or_default, type):
        return model_or_default, None if default is _UNSET else default
    if default is not _UNSET:
        raise TypeError("give a default either second or as default=, not both")
    return None, None if model_or_default is _UNSET else model_or_default


class PluginStore:
    """One plugin's values in one chat (or its global ones); see the module's docstring.

    Values are plain JSON, or typed: give a class (a pydantic model, a dataclass, `int`...)
    and `get` returns an instance of it, `update` hands one to its function, and `set`
    takes one::

        poll = await store.get("poll", Poll)            # Poll | None
        await store.set("poll", Poll(question="Lunch?"))
        poll = await store.update("poll", add_vote, Poll)
    """

    __slots__ = ("_chat_id", "_data", "_plugin")

    def __init__(self, data: PluginData, plugin: str, chat_id: str | None) -> None:
        self._data = data
        self._plugin = plugin
        self._chat_id = GLOBAL if chat_id is None else chat_id

    @property
    def plugin(self) -> str:
        """The plugin whose values these are."""
        return self._plugin

    @property
    def chat_id(self) -> str | None:
        """The chat these values belong to; None for the global store."""
        return None if self._chat_id == GLOBAL else self._chat_id

    @property
    def global_(self) -> PluginStore:
        """The plugin's values shared by every chat."""
        return PluginStore(self._data, self._plugin, None)

    def _where(self, key: str) -> str:
        chat = "its global values" if self.chat_id is None else f"chat {self.chat_id}"
        return f"plugin {self._plugin}: the value stored under {key!r} ({chat})"

    @overload
    async def get(self, key: str, default: JsonValue = None, /) -> Any: ...
    @overload
    async def get(self, key: str, /, *, default: JsonValue) -> Any: ...
    @overload
    async def get(self, key: str, model: type[T], /) -> T | None: ...
    @overload
    async def get(self, key: str, model: type[T], /, default: T) -> T: ...
    async def get(self, key: str, model_or_default: Any = _UNSET, /, default: Any = _UNSET) -> Any:
        """The value stored under `key`, or the default (None unless given).

        With a class (`get("poll", Poll)`), the value as an instance of it, validated:
        a stored value that does not fit raises PluginValueError, saying why. Untyped, a
        stored JSON null is a value (returned, not the default); typed, it is no value
        (the default), as an `update` whose function returned None leaves it.
        """
        model, fallback = _model_and_default(model_or_default, default)
        found, value = await self._data.get(self._plugin, self._chat_id, key)
        if not found or (model is not None and value is None):
            return fallback
        return value if model is None else _typed(model, value, self._where(key))

    async def set(self, key: str, value: Any) -> None:
        """Store `value` under `key`: JSON, or a pydantic model or a dataclass (stored
        as its JSON). Raises PluginValueError for a value that is not JSON or is larger
        than 64 KiB as JSON."""
        await self._data.set(self._plugin, self._chat_id, key, _plain(value))

    async def delete(self, key: str) -> bool:
        """Remove `key`; whether it was there."""
        return await self._data.delete(self._plugin, self._chat_id, key)

    async def keys(self, prefix: str = "") -> list[str]:
        """The keys that start with `prefix`, sorted (the first 1,000)."""
        return await self._data.keys(self._plugin, self._chat_id, prefix)

    @overload
    async def update(
        self,
        key: str,
        change: Callable[[Any], Any] | Callable[[Any], Awaitable[Any]],
        *,
        default: JsonValue = None,
    ) -> Any: ...
    @overload
    async def update(
        self,
        key: str,
        change: Callable[[T | None], T] | Callable[[T | None], Awaitable[T]],
        model: type[T],
    ) -> T: ...
    @overload
    async def update(
        self,
        key: str,
        change: Callable[[T | None], T | None] | Callable[[T | None], Awaitable[T | None]],
        model: type[T],
    ) -> T | None: ...
    @overload
    async def update(
        self,
        key: str,
        change: Callable[[T], T] | Callable[[T], Awaitable[T]],
        model: type[T],
        *,
        default: T,
    ) -> T: ...
    async def update(
        self,
        key: str,
        change: Callable[[Any], Any],
        model: type[Any] | None = None,
        *,
        default: Any = None,
    ) -> Any:
        """Replace the value under `key` with `change(old)`, atomically; returns the new
        value.

        - `change` gets the stored value (an instance of `model`, when given), or
          `default` when there is none (None unless given); with a `model`, a stored
          null counts as none. It may return None (with a `model` too): null is stored.
        - It may be a plain function or `async def`. A plain one runs under the row's
          lock on a database thread: keep it to computing. An async one runs on the
          event loop; if another writer changed the value meanwhile, it runs again on
          the new value, so it may run more than once either way: no side effects.
        - Concurrent updates, in this process or another on the same database
          (SQLite or PostgreSQL), never lose one another.
        - If `change` raises, nothing is written: the value stays as it was and the
          exception reaches the caller. A new value that is not JSON (or not a
          `model`) raises PluginValueError, and nothing is written either.
        """
        where = self._where(key)

        def read(old: Any) -> Any:
            if model is None:
                return old
            # Typed, a stored null is no value: the function gets the default.
            return default if old is None else _typed(model, old, where)

        if inspect.iscoroutinefunction(change):

            async def changed_async(old: Any) -> Any:
                return _plain(await change(read(old)))

            new = await self._data.update_async(
                self._plugin, self._chat_id, key, changed_async, _plain(default)
            )
        else:

            def changed(old: Any) -> Any:
                return _plain(change(read(old)))

            new = await self._data.update(
                self._plugin, self._chat_id, key, changed, _plain(default)
            )
        return new if model is None or new is None else _typed(model, new, where)


class PluginStores:
    """Opens plugins' stores on one database; the bot's, never a handler's (a handler
    gets its own plugin's store in the chat it runs for: see function_calls.deps)."""

    def __init__(self, data: PluginData) -> None:
        self._data = data

    def open(self, plugin: str, chat_id: str | None) -> PluginStore:
        if not plugin or chat_id == GLOBAL:  # "" is the global values' chat id
            raise ValueError("a plugin's store needs its plugin and a chat (None: global)")
        return PluginStore(self._data, plugin, chat_id)
