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
from collections.abc import Awaitable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, Union, get_args, get_origin

from groupmate.function_calls.plugin_store import PluginStore, PluginStores

T = TypeVar("T")


class Progress(Protocol):
    """Sends a short "working on it" line to the chat while a slow tool runs."""

    def __call__(self, text: str) -> Awaitable[None]: ...


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
    """The objects of one bot, one per type, and each plugin's own (its settings and
    services, which only its handlers see: two plugins may each have an
    `httpx.AsyncClient`); immutable (`with_` and `scoped` make copies)."""

    __slots__ = ("_scoped", "_stores", "_values", "_withheld")

    def __init__(
        self,
        values: Mapping[type[Any], object] | None = None,
        *,
        stores: PluginStores | None = None,
        scoped: Mapping[str, Mapping[type[Any], object]] | None = None,
        withheld: frozenset[type[Any]] = frozenset(),
    ) -> None:
        self._values: dict[type[Any], object] = {
            kind: value for kind, value in (values or {}).items() if value is not None
        }
        self._stores = stores
        self._scoped: dict[str, Mapping[type[Any], object]] = dict(scoped or {})
        self._withheld = withheld

    def get(self, kind: type[T]) -> T | None:
        """The bot's object of type `kind`, or None where this bot has none (or it is
        withheld here)."""
        if kind in self._withheld:
            return None
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
        return Deps(values, stores=self._stores, scoped=self._scoped, withheld=self._withheld)

    def withholding(self, kinds: Iterable[type[Any]]) -> Deps:
        """A copy that hands out no object of `kinds` (the bot's, or a plugin's own),
        though it still says the bot has them: a listing of tools made with it is the
        sender's, while whoever holds it can't get at those objects."""
        return Deps(
            self._values,
            stores=self._stores,
            scoped=self._scoped,
            withheld=self._withheld | frozenset(kinds),
        )

    def with_stores(self, stores: PluginStores) -> Deps:
        """A copy whose plugins' handlers get their `PluginStore` from `stores`."""
        return Deps(self._values, stores=stores, scoped=self._scoped, withheld=self._withheld)

    def scoped(self, plugin: str, values: Mapping[type[Any], object]) -> Deps:
        """A copy in which `plugin`'s handlers also get `values` (its settings and
        services), ahead of the bot's own."""
        scoped = {**self._scoped, plugin: values}
        return Deps(self._values, stores=self._stores, scoped=scoped, withheld=self._withheld)

    def kinds(self) -> Iterator[type[Any]]:
        return iter(self._values)

    def provides(self, dependency: Dependency, plugin: str) -> bool:
        """Whether a handler of `plugin` would get a value for `dependency`."""
        kind = dependency.kind
        if kind is PluginStore:
            return self._stores is not None and bool(plugin)
        return kind in self._scoped.get(plugin, ()) or kind in self._values

    def resolve(self, dependency: Dependency, plugin: str, chat_id: str) -> object:
        """The value of one handler parameter for a call in `chat_id`: the plugin's own
        object of that type, else the bot's. A plugin's store is its own and the chat's,
        never another's (the plugin and the chat come from the tool and the context)."""
        kind = dependency.kind
        if kind in self._withheld:
            return None
        if kind is PluginStore:
            if self._stores is None or not plugin:
                return None
            return self._stores.open(plugin, chat_id)
        own = self._scoped.get(plugin)
        if own is not None and kind in own:
            return own[kind]
        return self._values.get(kind)

    def __repr__(self) -> str:
        return f"Deps({', '.join(kind.__name__ for kind in self._values)})"
