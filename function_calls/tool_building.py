"""Building a `Tool`: `build_tool` derives one from a handler's signature and its
`ToolOptions` (what `@tool_function` said of it), refusing with ToolDefinitionError what
can't be a tool; `tool_from` builds the tool of a handler `@tool_function` marked."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from jsonschema.exceptions import SchemaError
from pydantic import BaseModel

from groupmate.function_calls.context import CommandText, MessageContext
from groupmate.function_calls.deps import Dependency, optional_of
from groupmate.function_calls.errors import ToolDefinitionError
from groupmate.function_calls.plugin_store import PluginStore
from groupmate.function_calls.schema import (
    JsonSchema,
    is_strict_compatible,
    model_parameters_schema,
)
from groupmate.function_calls.tools import (
    COMMAND_NAME,
    TOOL_NAME,
    Example,
    Handler,
    NoArguments,
    Tool,
    write_types,
)
from groupmate.function_calls.validation import ArgumentValidator, InvalidArgumentsError
from groupmate.function_calls.vocabulary import EFFECTS, SCOPES, Effect, Scope


@dataclass(frozen=True, slots=True)
class _Binding:
    """Which parameter of a handler takes what (read once, when the tool is built)."""

    ctx_param: str | None
    args_param: str | None
    args_model: type[BaseModel]
    deps: tuple[Dependency, ...]
    text_param: str | None = None


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
    text_param: str | None = None
    for param in inspect.signature(handler).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ToolDefinitionError(f"tool {name!r}: *args/**kwargs are not supported")
        annotation = hints.get(param.name)
        kind, optional = optional_of(annotation)
        provided = isinstance(kind, type) and provides(kind)
        if kind is CommandText and not optional and text_param is None:
            text_param = param.name
        elif annotation is MessageContext or (
            param.name == "ctx" and not provided and not ctx_param
        ):
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
                "model) or its command's words (CommandText), and types the bot or its "
                "plugin provides (settings, services, PluginStore)"
            )
    if text_param is not None and args_param is not None:
        raise ToolDefinitionError(
            f"tool {name!r}: it reads its command's words itself ({text_param}: "
            f"CommandText), so it takes no arguments model ({args_param}); use one or "
            "the other"
        )
    return _Binding(ctx_param, args_param, args_model, tuple(deps), text_param)


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


def check_effect(name: str, effect: Effect, deps: Sequence[Dependency]) -> None:
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
    if binding.text_param is not None and opts.command is None:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: a CommandText parameter is the words of its command; "
            'give the tool a command= ("/name words")'
        )
    check_effect(tool_name, opts.effect, binding.deps)
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
        # A tool reading its command's words has nothing for the model to fill.
        for_model=opts.for_model and binding.text_param is None,
        command=opts.command,
        text_param=binding.text_param,
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
