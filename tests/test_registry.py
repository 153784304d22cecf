from __future__ import annotations

import threading
from typing import Any

import pytest
from pydantic import BaseModel, Field

from groupmate.function_calls import (
    ChatType,
    DuplicateToolError,
    FunctionResult,
    MessageContext,
    NoArguments,
    ToolDefinitionError,
    ToolInvoker,
    ToolRegistry,
    UnknownToolError,
    tool_function,
)
from groupmate.function_calls.handlers import builtin_tools
from tests.conftest import make_ctx


class CityArgs(BaseModel):
    city: str = Field(..., description="City name, e.g. Berlin")


def test_decorator_registers_and_returns_the_function_unchanged(registry: ToolRegistry) -> None:
    async def weather(ctx: MessageContext, args: CityArgs) -> FunctionResult:
        return FunctionResult.for_model({"city": args.city})

    decorated = tool_function(
        name="weather",
        description="Current weather for a city",
        examples=["weather in Berlin?"],
        registry=registry,
    )(weather)

    assert decorated is weather
    tool = registry.get("weather")
    assert tool.args_model is CityArgs
    assert tool.description == "Current weather for a city"
    assert tool.parameters["properties"]["city"]["description"] == "City name, e.g. Berlin"
    assert "weather in Berlin?" in tool.definition()["function"]["description"]
    assert "weather" not in builtin_tools()


def test_name_and_description_default_to_function_name_and_docstring(
    registry: ToolRegistry,
) -> None:
    @tool_function(registry=registry)
    def roll_dice(ctx: MessageContext) -> FunctionResult:
        """Roll a six-sided die.

        Returns a number from 1 to 6.
        """
        return FunctionResult.for_model(4)

    tool = registry.get("roll_dice")
    assert tool.description == "Roll a six-sided die. Returns a number from 1 to 6."


def test_duplicate_name_fails_at_registration(registry: ToolRegistry) -> None:
    @tool_function(name="ping", description="Ping", registry=registry)
    async def first(ctx: MessageContext) -> FunctionResult:
        return FunctionResult.direct("pong")

    with pytest.raises(DuplicateToolError, match="'ping' is already registered"):

        @tool_function(name="ping", description="Ping again", registry=registry)
        async def second(ctx: MessageContext) -> FunctionResult:
            return FunctionResult.direct("pong")

    assert registry.get("ping").handler is first


def test_handler_without_args_gets_an_empty_object_schema(registry: ToolRegistry) -> None:
    @tool_function(description="No arguments", registry=registry)
    async def noop(ctx: MessageContext) -> FunctionResult:
        return FunctionResult.direct("ok")

    tool = registry.get("noop")
    assert tool.args_model is NoArguments
    assert tool.parameters == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    assert tool.definition()["function"]["strict"] is True


def test_ctx_never_appears_in_the_schema(registry: ToolRegistry) -> None:
    @tool_function(description="Weather", registry=registry)
    async def weather(ctx: MessageContext, args: CityArgs) -> FunctionResult:
        return FunctionResult.for_model(None)

    assert set(registry.get("weather").parameters["properties"]) == {"city"}
    assert "ctx" not in str(registry.get("weather").definition())


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def h(ctx, other: int):\n    'Doc.'", "parameter 'other'"),
        ("def h(ctx, *rest):\n    'Doc.'", r"\*args"),
        ("def h(ctx): ...", "needs a description"),
    ],
)
def test_bad_handler_signatures_fail_at_registration(
    registry: ToolRegistry, source: str, message: str
) -> None:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    with pytest.raises(ToolDefinitionError, match=message):
        registry.tool()(namespace["h"])
    assert len(registry) == 0


@pytest.mark.parametrize("name", ["has space", "x" * 65, "semi;colon", "<lambda>", "café", "工具"])
def test_invalid_tool_names_are_rejected(registry: ToolRegistry, name: str) -> None:
    async def handler(ctx: MessageContext) -> FunctionResult:
        return FunctionResult.direct("")

    handler.__name__ = name
    with pytest.raises(ToolDefinitionError, match="tool name"):
        registry.tool(description="d")(handler)
    assert len(registry) == 0


def test_invalid_scope_is_rejected(registry: ToolRegistry) -> None:
    with pytest.raises(ToolDefinitionError, match="scope"):

        @tool_function(description="d", scope="everywhere", registry=registry)  # type: ignore[arg-type]
        async def h(ctx: MessageContext) -> FunctionResult:
            return FunctionResult.direct("")


@pytest.mark.parametrize(
    ("chat_type", "is_admin", "expected"),
    [
        ("group", False, {"anywhere", "group_only"}),
        ("group", True, {"anywhere", "group_only", "admin_group"}),
        ("private", False, {"anywhere", "private_only"}),
        ("private", True, {"anywhere", "private_only"}),
    ],
)
def test_visibility_follows_scope_and_admin_flag(
    registry: ToolRegistry, chat_type: ChatType, is_admin: bool, expected: set[str]
) -> None:
    for name, scope, admin in [
        ("anywhere", "both", False),
        ("group_only", "group", False),
        ("private_only", "private", False),
        ("admin_group", "group", True),
    ]:
        registry.tool(name=name, description=name, scope=scope, admin_only=admin)(  # type: ignore[arg-type]
            lambda ctx: None
        )
    ctx = make_ctx(chat_type=chat_type, is_admin=is_admin)
    assert {tool.name for tool in ToolInvoker(registry).offered(ctx)} == expected


def test_unknown_tool_lookup_lists_available(registry: ToolRegistry) -> None:
    registry.tool(name="alpha", description="a")(lambda ctx: None)
    with pytest.raises(UnknownToolError, match="available tools: alpha"):
        registry.get("beta")


async def test_sync_handler_runs_in_a_worker_thread(registry: ToolRegistry) -> None:
    seen: list[str] = []

    @tool_function(description="Which thread?", registry=registry)
    def where(ctx: MessageContext, args: CityArgs) -> FunctionResult:
        seen.append(threading.current_thread().name)
        return FunctionResult.for_model({"city": args.city})

    tool = registry.get("where")
    result = await tool.invoke(make_ctx(), tool.validate('{"city": "Köln"}'))
    assert result.data == {"city": "Köln"}
    assert seen and seen[0] != threading.main_thread().name


async def test_plain_return_values_become_data_for_the_model(registry: ToolRegistry) -> None:
    @tool_function(description="Numbers", registry=registry)
    async def numbers(ctx: MessageContext) -> list[int]:
        return [1, 2, 3]

    tool = registry.get("numbers")
    result = await tool.invoke(make_ctx(), tool.validate("{}"))
    assert result == FunctionResult(data=[1, 2, 3])
    assert not result.is_direct


def test_merged_registry_keeps_both_and_rejects_clashes() -> None:
    first, second = ToolRegistry(), ToolRegistry()
    first.tool(name="a", description="a")(lambda ctx: None)
    second.tool(name="b", description="b")(lambda ctx: None)
    assert first.merged(second).names() == ["a", "b"]
    second.tool(name="a", description="again")(lambda ctx: None)
    with pytest.raises(DuplicateToolError):
        first.merged(second)
