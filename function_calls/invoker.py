"""One path from a tool call to its result, for every caller: the LLM loop, the slash
commands and the HTTP routes.

`validate_tool_call` checks visibility and runs both validation stages; it returns a
`ValidatedToolCall` or raises a `ToolInvocationError`. `execute_tool_call` runs one
validated call under its timeout. `invoke` does both for a batch: the same call twice
runs once, and the rest run in parallel, at most `max_concurrency` at a time, each
answered by a typed `ToolInvocation`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from function_calls.context import MessageContext
from function_calls.errors import (
    ToolError,
    ToolFailedError,
    ToolHiddenError,
    ToolInvocationError,
    ToolTimeoutError,
    UnknownToolError,
)
from function_calls.registry import Tool, ToolRegistry
from function_calls.result import FunctionResult
from function_calls.schema import SchemaView
from function_calls.validation import InvalidArgumentsError

log = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT = 30.0
DEFAULT_MAX_CONCURRENCY = 8

InvocationOutcome = Literal["ok", "invalid", "unknown", "hidden", "timeout", "failed"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call as asked: the tool's name and its raw arguments (a dict, or the JSON string
    that models send)."""

    name: str
    arguments: Any


@dataclass(frozen=True, slots=True)
class ValidatedToolCall:
    """A call that passed visibility and both validation stages."""

    tool: Tool
    arguments: BaseModel

    @property
    def key(self) -> tuple[str, str]:
        """Two calls with the same key do the same thing."""
        return self.tool.name, self.arguments.model_dump_json()


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """What became of one call: its result, or the error that says why there is none."""

    call: ToolCall
    validated: ValidatedToolCall | None = None
    result: FunctionResult | None = None
    error: ToolInvocationError | None = None
    # The same call came earlier in the batch; this one shares its result.
    duplicate: bool = False

    @property
    def outcome(self) -> InvocationOutcome:
        return _outcome(self.error)

    @property
    def ok(self) -> bool:
        return self.error is None


def _outcome(error: ToolInvocationError | None) -> InvocationOutcome:
    if error is None:
        return "ok"
    if isinstance(error, InvalidArgumentsError):
        return "invalid"
    if isinstance(error, UnknownToolError):
        return "unknown"
    if isinstance(error, ToolHiddenError):
        return "hidden"
    if isinstance(error, ToolTimeoutError):
        return "timeout"
    return "failed"


class ToolInvoker:
    """Validates and runs tool calls from one registry."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    ) -> None:
        if call_timeout <= 0 or max_concurrency < 1:
            raise ValueError("call_timeout must be > 0 and max_concurrency >= 1")
        self.registry = registry
        self.call_timeout = call_timeout
        self.max_concurrency = max_concurrency

    def offered(self, ctx: MessageContext) -> list[Tool]:
        """The tools this sender may use in this chat."""
        return self.registry.visible(ctx)

    def validate_tool_call(
        self, ctx: MessageContext, call: ToolCall, view: SchemaView = "full"
    ) -> ValidatedToolCall:
        """Visibility, then both validation stages against the view the caller was shown.

        Raises UnknownToolError, ToolHiddenError or InvalidArgumentsError.
        """
        if call.name not in self.registry:
            raise UnknownToolError(call.name, [t.name for t in self.offered(ctx)])
        tool = self.registry.get(call.name)
        if not tool.visible_to(ctx):
            raise ToolHiddenError(call.name, [t.name for t in self.offered(ctx)])
        return ValidatedToolCall(tool, tool.validate(call.arguments, ctx, view))

    def timeout_of(self, tool: Tool) -> float:
        """Seconds a call of `tool` may take: its own limit, else the invoker's."""
        return tool.timeout or self.call_timeout

    async def execute_tool_call(
        self, ctx: MessageContext, validated: ValidatedToolCall
    ) -> FunctionResult:
        """Run the handler under its timeout. Raises ToolTimeoutError or ToolFailedError."""
        tool = validated.tool
        seconds = self.timeout_of(tool)
        deadline = asyncio.timeout(seconds)
        try:
            async with deadline:
                return await tool.invoke(ctx, validated.arguments)
        except TimeoutError as exc:
            if deadline.expired():
                log.warning("tool %s timed out after %.1fs", tool.name, seconds)
                raise ToolTimeoutError(tool.name, seconds) from None
            # Raised by the handler itself, e.g. by its HTTP client: a failure like any other.
            log.exception("tool %s failed", tool.name)
            raise _internal(tool.name) from exc
        except ToolError as exc:
            raise ToolFailedError(tool.name, str(exc), internal=False) from exc
        except Exception as exc:
            log.exception("tool %s failed", tool.name)
            raise _internal(tool.name) from exc

    async def execute_all(
        self, ctx: MessageContext, calls: Sequence[ValidatedToolCall]
    ) -> list[FunctionResult | ToolInvocationError]:
        """Run validated calls in parallel, at most `max_concurrency` at a time; each
        answer is the result or the error, in the order given."""
        gate = asyncio.Semaphore(self.max_concurrency)

        async def run(item: ValidatedToolCall) -> FunctionResult | ToolInvocationError:
            async with gate:
                try:
                    return await self.execute_tool_call(ctx, item)
                except ToolInvocationError as exc:
                    return exc

        # gather, so that cancelling the batch cancels the calls in flight.
        return list(await asyncio.gather(*(run(item) for item in calls)))

    async def invoke(
        self, ctx: MessageContext, calls: Sequence[ToolCall], view: SchemaView = "full"
    ) -> list[ToolInvocation]:
        """Each call's invocation, in the order given."""
        validated: list[ValidatedToolCall | ToolInvocationError] = []
        for call in calls:
            try:
                validated.append(self.validate_tool_call(ctx, call, view))
            except ToolInvocationError as exc:
                validated.append(exc)
        unique: dict[tuple[str, str], ValidatedToolCall] = {}
        for item in validated:
            if isinstance(item, ValidatedToolCall):
                unique.setdefault(item.key, item)
        done = await self.execute_all(ctx, list(unique.values()))
        runs = dict(zip(unique, done, strict=True))
        answers: list[ToolInvocation] = []
        seen: set[tuple[str, str]] = set()
        for call, item in zip(calls, validated, strict=True):
            if isinstance(item, ToolInvocationError):
                answers.append(ToolInvocation(call, error=item))
                continue
            outcome, duplicate = runs[item.key], item.key in seen
            seen.add(item.key)
            if isinstance(outcome, ToolInvocationError):
                answers.append(ToolInvocation(call, item, error=outcome, duplicate=duplicate))
            else:
                answers.append(ToolInvocation(call, item, result=outcome, duplicate=duplicate))
        return answers

    async def run(self, ctx: MessageContext, name: str, arguments: Any) -> FunctionResult:
        """One call, validated and run; raises the ToolInvocationError that stopped it."""
        validated = self.validate_tool_call(ctx, ToolCall(name, arguments))
        return await self.execute_tool_call(ctx, validated)


def _internal(name: str) -> ToolFailedError:
    return ToolFailedError(name, f"{name} failed with an internal error", internal=True)
