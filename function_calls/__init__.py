"""groupmate's tool-calling core: register handlers, validate arguments, run the LLM loop."""

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
