"""groupmate's tool-calling core: register handlers, validate arguments, run the LLM loop."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    from groupmate.function_calls._shaping import ChatTurn
    from groupmate.function_calls.context import (
        ChatType,
        CommandText,
        MessageContext,
        validation_context,
    )
    from groupmate.function_calls.deps import Deps, Progress
    from groupmate.function_calls.errors import (
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
    from groupmate.function_calls.invoker import (
        ToolCall,
        ToolInvocation,
        ToolInvoker,
        ValidatedToolCall,
    )
    from groupmate.function_calls.llm import FunctionCallLLM, ToolMode
    from groupmate.function_calls.policy import ToolPolicy, ToolRule
    from groupmate.function_calls.prompt_formats import PromptFormat
    from groupmate.function_calls.registry import (
        Example,
        NoArguments,
        Tool,
        ToolRegistry,
        build_tool,
        tool_function,
    )
    from groupmate.function_calls.result import Failure, FunctionResult, Touched
    from groupmate.function_calls.services import TextCompleter
    from groupmate.function_calls.toolsets import AbstractToolset, CombinedToolset, FunctionToolset
    from groupmate.function_calls.turn import ToolCallRecord, TurnEnding, TurnResult
    from groupmate.function_calls.validation import ArgumentIssue, InvalidArgumentsError
    from groupmate.function_calls.vocabulary import AuthMethod, CallSource, Effect, Scope, Who

__all__ = [
    "AbstractToolset",
    "ArgumentIssue",
    "AuthMethod",
    "CallSource",
    "ChatTurn",
    "ChatType",
    "CombinedToolset",
    "CommandText",
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
            "groupmate.function_calls._shaping": ("ChatTurn",),
            "groupmate.function_calls.context": (
                "ChatType",
                "CommandText",
                "MessageContext",
                "validation_context",
            ),
            "groupmate.function_calls.deps": ("Deps", "Progress"),
            "groupmate.function_calls.errors": (
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
            "groupmate.function_calls.invoker": (
                "ToolCall",
                "ToolInvocation",
                "ToolInvoker",
                "ValidatedToolCall",
            ),
            "groupmate.function_calls.llm": ("FunctionCallLLM", "ToolMode"),
            "groupmate.function_calls.policy": ("ToolPolicy", "ToolRule"),
            "groupmate.function_calls.prompt_formats": ("PromptFormat",),
            "groupmate.function_calls.registry": (
                "Example",
                "NoArguments",
                "Tool",
                "ToolRegistry",
                "build_tool",
                "tool_function",
            ),
            "groupmate.function_calls.result": ("Failure", "FunctionResult", "Touched"),
            "groupmate.function_calls.services": ("TextCompleter",),
            "groupmate.function_calls.toolsets": (
                "AbstractToolset",
                "CombinedToolset",
                "FunctionToolset",
            ),
            "groupmate.function_calls.turn": ("ToolCallRecord", "TurnEnding", "TurnResult"),
            "groupmate.function_calls.validation": ("ArgumentIssue", "InvalidArgumentsError"),
            "groupmate.function_calls.vocabulary": (
                "AuthMethod",
                "CallSource",
                "Effect",
                "Scope",
                "Who",
            ),
        },
    )
