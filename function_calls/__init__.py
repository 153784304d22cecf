"""groupmate's tool-calling core: register handlers, validate arguments, run the LLM loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from storage.lazy import lazy_exports

if TYPE_CHECKING:
    from function_calls._shaping import ChatTurn
    from function_calls.context import ChatType, MessageContext, validation_context
    from function_calls.deps import Deps, Progress
    from function_calls.errors import (
        DuplicateToolError,
        FunctionCallError,
        InvocationOutcome,
        LLMUnavailableError,
        ToolDefinitionError,
        ToolError,
        ToolFailedError,
        ToolHiddenError,
        ToolInvocationError,
        ToolRateLimitedError,
        ToolSwitchedOffError,
        ToolTimeoutError,
        UnknownToolError,
    )
    from function_calls.invoker import (
        ToolCall,
        ToolInvocation,
        ToolInvoker,
        ValidatedToolCall,
    )
    from function_calls.llm import FunctionCallLLM, ToolMode
    from function_calls.policy import ToolPolicy, ToolRule
    from function_calls.prompt_formats import PromptFormat
    from function_calls.registry import (
        Example,
        NoArguments,
        Tool,
        ToolRegistry,
        build_tool,
        tool_function,
    )
    from function_calls.result import Failure, FunctionResult, Touched
    from function_calls.services import TextCompleter
    from function_calls.toolsets import AbstractToolset, CombinedToolset, FunctionToolset
    from function_calls.turn import ToolCallRecord, TurnEnding, TurnResult
    from function_calls.validation import ArgumentIssue, InvalidArgumentsError
    from function_calls.vocabulary import AuthMethod, CallSource, Effect, Scope, Who

__all__ = [
    "AbstractToolset",
    "ArgumentIssue",
    "AuthMethod",
    "CallSource",
    "ChatTurn",
    "ChatType",
    "CombinedToolset",
    "Deps",
    "DuplicateToolError",
    "Effect",
    "Example",
    "Failure",
    "FunctionCallError",
    "FunctionCallLLM",
    "FunctionResult",
    "FunctionToolset",
    "InvalidArgumentsError",
    "InvocationOutcome",
    "LLMUnavailableError",
    "MessageContext",
    "NoArguments",
    "Progress",
    "PromptFormat",
    "Scope",
    "TextCompleter",
    "Tool",
    "ToolCall",
    "ToolCallRecord",
    "ToolDefinitionError",
    "ToolError",
    "ToolFailedError",
    "ToolHiddenError",
    "ToolInvocation",
    "ToolInvocationError",
    "ToolInvoker",
    "ToolMode",
    "ToolPolicy",
    "ToolRateLimitedError",
    "ToolRegistry",
    "ToolRule",
    "ToolSwitchedOffError",
    "ToolTimeoutError",
    "Touched",
    "TurnEnding",
    "TurnResult",
    "UnknownToolError",
    "ValidatedToolCall",
    "Who",
    "build_tool",
    "tool_function",
    "validation_context",
]

# Not for type checkers: they read the imports above, and a typo stays an error.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "function_calls._shaping": ("ChatTurn",),
            "function_calls.context": ("ChatType", "MessageContext", "validation_context"),
            "function_calls.deps": ("Deps", "Progress"),
            "function_calls.errors": (
                "DuplicateToolError",
                "FunctionCallError",
                "InvocationOutcome",
                "LLMUnavailableError",
                "ToolDefinitionError",
                "ToolError",
                "ToolFailedError",
                "ToolHiddenError",
                "ToolInvocationError",
                "ToolRateLimitedError",
                "ToolSwitchedOffError",
                "ToolTimeoutError",
                "UnknownToolError",
            ),
            "function_calls.invoker": (
                "ToolCall",
                "ToolInvocation",
                "ToolInvoker",
                "ValidatedToolCall",
            ),
            "function_calls.llm": ("FunctionCallLLM", "ToolMode"),
            "function_calls.policy": ("ToolPolicy", "ToolRule"),
            "function_calls.prompt_formats": ("PromptFormat",),
            "function_calls.registry": (
                "Example",
                "NoArguments",
                "Tool",
                "ToolRegistry",
                "build_tool",
                "tool_function",
            ),
            "function_calls.result": ("Failure", "FunctionResult", "Touched"),
            "function_calls.services": ("TextCompleter",),
            "function_calls.toolsets": ("AbstractToolset", "CombinedToolset", "FunctionToolset"),
            "function_calls.turn": ("ToolCallRecord", "TurnEnding", "TurnResult"),
            "function_calls.validation": ("ArgumentIssue", "InvalidArgumentsError"),
            "function_calls.vocabulary": ("AuthMethod", "CallSource", "Effect", "Scope", "Who"),
        },
    )
