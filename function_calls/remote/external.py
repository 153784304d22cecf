"""Tools whose schema and code live on another server (MCP, OpenAPI), and a server's
set of them as its config narrows and prefixes it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import ToolDefinitionError
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.schema import external_parameters_schema, is_strict_compatible
from groupmate.function_calls.tool_building import tool_validators
from groupmate.function_calls.tools import TOOL_NAME, Tool
from groupmate.function_calls.toolsets import AbstractToolset, ToolFilter, exposed_name
from groupmate.function_calls.vocabulary import Effect, Scope

# Runs a tool defined elsewhere with its checked arguments.
ExternalCall = Callable[[MessageContext, dict[str, Any]], Awaitable[FunctionResult]]


class ExternalArguments(BaseModel):
    """Arguments of a tool whose schema comes from another server. Stage 1 checks them
    against that schema; the server that runs the tool is stage 2."""

    model_config = ConfigDict(extra="allow")


class ServerOptions(Protocol):
    """What an MCP or OpenAPI server's config says of where its tools are offered."""

    @property
    def tools(self) -> ToolFilter: ...
    @property
    def scope(self) -> Scope: ...
    @property
    def admin_only(self) -> bool: ...


def as_configured(server: AbstractToolset, options: ServerOptions, prefix: str) -> AbstractToolset:
    """A server's set under its config: the allow and deny lists (on the server's own
    names), `scope` and `admin_only` (which only add restrictions), then the prefix."""
    narrowed = server.narrowed(
        scope=options.scope, admin_only=options.admin_only, tools=options.tools
    )
    return narrowed.prefixed(prefix) if prefix else narrowed


def external_tool(
    name: str,
    description: str,
    parameters: Any,
    call: ExternalCall,
    *,
    timeout: float | None = None,
    effect: Effect = "write",
) -> Tool:
    """A Tool for a schema defined elsewhere; raises ToolDefinitionError when the schema
    cannot be used (the caller skips that tool and keeps the others). A remote tool that
    does not say what it does counts as a "write".

    `name` is the server's own spelling (`files.read`): the tool is named
    `exposed_name("", name)` and keeps the spelling, which the config's allow and deny
    lists match and its prefix goes before (see `as_configured`)."""
    spelled, name = name, exposed_name("", name)
    if not TOOL_NAME.fullmatch(name):
        raise ToolDefinitionError(f"invalid tool name {name!r}")
    try:
        schema = external_parameters_schema(parameters)
    except ValueError as exc:
        raise ToolDefinitionError(f"tool {name!r}: unusable argument schema: {exc}") from exc
    validator, compact_validator = tool_validators(name, schema, schema, ExternalArguments)

    async def handler(ctx: MessageContext, args: ExternalArguments) -> FunctionResult:
        return await call(ctx, args.model_dump())

    return Tool(
        name=name,
        description=" ".join(description.split()),
        handler=handler,
        args_model=ExternalArguments,
        parameters=schema,
        compact_parameters=schema,
        scope="both",  # a server's config narrows it (see `as_configured`)
        admin_only=False,
        examples=(),
        timeout=timeout,
        strict_compatible=is_strict_compatible(schema),
        validator=validator,
        compact_validator=compact_validator,
        ctx_param="ctx",
        args_param="args",
        is_async=True,
        external=True,
        effect=effect,
        source_name="" if spelled == name else spelled,
    )
