"""`Plugin`: what a plugin module declares besides its handlers, all of it optional: a
name, a settings model, services with a lifecycle, and tools listed by hand (a module
that imports handlers it does not offer, say).

    plugin = Plugin("weather", settings=WeatherSettings)

    @plugin.service
    async def client(settings: WeatherSettings) -> AsyncIterator[WeatherClient]:
        async with httpx.AsyncClient() as http:
            yield WeatherClient(http, settings)

A module without one is a plugin too: its name is the module's, and its tools are the
handlers `@tool_function` marked in it.
"""

from __future__ import annotations

import contextlib
import inspect
import re
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

from pydantic import BaseModel

from groupmate.function_calls.deps import Dependency, optional_of
from groupmate.function_calls.errors import ToolDefinitionError
from groupmate.function_calls.registry import Handler

F = TypeVar("F", bound=Callable[..., Any])
PLUGIN_NAME = re.compile(r"[a-z][a-z0-9_-]{0,63}")


@dataclass(frozen=True, slots=True)
class Service:
    """A plugin's service: `factory` makes the one object of type `kind` that handlers
    ask for; it runs when the bot starts and what it set up is undone when it stops."""

    kind: type[Any]
    factory: Callable[..., Any]
    params: tuple[Dependency, ...]

    @contextlib.asynccontextmanager
    async def running(self, values: dict[type[Any], object]) -> AsyncIterator[object]:
        """Start the service with its parameters taken from `values`; yields the object.
        An async generator is entered and finished; an (async) function's result is
        used as is, and closed on the way out if it has `aclose` or `close`."""
        kwargs = {dep.param: values.get(dep.kind) for dep in self.params}
        if inspect.isasyncgenfunction(self.factory):
            async with contextlib.asynccontextmanager(self.factory)(**kwargs) as made:
                yield made
            return
        made = self.factory(**kwargs)
        if inspect.isawaitable(made):
            made = await made
        try:
            yield made
        finally:
            closing = getattr(made, "aclose", None) or getattr(made, "close", None)
            if callable(closing):
                result = closing()
                if inspect.isawaitable(result):
                    await result


def _service_kind(factory: Callable[..., Any]) -> type[Any]:
    """The type a factory makes: its return annotation (`AsyncIterator[T]` or
    `AsyncGenerator[T, None]` for an async generator)."""
    hints = get_type_hints(factory)
    made = hints.get("return")
    if inspect.isasyncgenfunction(factory) and get_origin(made) is not None:
        made = get_args(made)[0]
    if not isinstance(made, type) or made is type(None):
        raise ToolDefinitionError(
            f"service {factory.__qualname__!r}: annotate what it returns (a class, or "
            "AsyncIterator[Class] for an async generator): handlers ask for it by that type"
        )
    return made


class Plugin:
    """A plugin's declaration; see the module's docstring. Declaring registers nothing:
    the bot reads it when the config names the plugin's module."""

    def __init__(
        self,
        name: str | None = None,
        *,
        settings: type[BaseModel] | None = None,
        description: str = "",
        tools: Sequence[Handler] = (),
    ) -> None:
        if name is not None and not PLUGIN_NAME.fullmatch(name):
            raise ToolDefinitionError(
                f"plugin name {name!r}: 1 to 64 lowercase letters, digits, '_' or '-'"
            )
        if settings is not None and not (
            isinstance(settings, type) and issubclass(settings, BaseModel)
        ):
            raise ToolDefinitionError("a plugin's settings= is a pydantic model class")
        self.name = name
        self.settings = settings
        self.description = description
        self._tools: list[Handler] = list(tools)
        self._services: list[Callable[..., Any]] = []

    def service(self, factory: F) -> F:
        """Decorator: `factory` provides a service of the type its return annotation
        names (see `Service`). Its parameters are asked for by type too: the plugin's
        settings, or another plugin's or the bot's services."""
        self._services.append(factory)
        return factory

    @property
    def handlers(self) -> tuple[Handler, ...]:
        """The tools listed with `tools=` (the loader adds the module's marked ones)."""
        return tuple(self._tools)

    def services(self) -> Iterator[Service]:
        """The declared services, their types read from their signatures."""
        for factory in self._services:
            kind = _service_kind(factory)
            hints = get_type_hints(factory)
            params = []
            for param in inspect.signature(factory).parameters.values():
                annotation, optional = optional_of(hints.get(param.name))
                if not isinstance(annotation, type):
                    raise ToolDefinitionError(
                        f"service {factory.__qualname__!r}: parameter {param.name!r} needs "
                        "a type (the plugin's settings model, or a service's class)"
                    )
                params.append(Dependency(param.name, annotation, optional))
            yield Service(kind, factory, tuple(params))

    def __repr__(self) -> str:
        return f"Plugin({self.name!r})"
