"""groupmate's tool-calling core: register handlers, validate arguments, run the LLM loop."""

from function_calls.context import ChatType, MessageContext, validation_context
from function_calls.errors import (
    DuplicateToolError,
    FunctionCallError,
    LLMUnavailableError,
    ToolDefinitionError,
    ToolError,
    UnknownToolError,
)
from function_calls.llm import ChatTurn, FunctionCallLLM, ToolCallRecord, ToolMode, TurnResult
from function_calls.prompt_formats import PromptFormat
from function_calls.registry import (
    Example,
    NoArguments,
    Scope,
    Tool,
    ToolRegistry,
    build_tool,
    default_registry,
    tool_function,
)
from function_calls.result import FunctionResult
from function_calls.validation import ArgumentIssue, InvalidArgumentsError

__all__ = [
    "ArgumentIssue",
    "ChatTurn",
    "ChatType",
    "DuplicateToolError",
    "Example",
    "FunctionCallError",
    "FunctionCallLLM",
    "FunctionResult",
    "InvalidArgumentsError",
    "LLMUnavailableError",
    "MessageContext",
    "NoArguments",
    "PromptFormat",
    "Scope",
    "Tool",
    "ToolCallRecord",
    "ToolDefinitionError",
    "ToolError",
    "ToolMode",
    "ToolRegistry",
    "TurnResult",
    "UnknownToolError",
    "build_tool",
    "default_registry",
    "tool_function",
    "validation_context",
]
