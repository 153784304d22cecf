"""A tool: a handler and everything derived from its signature (schemas, validators,
the parameters it takes), built once; `build_tool` makes one from a handler and its
`ToolOptions` (what `@tool_function` said of it)."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, get_type_hints

from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict

from groupmate.function_calls.context import MESSAGE_CONTEXT_KEY, MessageContext
from groupmate.function_calls.deps import Dependency, optional_of
from groupmate.function_calls.errors import (
    HiddenReason,
    ToolDefinitionError,
)
from groupmate.function_calls.plugin_store import PluginStore
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.schema import (
    JsonSchema,
    SchemaView,
    is_strict_compatible,
    model_parameters_schema,
)
from groupmate.function_calls.validation import ArgumentValidator, InvalidArgumentsError
from groupmate.function_calls.vocabulary import EFFECTS, SCOPES, Effect, Scope

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
        (see `_check_effect`), it can't look up."""
        if self.effect != "write":
            ctx = dataclasses.replace(ctx, deps=ctx.deps.withholding(write_types()))
        kwargs: dict[str, Any] = {}
        if self.ctx_param:
            kwargs[self.ctx_param] = ctx
        if self.args_param:
            kwargs[self.args_param] = arguments
        for dependency in self.deps:
            kwargs[dependency.param] = ctx.deps.resolve(dependency, self.plugin, ctx.chat_id)
        if self.is_async:
            outcome = await self.handler(**kwargs)
        else:
            outcome = await asyncio.to_thread(self.handler, **kwargs)
        if isinstance(outcome, FunctionResult):
            return outcome
        return FunctionResult.for_model(outcome)


@dataclass(frozen=True, slots=True)
class _Binding:
    """Which parameter of a handler takes what (read once, when the tool is built)."""

    ctx_param: str | None
    args_param: str | None
    args_model: type[BaseModel]
    deps: tuple[Dependency, ...]


def _bind_parameters(
    handler: Handler,
    name: str,
    localns: Mapping[str, Any] | None,
    provides: Callable[[type[Any]], bool],
) -> _Binding:
    """Find which parameter takes the context, which the arguments model, and which
    the dependencies (types `provides` admits)."""
    try:
        hints = get_type_hints(handler, localns=dict(localns) if localns else None)
    except Exception as exc:
        raise ToolDefinitionError(f"tool {name!r}: cannot resolve type hints: {exc}") from exc
    ctx_param: str | None = None
    args_param: str | None = None
    args_model: type[BaseModel] = NoArguments
    deps: list[Dependency] = []
    for param in inspect.signature(handler).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(f"tool {name!r}: *args/**kwargs are not supported")
        annotation = hints.get(param.name)
        kind, optional = optional_of(annotation)
        provided = isinstance(kind, type) and provides(kind)
        if annotation is MessageContext or (param.name == "ctx" and not provided and not ctx_param):
            ctx_param = param.name  # by its type, or by the name `ctx` whatever its hint
        elif provided:
            deps.append(Dependency(param.name, kind, optional))
        elif (
            isinstance(kind, type)
            and issubclass(kind, BaseModel)
            and not optional
            and args_param is None
        ):
            args_param, args_model = param.name, kind
        else:
            what = getattr(kind, "__name__", None) or repr(annotation)
            raise ToolDefinitionError(
                f"tool {name!r}: parameter {param.name!r} ({what}): nothing provides it. A "
                "handler takes the context (MessageContext), its arguments (one pydantic "
                "model), and types the bot or its plugin provides (settings, services, "
                "PluginStore)"
            )
    return _Binding(ctx_param, args_param, args_model, tuple(deps))


@dataclass(frozen=True, slots=True)
class ToolOptions:
    """What `@tool_function` says of a handler; the tool is built from them when its
    plugin (or a registry) takes the handler, not when the module is imported."""

    name: str | None = None
    description: str | None = None
    scope: Scope = "both"
    admin_only: bool = False
    examples: tuple[str | Example, ...] = ()
    timeout: float | None = None
    effect: Effect = "write"
    for_model: bool = True
    command: str | None = None
    localns: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)


def builtin_provides(kind: type[Any]) -> bool:
    """Whether the bot itself may provide `kind` (see `function_calls.provided`)."""
    from groupmate.function_calls.provided import BUILTIN_TYPES  # it imports this module

    return kind in BUILTIN_TYPES


def write_types() -> frozenset[type[Any]]:
    """The types that can change the bot's state (see `function_calls.provided`)."""
    from groupmate.function_calls.provided import WRITE_TYPES  # it imports this module

    return WRITE_TYPES


def _check_effect(name: str, effect: Effect, deps: Sequence[Dependency]) -> None:
    """A tool that may change state says so: the policy keys on `effect`, and only
    writes are audited, so a "read" tool holding a writer would change state unseen."""
    if effect == "write":
        return
    for dependency in deps:
        if dependency.kind in write_types():
            raise ToolDefinitionError(
                f"tool {name!r}: parameter {dependency.param!r} "
                f"({dependency.kind.__name__}) can change the bot's state, but the tool "
                f'is declared effect="{effect}". Ask for the read-only ReminderReader '
                'instead, or declare effect="write"'
            )


