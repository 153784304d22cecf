"""groupmate's tool-calling core: register handlers, validate arguments, run the LLM loop."""

from function_calls._shaping import ChatTurn
from function_calls.context import ChatType, MessageContext, validation_context
from function_calls.errors import (
    DuplicateToolError,
    FunctionCallError,
    LLMUnavailableError,
    ToolDefinitionError,
    ToolError,
    ToolFailedError,
    ToolHiddenError,
    ToolInvocationError,
    ToolTimeoutError,
    UnknownToolError,
)
from function_calls.invoker import (
    InvocationOutcome,
    ToolCall,
    ToolInvocation,
    ToolInvoker,
    ValidatedToolCall,
)
from function_calls.llm import FunctionCallLLM, ToolCallRecord, ToolMode, TurnEnding, TurnResult
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
from function_calls.services import ServiceName, Services, TextCompleter, required
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
    "InvocationOutcome",
    "LLMUnavailableError",
    "MessageContext",
    "NoArguments",
    "PromptFormat",
    "Scope",
    "ServiceName",
    "Services",
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
    "ToolRegistry",
    "ToolTimeoutError",
    "TurnEnding",
    "TurnResult",
    "UnknownToolError",
    "ValidatedToolCall",
    "build_tool",
    "default_registry",
    "required",
    "tool_function",
    "validation_context",
]
