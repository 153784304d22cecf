"""`@tool_function`, which marks a handler as a tool, and `ToolRegistry`, a set of tools
(a plugin's, the built-in families', a test's own)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from function_calls.errors import DuplicateToolError, ToolDefinitionError, UnknownToolError
from function_calls.tools import (
    COMMAND_NAME,
    TOOL_NAME,
    Example,
    Handler,
    HandlerT,
    NoArguments,
    Tool,
    ToolOptions,
    build_tool,
    builtin_provides,
    tool_validators,
)
from function_calls.vocabulary import Effect, Scope

__all__ = [
    "COMMAND_NAME",
    "TOOL_MARK",
    "TOOL_NAME",
    "Example",
    "Handler",
    "NoArguments",
    "Tool",
    "ToolOptions",
    "ToolRegistry",
    "ToolSource",
    "build_tool",
    "tool_from",
    "tool_function",
    "tool_options",
    "tool_validators",
]

log = logging.getLogger(__name__)


TOOL_MARK = "__groupmate_tool__"


def tool_options(handler: object) -> ToolOptions | None:
    """The options `@tool_function` marked `handler` with, if it did."""
    found = getattr(handler, TOOL_MARK, None)
    return found if isinstance(found, ToolOptions) else None


def tool_from(
    handler: Handler,
    *,
    provides: Callable[[type[Any]], bool] = builtin_provides,
    plugin: str = "",
) -> Tool:
    """The tool of a handler `@tool_function` marked; ToolDefinitionError otherwise."""
    options = tool_options(handler)
    if options is None:
        what = getattr(handler, "__qualname__", repr(handler))
        raise ToolDefinitionError(f"{what} is not marked with @tool_function")
    return build_tool(handler, options=options, provides=provides, plugin=plugin)


class ToolSource(Protocol):
    """Tools that come and go while the bot runs: those of an MCP or OpenAPI server.

    `tools()` is what the server offers now; a server that is down offers nothing, so
    the model is never shown a tool that cannot run.
    """

    @property
    def name(self) -> str: ...

    def tools(self) -> Sequence[Tool]: ...


class ToolRegistry:
    """A named set of tools, in the order they were added (the order the model is shown
    them). Built from `Tool`s or from handlers `@tool_function` marked; a plugin's
    tools, the built-in families and a test's own tools are each one.

    Attached `ToolSource`s add their current tools after the registered ones; a source's
    tool whose name is already taken is left out (and logged once).
    """

    def __init__(
        self, tools: Sequence[Tool | Handler] = (), sources: Sequence[ToolSource] = ()
    ) -> None:
        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = list(sources)
        self._clashes: set[tuple[str, str]] = set()
        for tool in tools:
            self.register(tool if isinstance(tool, Tool) else tool_from(tool))

    def attach(self, source: ToolSource) -> None:
        """Offer the tools of `source` too, for as long as it offers them."""
        self._sources.append(source)

    def _current(self) -> Mapping[str, Tool]:
        if not self._sources:
            return self._tools
        tools = dict(self._tools)
        for source in self._sources:
            for tool in source.tools():
                if tool.name not in tools:
                    tools[tool.name] = tool
                elif (source.name, tool.name) not in self._clashes:
                    self._clashes.add((source.name, tool.name))
                    log.warning(
                        "%s: tool %s is left out; the name is taken", source.name, tool.name
                    )
        return tools

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise DuplicateToolError(tool.name)
        self._tools[tool.name] = tool
        return tool

    def tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        scope: Scope = "both",
        admin_only: bool = False,
        examples: Sequence[str | Example] = (),
        timeout: float | None = None,
        effect: Effect = "write",
        for_model: bool = True,
        command: str | None = None,
        _localns: Mapping[str, Any] | None = None,
    ) -> Callable[[HandlerT], HandlerT]:
        """Decorator: build the tool and add it to this registry (like `APIRouter.get`,
        it touches only this object); returns the handler unchanged."""
        # Like pydantic, resolve annotations against the caller's scope too, so that
        # argument models defined inside a function work with postponed annotations.
        localns = _localns if _localns is not None else sys._getframe(1).f_locals
        options = ToolOptions(
            name, description, scope, admin_only, tuple(examples), timeout, effect,
            for_model, command, localns,
        )  # fmt: skip

        def decorate(handler: HandlerT) -> HandlerT:
            self.register(build_tool(handler, options=options))
            return handler

        return decorate

    def get(self, name: str) -> Tool:
        tools = self._current()
        try:
            return tools[name]
        except KeyError:
            raise UnknownToolError(name, list(tools)) from None

    def names(self) -> list[str]:
        return list(self._current())

    def merged(self, *others: ToolRegistry) -> ToolRegistry:
        """A new registry with this registry's tools followed by the others' (and the
        sources of all of them)."""
        combined = ToolRegistry(list(self._tools.values()), self._sources)
        for other in others:
            for tool in other._tools.values():
                combined.register(tool)
            for source in other._sources:
                combined.attach(source)
        return combined

    def __contains__(self, name: object) -> bool:
        return name in self._current()

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._current().values()))

    def __len__(self) -> int:
        return len(self._current())


def tool_function(
    name: str | None = None,
    description: str | None = None,
    *,
    scope: Scope = "both",
    admin_only: bool = False,
    examples: Sequence[str | Example] = (),
    timeout: float | None = None,
    effect: Effect = "write",
    for_model: bool = True,
    command: str | None = None,
    registry: ToolRegistry | None = None,
) -> Callable[[HandlerT], HandlerT]:
    """Mark a handler as a tool the model can call; the handler is returned unchanged.

    Marking registers nothing: importing a module has no effect on any bot. The tool is
    built (its signature read, its schemas made and checked) when a plugin that holds
    the handler loads, or a `ToolRegistry([handler])` takes it.

    The handler's pydantic-model parameter is the argument schema; a `MessageContext`
    parameter (or one named `ctx`) receives the context; any other parameter is a
    dependency asked for by its type (see function_calls.deps): the plugin's settings,
    a service it provides, its `PluginStore`, or one of the bot's own services. Name
    and description default to the function's name and docstring. `examples` are
    phrases, or `Example`s with the arguments they become (shown to prompt-mode models).
    `effect` says what a call does: "read" (changes nothing), "write" (the default:
    changes the bot's state) or "external" (reaches another server); the tools policy
    can key on it, and writes and external calls are audited. `for_model=False` keeps a
    tool out of the model's prompt: only commands, the API and MCP clients call it.
    `command="weather"` also makes `/weather Berlin` run it without the model (see
    bot/tool_commands.py for how the words become arguments). With `registry`, the tool
    is also built and added to that registry at once (a test's own, say).
    """
    options = ToolOptions(
        name, description, scope, admin_only, tuple(examples), timeout, effect, for_model,
        command, sys._getframe(1).f_locals,
    )  # fmt: skip

    def mark(handler: HandlerT) -> HandlerT:
        setattr(handler, TOOL_MARK, options)
        if registry is not None:
            registry.register(build_tool(handler, options=options))
        return handler

    return mark