def build_tool(
    handler: Handler,
    *,
    options: ToolOptions | None = None,
    provides: Callable[[type[Any]], bool] = builtin_provides,
    plugin: str = "",
    checked: bool = False,
    **option_values: Any,
) -> Tool:
    """Derive a Tool from a handler's signature; raises ToolDefinitionError when it can't.

    The options are a `ToolOptions` or its fields as keywords (`localns` resolves string
    annotations that name classes local to a function); `provides` says which types
    parameters may ask for besides the context and the arguments. `checked`: its
    argument schemas are known to be valid JSON Schema (a built-in tool's).
    """
    opts = options if options is not None else ToolOptions(**option_values)
    tool_name = str(opts.name or getattr(handler, "__name__", ""))
    if not TOOL_NAME.fullmatch(tool_name):
        raise ToolDefinitionError(
            f"invalid tool name {tool_name!r}: use 1 to 64 ASCII letters, digits, '_' or '-' "
            "(the OpenAI API's rule)"
        )
    if opts.scope not in SCOPES:
        raise ToolDefinitionError(f"tool {tool_name!r}: scope must be one of {SCOPES}")
    if opts.timeout is not None and opts.timeout <= 0:
        raise ToolDefinitionError(f"tool {tool_name!r}: timeout must be positive")
    if opts.effect not in EFFECTS:
        raise ToolDefinitionError(f"tool {tool_name!r}: effect must be one of {EFFECTS}")
    if opts.command is not None and not COMMAND_NAME.fullmatch(opts.command):
        raise ToolDefinitionError(
            f"tool {tool_name!r}: command must be 1 to 32 lowercase letters, digits or '_', "
            "starting with a letter (it is typed as /command)"
        )
    text = opts.description or inspect.getdoc(handler) or ""
    if not text.strip():
        raise ToolDefinitionError(
            f"tool {tool_name!r} needs a description= or a docstring: the model chooses by it"
        )
    binding = _bind_parameters(handler, tool_name, opts.localns, provides)
    _check_effect(tool_name, opts.effect, binding.deps)
    if not plugin and any(dep.kind is PluginStore for dep in binding.deps):
        raise ToolDefinitionError(
            f"tool {tool_name!r}: a PluginStore is its plugin's; load the tool as a plugin "
            "(the config's `plugins:`) to have one"
        )
    parameters = model_parameters_schema(binding.args_model)
    compact = model_parameters_schema(binding.args_model, "compact")
    validator, compact_validator = tool_validators(
        tool_name, parameters, compact, binding.args_model, checked
    )
    worked = tuple(item if isinstance(item, Example) else Example(item) for item in opts.examples)
    for example in worked:
        _check_example(tool_name, example, (validator, compact_validator))
    return Tool(
        name=tool_name,
        description=" ".join(text.split()),
        handler=handler,
        args_model=binding.args_model,
        parameters=parameters,
        compact_parameters=compact,
        scope=opts.scope,
        admin_only=opts.admin_only,
        examples=worked,
        timeout=opts.timeout,
        strict_compatible=is_strict_compatible(parameters),
        validator=validator,
        compact_validator=compact_validator,
        ctx_param=binding.ctx_param,
        args_param=binding.args_param,
        is_async=inspect.iscoroutinefunction(handler),
        deps=binding.deps,
        plugin=plugin,
        effect=opts.effect,
        for_model=opts.for_model,
        command=opts.command,
    )


def tool_validators(
    name: str, full: JsonSchema, compact: JsonSchema, model: type[BaseModel], checked: bool = False
) -> tuple[ArgumentValidator, ArgumentValidator]:
    """The validators of both schema views; ToolDefinitionError (one line) if unusable."""
    try:
        return (
            ArgumentValidator(full, model, checked=checked),
            ArgumentValidator(compact, model, null_means_absent=True, checked=checked),
        )
    except SchemaError as exc:  # its str() is a page long
        problem = f"{exc.message} (at {'/'.join(map(str, exc.path)) or 'the top'})"
        raise ToolDefinitionError(f"tool {name!r}: invalid argument schema: {problem}") from exc
    except Exception as exc:
        raise ToolDefinitionError(f"tool {name!r}: invalid argument schema: {exc}") from exc


def _check_example(
    tool_name: str, example: Example, validators: Sequence[ArgumentValidator]
) -> None:
    if example.arguments is None:
        return
    for validator in validators:
        try:
            validator.validate(dict(example.arguments))
        except InvalidArgumentsError as exc:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: the example {example.said!r} has invalid arguments: {exc}"
            ) from None


TOOL_MARK = "__groupmate_tool__"


def tool_options(handler: object) -> ToolOptions | None:
    """The options `@tool_function` marked `handler` with, if it did."""
    found = getattr(handler, TOOL_MARK, None)
    return found if isinstance(found, ToolOptions) else None


def tool_from(
    handler: Handler,
    *,
    provides: Callable[[type[Any]], bool] = builtin_provides,
    plugin: str = "",
    checked: bool = False,
) -> Tool:
    """The tool of a handler `@tool_function` marked; ToolDefinitionError otherwise."""
    options = tool_options(handler)
    if options is None:
        what = getattr(handler, "__qualname__", repr(handler))
        raise ToolDefinitionError(f"{what} is not marked with @tool_function")
    return build_tool(handler, options=options, provides=provides, plugin=plugin, checked=checked)
