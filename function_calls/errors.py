"""Exception classes raised by the tool-calling core."""

from __future__ import annotations


class FunctionCallError(Exception):
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


class UnknownToolError(FunctionCallError, LookupError):
    """A tool name that the registry does not know."""

    def __init__(self, name: str, available: list[str]) -> None:
        listing = ", ".join(available) or "none"
        super().__init__(f"no tool named {name!r}; available tools: {listing}")
        self.name = name
        self.available = available


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
