"""`FunctionToolset` (also `ToolRegistry`): a fixed set of tools, from `Tool`s or from
handlers `@tool_function` marked."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import DuplicateToolError
from groupmate.function_calls.tool_building import ToolOptions, build_tool, tool_from
from groupmate.function_calls.tools import Example, Handler, HandlerT, Tool
from groupmate.function_calls.toolsets._abstract import (
    AbstractToolset,
    ListingMemo,
    ToolListing,
)
from groupmate.function_calls.vocabulary import Effect, Scope


class FunctionToolset(AbstractToolset):
    """Tools in the order they were added (the order the model is shown them): a
    plugin's, the built-ins, a test's own. Each is offered where its own declaration
    lets it be (its scope, rights and services)."""

    __slots__ = ("_everyone", "_label", "_listed", "_tools")

    def __init__(self, tools: Iterable[Tool | Handler] = (), *, label: str = "tools") -> None:
        self._label = label
        self._tools: dict[str, Tool] = {}
        self._everyone = ListingMemo()
        self._listed: tuple[Tool, ...] = ()  # a new tuple at each change of the tools
        for tool in tools:
            self.register(tool if isinstance(tool, Tool) else tool_from(tool))

    @property
    def label(self) -> str:
        return self._label

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        return self._everyone.own(self._listed, ctx)

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise DuplicateToolError(tool.name)
        self._tools[tool.name] = tool
        self._listed = (*self._listed, tool)
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
        """Decorator: build the tool and add it to this set (like `APIRouter.get`, it
        touches only this object); returns the handler unchanged."""
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

    def merged(self, *others: FunctionToolset) -> FunctionToolset:
        """A new set of this set's tools followed by the others' (DuplicateToolError if
        two hold one name: unlike `CombinedToolset`, whose first set wins)."""
        return FunctionToolset(
            [*self._tools.values(), *(tool for other in others for tool in other._tools.values())]
        )
