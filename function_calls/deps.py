"""Typed dependencies: what a handler needs besides its arguments, asked for by type.

A handler names what it needs in its signature, as FastAPI's path functions do:

    async def weather(ctx: MessageContext, args: WeatherArgs, client: WeatherClient) -> str

The signature is read once, when the tool is built (`Dependency` per parameter); each
call then takes the values from the context's `Deps`, a map from a type to the one
object of that type this bot has (the reminder service, a plugin's HTTP client, a
plugin's settings). Types, never names: mypy checks every use of `client` above, and a
type nothing provides is refused when the plugin loads, not on the first call. A
parameter typed `X | None` is optional: the handler gets None where nothing provides X;
without it the tool is not offered at all there (a search tool on a bot without search).
"""

from __future__ import annotations

import types
from collections.abc import Awaitable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, Union, get_args, get_origin

T = TypeVar("T")


class Progress(Protocol):
    """Sends a short "working on it" line to the chat while a slow tool runs."""

    def __call__(self, text: str) -> Awaitable[None]: ...


class StoreOpener(Protocol):
    """Opens a plugin's store for one chat (None: the plugin's global store); the bot's
    `PluginStores` is one. A handler asks for `PluginStore` and gets its own plugin's."""

    def open(self, plugin: str, chat_id: str | None) -> object: ...


@dataclass(frozen=True, slots=True)
class Dependency:
    """One injected parameter of a handler: its name, the type it asks for, and whether
    it may be None."""

    param: str
    kind: type[Any]
    optional: bool = False


def optional_of(annotation: Any) -> tuple[Any, bool]:
    """`X | None` → (X, True); anything else → (annotation, False)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1 and len(get_args(annotation)) == 2:
            return members[0], True
    return annotation, False


class Deps:
    """The objects of one bot, one per type; immutable (`with_` makes a copy)."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[type[Any], object] | None = None) -> None:
        self._values: dict[type[Any], object] = {
            kind: value for kind, value in (values or {}).items() if value is not None
        }

    def get(self, kind: type[T]) -> T | None:
        """The object of type `kind`, or None where this bot has none."""
        found = self._values.get(kind)
        return found  # type: ignore[return-value]  # stored under its own type

    def has(self, kind: type[Any]) -> bool:
        return kind in self._values

    def with_(self, kind: type[T], value: T | None) -> Deps:
        """A copy with `value` as the `kind` (None removes it)."""
        values = dict(self._values)
        if value is None:
            values.pop(kind, None)
        else:
            values[kind] = value
        return Deps(values)

    def merged(self, values: Mapping[type[Any], object]) -> Deps:
        return Deps({**self._values, **values})

    def kinds(self) -> Iterator[type[Any]]:
        return iter(self._values)

    def resolve(self, dependency: Dependency, plugin: str, chat_id: str) -> object:
        """The value of one handler parameter for a call in `chat_id`. A plugin's store
        is its own and the chat's: the one type that depends on who asks."""
        from function_calls.plugins.store import PluginStore  # the store wraps storage

        if dependency.kind is PluginStore:
            opener = self.get(StoreOpener)
            return None if opener is None else opener.open(plugin, chat_id)
        return self._values.get(dependency.kind)

    def __repr__(self) -> str:
        return f"Deps({', '.join(kind.__name__ for kind in self._values)})"
