"""Exception classes raised by the tool-calling core.

FunctionCallError
├── ToolDefinitionError          a handler cannot become a tool (at registration)
│   └── DuplicateToolError
├── ToolInvocationError          a call could not be run or did not succeed
│   ├── UnknownToolError         no tool of that name
│   ├── ToolHiddenError          the tool is not offered to this sender in this chat
│   │   └── ToolSwitchedOffError a chat admin switched it off for the chat
│   ├── InvalidArgumentsError    either validation stage refused the arguments
│   ├── ToolRateLimitedError     the tool's policy allows no more calls for now
│   ├── ToolTimeoutError         the handler overran its time
│   └── ToolFailedError          the handler raised (ToolError: a message safe to show)
├── ToolError                    raised by handlers, reported as ToolFailedError
└── LLMUnavailableError          the endpoint could not be used

Each `ToolInvocationError` names its `outcome`: the one vocabulary of what became of a
call, used by the LLM loop, the router, the REST layer, the dashboard and the audit log.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from groupmate.function_calls.vocabulary import (
    InvocationOutcome as InvocationOutcome,
)  # re-exported
from groupmate.storage.exceptions import GroupmateError

# Why a tool is not offered to a sender in a chat.
HiddenReason = Literal[
    "scope", "admin_only", "service", "policy", "switched_off", "remote", "not_for_model"
]


class FunctionCallError(GroupmateError):
    """Base class for every error raised by `function_calls`."""


class ToolDefinitionError(FunctionCallError, TypeError):
    """A decorated handler cannot become a tool (bad signature, bad schema, bad options)."""


class DuplicateToolError(ToolDefinitionError):
    """Two handlers were registered under the same tool name in one registry."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"a tool named {name!r} is already registered; pick another name= "
            "or register it into a separate ToolRegistry"
        )
        self.name = name


class ToolInvocationError(FunctionCallError):
    """A call could not be run, or did not succeed; the subclass says which."""

    outcome: ClassVar[InvocationOutcome] = "failed"


class UnknownToolError(ToolInvocationError, LookupError):
    """A tool name that the registry does not know."""

    outcome: ClassVar[InvocationOutcome] = "unknown"

    def __init__(self, name: str, available: list[str]) -> None:
        listing = ", ".join(available) or "none"
        super().__init__(f"no tool named {name!r}; available tools: {listing}")
        self.name = name
        self.available = available


class ToolHiddenError(ToolInvocationError):
    """The tool exists but is not offered to this sender in this chat: `reason` says
    why (its scope, admin only, a service it needs is not configured, the tools policy,
    or the chat switched it off)."""

    outcome: ClassVar[InvocationOutcome] = "hidden"

    def __init__(self, name: str, available: list[str], reason: HiddenReason = "scope") -> None:
        super().__init__(f"tool {name!r} is not available in this chat ({reason})")
        self.name = name
        self.available = available
        self.reason: HiddenReason = reason


class ToolSwitchedOffError(ToolHiddenError):
    """A chat admin switched the tool off for this chat (`/tools off NAME`)."""

    def __init__(self, name: str, available: list[str]) -> None:
        super().__init__(name, available, "switched_off")


class ToolRateLimitedError(ToolInvocationError):
    """The tools policy allows this sender (or chat) no more calls of the tool for now;
    `retry_after` is the seconds until one more is allowed."""

    outcome: ClassVar[InvocationOutcome] = "limited"

    def __init__(self, name: str, retry_after: float) -> None:
        super().__init__(f"{name} was used too often; try again in {retry_after:.0f} s")
        self.name = name
        self.retry_after = retry_after


class ToolTimeoutError(ToolInvocationError, TimeoutError):
    """The handler did not finish in time. A plain-def handler's thread cannot be stopped;
    only its result is dropped."""

    outcome: ClassVar[InvocationOutcome] = "timeout"

    def __init__(self, name: str, seconds: float) -> None:
        super().__init__(f"{name} timed out after {seconds:g} s")
        self.name = name
        self.seconds = seconds


class ToolFailedError(ToolInvocationError):
    """The handler raised. From a `ToolError` the message is the handler's own (safe to
    show); from anything else it is a generic one, and the exception is logged."""

    def __init__(self, name: str, message: str, *, internal: bool) -> None:
        super().__init__(message)
        self.name = name
        self.internal = internal


class ToolError(FunctionCallError):
    """Raised by a handler to report a failure whose message is safe to show.

    The message reaches the model (or the user) verbatim, unlike other exceptions,
    which are logged and reported as an internal error.
    """


class LLMUnavailableError(FunctionCallError):
    """The LLM endpoint could not be used; `user_message` says why in plain words."""

    def __init__(self, user_message: str) -> None:
        super().__init__(user_message)
        self.user_message = user_message
