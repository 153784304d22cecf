"""groupmate's public API for plugin authors: everything a plugin imports.

    from groupmate import FunctionResult, MessageContext, Plugin, PluginStore, tool_function

`groupmate.testing` is the test kit (a pytest plugin: see README, "Write a plugin").
"""

from function_calls.context import MessageContext
from function_calls.deps import Progress
from function_calls.errors import ToolError
from function_calls.plugin_store import JsonValue, PluginStore
from function_calls.plugins.declare import Plugin
from function_calls.registry import Example, NoArguments, tool_function
from function_calls.result import FunctionResult
from function_calls.toolsets import AbstractToolset

__all__ = [
    "AbstractToolset",
    "Example",
    "FunctionResult",
    "JsonValue",
    "MessageContext",
    "NoArguments",
    "Plugin",
    "PluginStore",
    "Progress",
    "ToolError",
    "tool_function",
]
