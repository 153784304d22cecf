"""One path from a tool call to its result, for every caller: the LLM loop, the slash
commands, accepted offers, the REST routes, the dashboard and MCP clients.

`registry` is the one composed tool set (see function_calls.toolsets) under the tools
policy and the chat's switches: `offered(ctx)` is that set for a message's context, and
what the model, /tools, /help, MCP clients and the REST routes are shown.

`validate_tool_call` checks that the tool is offered to the sender (its own scope and
rights, the config's narrowing, the tools policy, the chat's switches), then runs both
validation stages; it returns a `ValidatedToolCall` or raises a `ToolInvocationError`
(hidden with the set's reason, or unknown). `execute_tool_call` counts the call against
the policy's rate limits, runs it under its timeout and writes the audit entry of a
write or external call. `plan` validates a batch and marks the repeats; `run_planned`
runs what `plan` passed, each distinct call once, in parallel (at most
`max_concurrency` at a time); `invoke` is both.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from groupmate.function_calls.audit import AuditSink, entry_for
from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import (
    InvocationOutcome,
    ToolError,
    ToolFailedError,
    ToolHiddenError,
    ToolInvocationError,
    ToolSwitchedOffError,
    ToolTimeoutError,
    UnknownToolError,
)
from groupmate.function_calls.policy import ToolPolicy, governed
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.schema import SchemaView
from groupmate.function_calls.tools import Tool
from groupmate.function_calls.toolsets import AbstractToolset, ToolListing
from groupmate.storage.audit import AuditEntry

log = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT = 30.0
DEFAULT_MAX_CONCURRENCY = 8
_DETAIL = 500  # characters of an error kept in the audit log

CallObserver = Callable[[str | None, InvocationOutcome], None]
"""Told how each call ended, refused in validation or run: the tool's name (None: no tool
of the name asked, which is the caller's text) and the outcome. The bot's metrics count
them; it must not raise or block."""


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
    # Two calls with the same key do the same thing (worked out once: batches and
    # rounds compare keys several times).
    key: tuple[str, str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (self.tool.name, self.arguments.model_dump_json()))


@dataclass(frozen=True, slots=True)
class ToolInvocation:
    """What became of one call: its result, or the error that says why there is none."""

    call: ToolCall
    validated: ValidatedToolCall | None = None
    result: FunctionResult | None = None
    error: ToolInvocationError | None = None
    # The same call came earlier (in the batch, or in `earlier`); this one shares its
    # result and did not run again.
    duplicate: bool = False

    @property
    def outcome(self) -> InvocationOutcome:
        if self.error is not None:
            return self.error.outcome
        if self.result is not None and self.result.failure is not None:
            return "refused"
        return "ok"

    @property
    def ok(self) -> bool:
        return self.error is None


class ToolInvoker:
    """Validates and runs tool calls from one tool set, under one tools policy, writing
    one audit log. A handler that asks for an `AbstractToolset` (help, /tools) is given
    `registry`: the tools of the invoker that runs it, as its sender's context has them."""

    def __init__(
        self,
        registry: AbstractToolset,
        *,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        policy: ToolPolicy | None = None,
        audit: AuditSink | None = None,
        observe: CallObserver | None = None,
    ) -> None:
        if call_timeout <= 0 or max_concurrency < 1:
            raise ValueError("call_timeout must be > 0 and max_concurrency >= 1")
        # The tools' own declarations and the config's narrowing are in `registry`; the
        # policy and the chat's switches come on top, once, here.
        self.registry = governed(registry, policy)
        self.call_timeout = call_timeout
        self.max_concurrency = max_concurrency
        self.policy = policy
        self.audit = audit
        self.observe = observe

    def with_tools(self, ctx: MessageContext) -> MessageContext:
        """`ctx` in which handlers that ask for an `AbstractToolset` get this invoker's
        set (a bot's contexts already hold it; a bare `FunctionCallLLM`'s do not)."""
        if ctx.deps.get(AbstractToolset) is self.registry:
            return ctx
        return dataclasses.replace(ctx, deps=ctx.deps.with_(AbstractToolset, self.registry))

    def listing(self, ctx: MessageContext) -> ToolListing:
        """What this sender may use in this chat, and why not the others: one walk of the
        composed sets, which a turn keeps for the calls of the round it was taken for."""
        return self.registry.listing(self.with_tools(ctx))

    def offered(self, ctx: MessageContext) -> list[Tool]:
        """The tools this sender may use in this chat, in the set's order."""
        return list(self.listing(ctx).offered.values())

    def validate_tool_call(
        self,
        ctx: MessageContext,
        call: ToolCall,
        view: SchemaView = "full",
        *,
        listing: ToolListing | None = None,
    ) -> ValidatedToolCall:
        """Visibility (against `listing`, taken for this context when the call was
        asked for; by default, now), then both validation stages against the view the
        caller was shown.

        Raises UnknownToolError, ToolHiddenError (ToolSwitchedOffError) or
        InvalidArgumentsError.
        """
        try:
            return self._validate(ctx, call, view, listing or self.listing(ctx))
        except ToolInvocationError as exc:
            if self.observe is not None:
                self.observe(call.name if call.name in self.registry else None, exc.outcome)
            raise

    def _validate(
        self, ctx: MessageContext, call: ToolCall, view: SchemaView, listing: ToolListing
    ) -> ValidatedToolCall:
        tool = listing.offered.get(call.name)
        if tool is not None:
            return ValidatedToolCall(tool, tool.validate(call.arguments, ctx, view))
        available = list(listing.offered)
        reason = listing.reason(call.name)
        if reason is None:
            raise UnknownToolError(call.name, available)
        if reason == "switched_off":
            raise ToolSwitchedOffError(call.name, available)
        raise ToolHiddenError(call.name, available, reason)

    def timeout_of(self, tool: Tool) -> float:
        """Seconds a call of `tool` may take: its own limit, else the invoker's."""
        return tool.timeout or self.call_timeout

    async def execute_tool_call(
        self, ctx: MessageContext, validated: ValidatedToolCall
    ) -> FunctionResult:
        """Run the handler under its timeout and audit the call. Raises
        ToolRateLimitedError (nothing ran), ToolTimeoutError or ToolFailedError."""
        name = validated.tool.name
        try:
            result = await self._execute(ctx, validated)
        except ToolInvocationError as exc:
            if self.observe is not None:
                self.observe(name, exc.outcome)
            raise
        if self.observe is not None:
            self.observe(name, "ok" if result.failure is None else "refused")
        return result

    async def _execute(self, ctx: MessageContext, validated: ValidatedToolCall) -> FunctionResult:
        tool = validated.tool
        if self.policy is not None:
            self.policy.take(tool.name, tool.effect, ctx)
            if self.policy.owner_only(tool.name, tool.effect, ctx):
                ctx = dataclasses.replace(ctx, owner_only=True)
        try:
            result = await self._run(ctx, validated)
        except ToolInvocationError as exc:
            await self._audit(ctx, validated, None, exc)
            raise
        except asyncio.CancelledError:
            # Stopped (the turn or the process is ending): what it did may be written;
            # the row says so rather than leaving no trace.
            await self._audit(ctx, validated, None, None, cancelled=True)
            raise
        if result.changed or result.failure is not None:
            await self._audit(ctx, validated, result, None)
        return result

    async def _run(self, ctx: MessageContext, validated: ValidatedToolCall) -> FunctionResult:
        tool = validated.tool
        ctx = self.with_tools(ctx)
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

    async def _audit(
        self,
        ctx: MessageContext,
        validated: ValidatedToolCall,
        result: FunctionResult | None,
        error: ToolInvocationError | None,
        *,
        cancelled: bool = False,
    ) -> None:
        """Queue the audit entry of a write or external call, and of any scheduled one (a
        reminder's action runs unattended: each run is on record); never raises: the call
        is over, and a lost row must not turn it into a failure."""
        tool = validated.tool
        if self.audit is None or (tool.effect == "read" and ctx.source != "schedule"):
            return
        try:
            await self.audit.record(_entry(ctx, validated, result, error, cancelled))
        except Exception:
            log.exception("audit entry for %s not queued", tool.name)

    def plan(
        self,
        ctx: MessageContext,
        calls: Sequence[ToolCall],
        view: SchemaView = "full",
        *,
        listing: ToolListing | None = None,
    ) -> list[ToolInvocation]:
        """Validate each call (see `validate_tool_call`): a validated one is ready to run
        (`run_planned`); one that repeats an earlier call of the batch is marked
        `duplicate`; a refused one carries its error. Nothing runs."""
        planned: list[ToolInvocation] = []
        seen: set[tuple[str, str]] = set()
        listing = listing or self.listing(ctx)
        for call in calls:
            try:
                validated = self.validate_tool_call(ctx, call, view, listing=listing)
            except ToolInvocationError as exc:
                planned.append(ToolInvocation(call, error=exc))
                continue
            planned.append(ToolInvocation(call, validated, duplicate=validated.key in seen))
            seen.add(validated.key)
        return planned

    async def run_planned(
        self,
        ctx: MessageContext,
        planned: Sequence[ToolInvocation],
        *,
        earlier: Mapping[tuple[str, str], ToolInvocation] | None = None,
    ) -> list[ToolInvocation]:
        """Run each distinct validated call once (in parallel, at most `max_concurrency`
        at a time; cancelling this cancels them). A call that repeats one in `earlier`
        (an earlier round of the same turn) shares that one's result instead of running.
        Returns the invocations in the order given."""
        earlier = earlier or {}
        jobs: dict[tuple[str, str], ValidatedToolCall] = {}
        for item in planned:
            if item.validated is not None and item.validated.key not in earlier:
                jobs.setdefault(item.validated.key, item.validated)
        gate = asyncio.Semaphore(self.max_concurrency)

        async def run(job: ValidatedToolCall) -> FunctionResult | ToolInvocationError:
            async with gate:
                try:
                    return await self.execute_tool_call(ctx, job)
                except ToolInvocationError as exc:
                    return exc

        done = dict(zip(jobs, await asyncio.gather(*(run(j) for j in jobs.values())), strict=True))
        answers: list[ToolInvocation] = []
        for item in planned:
            if item.validated is None:
                answers.append(item)
                continue
            key = item.validated.key
            call, validated = item.call, item.validated
            if key in earlier:
                before = earlier[key]
                answers.append(
                    ToolInvocation(call, validated, before.result, before.error, duplicate=True)
                )
                continue
            outcome = done[key]
            if isinstance(outcome, ToolInvocationError):
                answers.append(
                    ToolInvocation(call, validated, error=outcome, duplicate=item.duplicate)
                )
            else:
                answers.append(ToolInvocation(call, validated, outcome, duplicate=item.duplicate))
        return answers

    async def invoke(
        self, ctx: MessageContext, calls: Sequence[ToolCall], view: SchemaView = "full"
    ) -> list[ToolInvocation]:
        """Each call's invocation, in the order given: `plan`, then `run_planned`."""
        return await self.run_planned(ctx, self.plan(ctx, calls, view))

    async def run(self, ctx: MessageContext, name: str, arguments: Any) -> FunctionResult:
        """One call, validated and run; raises the ToolInvocationError that stopped it."""
        validated = self.validate_tool_call(ctx, ToolCall(name, arguments))
        return await self.execute_tool_call(ctx, validated)


def _entry(
    ctx: MessageContext,
    validated: ValidatedToolCall,
    result: FunctionResult | None,
    error: ToolInvocationError | None,
    cancelled: bool,
) -> AuditEntry:
    outcome: InvocationOutcome
    detail: str | None = None
    if error is not None:
        outcome, detail = error.outcome, str(error)[:_DETAIL]
    elif cancelled:
        outcome, detail = "failed", "cancelled while running"
    elif result is not None and result.failure is not None:
        outcome, detail = "refused", result.failure
    else:
        outcome = "ok"
    return entry_for(
        ctx,
        validated.tool.name,
        validated.tool.effect,
        outcome,
        validated.arguments.model_dump(mode="json"),
        detail=detail,
        touched=result.touched if result is not None else None,
    )


def _internal(name: str) -> ToolFailedError:
    return ToolFailedError(name, f"{name} failed with an internal error", internal=True)
