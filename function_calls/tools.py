"""A tool: a handler and everything derived from its signature (schemas, validators,
the parameters it takes), built once (`function_calls.tool_building` builds it)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from groupmate.function_calls.context import MESSAGE_CONTEXT_KEY, CommandText, MessageContext
from groupmate.function_calls.deps import Dependency
from groupmate.function_calls.errors import (
    HiddenReason,
)
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.schema import (
    JsonSchema,
    SchemaView,
)
from groupmate.function_calls.validation import ArgumentValidator
from groupmate.function_calls.vocabulary import Effect, Scope

Handler = Callable[..., Any]
HandlerT = TypeVar("HandlerT", bound=Handler)

log = logging.getLogger(__name__)

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
COMMAND_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


@dataclass(frozen=True, slots=True, eq=False)
class Example:
    """Something a user might say, and optionally the arguments it should become.

    The words go into the tool's description; an example with `arguments` is also shown
    to prompt-mode models as a worked call (small models copy a pattern far better than
    they follow a schema). The arguments are validated against both schema views when
    the tool is registered, so an example cannot drift from the schema.
    """

    said: str
    arguments: Mapping[str, Any] | None = None


class NoArguments(BaseModel):
    """Argument model of handlers that take no arguments."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True, eq=False)
class Tool:
    """A registered handler together with everything derived from its signature."""

    name: str
    description: str
    handler: Handler
    args_model: type[BaseModel]
    parameters: JsonSchema  # the full view
    compact_parameters: JsonSchema  # the compact view, for small models
    scope: Scope
    admin_only: bool
    examples: tuple[Example, ...]
    timeout: float | None
    strict_compatible: bool
    validator: ArgumentValidator = field(repr=False)
    compact_validator: ArgumentValidator = field(repr=False)
    ctx_param: str | None = field(repr=False)
    args_param: str | None = field(repr=False)
    is_async: bool = field(repr=False)
    # What the handler asks for besides ctx and args, by type (see function_calls.deps);
    # a tool whose required dependency this bot lacks is not offered at all.
    deps: tuple[Dependency, ...] = field(default=(), repr=False)
    # The plugin the tool came with ("" for a tool built by hand): its store and status.
    plugin: str = ""
    # Runs on another server (MCP, OpenAPI); groupmate's own MCP server does not re-offer it.
    external: bool = False
    # What a call does (see `Effect`); writes and external calls are audited.
    effect: Effect = "write"
    # False: for commands, the API and MCP clients only; never in the model's prompt
    # (every tool shown costs each request its tokens).
    for_model: bool = True
    # A slash command that runs the tool without the model: "/weather Berlin".
    command: str | None = None
    # The parameter given the command's words as written (`CommandText`), if one is.
    text_param: str | None = field(default=None, repr=False)
    # The name as its source spelled it (an MCP tool's `files.read`, an OpenAPI
    # operationId, a prefix before it) when `name` had to be made a valid tool name from
    # it; "" when that is `name` itself. Allow and deny lists match it, and a further
    # prefix goes before it (see function_calls.toolsets).
    source_name: str = ""

    @property
    def spelled(self) -> str:
        """The name as its source spelled it."""
        return self.source_name or self.name

    def hidden_because(self, ctx: MessageContext) -> HiddenReason | None:
        """Why this tool itself is not offered to the sender of `ctx` (its scope, rights,
        services); None when it is. Only by `ctx`'s is_admin, chat_type, source and deps:
        tool sets keep the answer by those (`ListingMemo.own`). A config's narrowing, the
        tools policy and the
        chat's switches come on top (function_calls.toolsets): `ToolInvoker.offered` is
        what a sender may use."""
        if self.admin_only and not ctx.is_admin:
            return "admin_only"
        for dependency in self.deps:
            if not dependency.optional and not ctx.deps.provides(dependency, self.plugin):
                return "service"  # e.g. web_search without a configured provider
        if self.scope != "both" and self.scope != ctx.chat_type:
            return "scope"
        if self.external and ctx.source == "mcp":
            return "remote"  # groupmate's MCP server is not a proxy for other servers
        if not self.for_model and ctx.source == "model":
            return "not_for_model"
        return None

    def definition(
        self, *, strict: bool = True, view: SchemaView = "full", worked_apart: bool = False
    ) -> dict[str, Any]:
        """The OpenAI `tools=[...]` entry for this tool, in the given schema view.
        `worked_apart`: see `model_description`."""
        function: dict[str, Any] = {
            "name": self.name,
            "description": self.model_description(worked_apart=worked_apart),
            "parameters": self.compact_parameters if view == "compact" else self.parameters,
        }
        if strict and view == "full" and self.strict_compatible:
            function["strict"] = True
        return {"type": "function", "function": function}

    def model_description(self, *, worked_apart: bool = False) -> str:
        """The description with what users say to ask for the tool. `worked_apart`: the
        examples with arguments are shown elsewhere as whole calls (prompt mode), so
        only the others are listed here (each said once, not twice)."""
        listed = [e for e in self.examples if not (worked_apart and e.arguments is not None)]
        if not listed:
            return self.description
        examples = "; ".join(f'"{example.said}"' for example in listed)
        return f"{self.description} Examples: {examples}"

    def validate(
        self, raw_arguments: Any, ctx: MessageContext | None = None, view: SchemaView = "full"
    ) -> BaseModel:
        """Both validation stages, against the view the model was shown; raises
        InvalidArgumentsError.

        With `ctx`, the model's validators can check against the chat's clock and zone.
        """
        context = None if ctx is None else {MESSAGE_CONTEXT_KEY: ctx}
        validator = self.compact_validator if view == "compact" else self.validator
        return validator.validate(raw_arguments, context)

    async def invoke(self, ctx: MessageContext, arguments: BaseModel) -> FunctionResult:
        """Run the handler; plain functions run in a worker thread. A tool that does not
        write gets no writer from `ctx.deps` either: what it was refused as a parameter
        (see `tool_building.check_effect`), it can't look up."""
        if self.effect != "write":
            ctx = dataclasses.replace(ctx, deps=ctx.deps.withholding(write_types()))
        kwargs: dict[str, Any] = {}
        if self.ctx_param:
            kwargs[self.ctx_param] = ctx
        if self.args_param:
            kwargs[self.args_param] = arguments
        if self.text_param:
            kwargs[self.text_param] = CommandText(ctx.command_text or "")
        for dependency in self.deps:
            kwargs[dependency.param] = ctx.deps.resolve(dependency, self.plugin, ctx.chat_id)
        if self.is_async:
            outcome = await self.handler(**kwargs)
        else:
            outcome = await asyncio.to_thread(self.handler, **kwargs)
        if isinstance(outcome, FunctionResult):
            return outcome
        return FunctionResult.for_model(outcome)


def write_types() -> frozenset[type[Any]]:
    """The types that can change the bot's state (see `function_calls.provided`)."""
    from groupmate.function_calls.provided import WRITE_TYPES  # it imports this module

    return WRITE_TYPES
