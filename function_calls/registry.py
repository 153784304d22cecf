"""`@tool_function`, which marks a handler as a tool, and `ToolRegistry`, a set of tools
(a plugin's, the built-in families', a test's own): the `FunctionToolset` of
function_calls.toolsets, under the name plugins and tests know it by."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from groupmate.function_calls.tool_building import (
    TOOL_MARK,
    ToolOptions,
    build_tool,
    tool_from,
    tool_options,
    tool_validators,
)
from groupmate.function_calls.tools import (
    COMMAND_NAME,
    TOOL_NAME,
    Example,
    Handler,
    HandlerT,
    NoArguments,
    Tool,
)
from groupmate.function_calls.toolsets import FunctionToolset
from groupmate.function_calls.vocabulary import Effect, Scope

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
    "build_tool",
    "tool_from",
    "tool_function",
    "tool_options",
    "tool_validators",
]

ToolRegistry = FunctionToolset


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
    bot/command_args.py for how the words become arguments, by the arguments' types).
    With `registry`, the tool is also built and added to that registry at once (a test's
    own, say).
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
