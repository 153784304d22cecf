from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, Literal

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

import groupmate.function_calls.handlers  # noqa: F401  (registers the built-in tools)
from groupmate.function_calls.handlers import BUILTIN_MODULES, builtin_tools
from groupmate.function_calls.plugins import PluginSpec, load_plugins
from groupmate.function_calls.schema import (
    COMPACT_HIDDEN,
    COMPACT_REQUIRED,
    is_strict_compatible,
    model_parameters_schema,
)
from groupmate.function_calls.tool_building import build_tool


class Color(StrEnum):
    RED = "red"
    GREEN = "green"


class Address(BaseModel):
    """A postal address."""

    street: str = Field(description="Street and number")
    title: str = Field(description="A property literally named title")


class Order(BaseModel):
    """An order."""

    color: Color = Field(description="Paint color")
    size: Literal["s", "m", "l"] = "m"
    ship_to: Address
    gift_to: Address | None = None
    quantity: int = Field(ge=1, le=99, description="How many")


class TreeNode(BaseModel):
    label: str
    children: list[TreeNode] = []


class Forest(BaseModel):
    trees: list[TreeNode]


def _walk(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every subschema with its path, skipping property-name maps' keys."""
    found: list[tuple[str, dict[str, Any]]] = []
    if isinstance(node, dict):
        found.append((path, node))
        for key, value in node.items():
            if key in ("properties", "$defs"):
                for name, sub in value.items():
                    found.extend(_walk(sub, f"{path}/{key}/{name}"))
            elif isinstance(value, dict | list):
                found.extend(_walk(value, f"{path}/{key}"))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found.extend(_walk(item, f"{path}/{index}"))
    return found


def test_schema_has_no_titles_and_closed_objects_and_keeps_descriptions_and_enums() -> None:
    schema = model_parameters_schema(Order)
    for path, sub in _walk(schema):
        assert "title" not in sub, path
        if sub.get("type") == "object" or "properties" in sub:
            assert sub["additionalProperties"] is False, path
    props = schema["properties"]
    assert props["color"] == {
        "description": "Paint color",
        "enum": ["red", "green"],
        "type": "string",
    }
    assert props["size"]["enum"] == ["s", "m", "l"]
    assert props["quantity"]["minimum"] == 1 and props["quantity"]["maximum"] == 99
    # Address is used twice: kept once in $defs rather than repeated.
    assert props["ship_to"] == {"$ref": "#/$defs/Address"}
    assert props["gift_to"]["anyOf"] == [{"$ref": "#/$defs/Address"}, {"type": "null"}]
    # A field called "title" is data, not a schema title, and must survive.
    assert set(schema["$defs"]["Address"]["properties"]) == {"street", "title"}
    assert sorted(schema["required"]) == ["color", "quantity", "ship_to"]
    Draft202012Validator.check_schema(schema)


def test_definitions_used_once_are_inlined() -> None:
    class Shipment(BaseModel):
        ship_to: Address = Field(description="Where to")

    schema = model_parameters_schema(Shipment)
    assert "$defs" not in schema and "$ref" not in json.dumps(schema)
    assert schema["properties"]["ship_to"]["description"] == "Where to"
    assert schema["properties"]["ship_to"]["required"] == ["street", "title"]


def test_recursive_models_keep_valid_defs() -> None:
    schema = model_parameters_schema(Forest)
    assert set(schema["$defs"]) == {"TreeNode"}
    assert schema["properties"]["trees"]["items"] == {"$ref": "#/$defs/TreeNode"}
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    good = {"trees": [{"label": "a", "children": [{"label": "b"}]}]}
    bad = {"trees": [{"label": "a", "children": [{"label": 3}]}]}
    assert validator.is_valid(good)
    assert not validator.is_valid(bad)


def test_optional_scalars_fold_into_a_type_list() -> None:
    class Args(BaseModel):
        limit: int | None = None

    schema = model_parameters_schema(Args)
    assert schema["properties"]["limit"] == {"type": ["integer", "null"], "default": None}


@pytest.mark.parametrize(
    ("model", "strict"),
    [
        (Address, True),  # all fields required, no unsupported keywords
        (Forest, False),  # children has a default, so not every field is required
        (Order, False),
    ],
)
def test_strict_only_where_the_schema_allows_it(model: type[BaseModel], strict: bool) -> None:
    assert is_strict_compatible(model_parameters_schema(model)) is strict


def test_strict_rejects_unsupported_keywords() -> None:
    class Args(BaseModel):
        name: str = Field(min_length=2)

    assert not is_strict_compatible(model_parameters_schema(Args))


def test_builtin_tool_schemas_are_smaller_than_pydantic_raw_output() -> None:
    builtins = list(builtin_tools())
    assert builtins, "no built-in tools registered"
    shown = raw = 0
    for tool in builtins:
        shown += len(json.dumps(tool.parameters, separators=(",", ":")))
        raw += len(json.dumps(tool.args_model.model_json_schema(), separators=(",", ":")))
    assert shown < raw


@pytest.mark.parametrize("model", [Order, Forest, Address])
def test_representative_schemas_are_smaller_than_raw(model: type[BaseModel]) -> None:
    shown = json.dumps(model_parameters_schema(model), separators=(",", ":"))
    raw = json.dumps(model.model_json_schema(), separators=(",", ":"))
    assert len(shown) < len(raw)


def test_free_form_objects_are_never_strict() -> None:
    class Args(BaseModel):
        labels: dict[str, int]

    class Loose(BaseModel):
        extra: dict[str, Any]

    for model in (Args, Loose):
        assert not is_strict_compatible(model_parameters_schema(model))


class Meeting(BaseModel):
    """Two ways to say when: words for small models, fields for strong ones."""

    when: str | None = Field(None, description="in words", json_schema_extra=COMPACT_REQUIRED)
    hour: int | None = Field(None, ge=0, le=23, json_schema_extra=COMPACT_HIDDEN)
    topic: str
    room: str | None = Field(None, description="where")
    seats: int = 4


def test_the_full_view_shows_every_field_and_no_marker() -> None:
    schema = model_parameters_schema(Meeting)
    assert list(schema["properties"]) == ["when", "hour", "topic", "room", "seats"]
    assert schema["required"] == ["topic"]
    assert "x-compact" not in json.dumps(schema)
    assert schema["properties"]["room"]["type"] == ["string", "null"]


def test_the_compact_view_hides_fields_requires_marked_ones_and_drops_null() -> None:
    schema = model_parameters_schema(Meeting, "compact")
    assert list(schema["properties"]) == ["when", "topic", "room", "seats"]
    assert schema["required"] == ["topic", "when"]
    assert schema["properties"]["when"] == {"type": "string", "description": "in words"}
    assert schema["properties"]["room"] == {"type": "string", "description": "where"}
    assert schema["properties"]["seats"] == {"default": 4, "type": "integer"}
    assert "x-compact" not in json.dumps(schema)
    Draft202012Validator.check_schema(schema)


def test_reminder_tools_show_small_models_only_words_for_the_time() -> None:
    shown = {tool.name: tool.compact_parameters for tool in builtin_tools()}
    assert list(shown["reminder_set"]["properties"]) == ["when", "content", "who"]
    assert sorted(shown["reminder_set"]["required"]) == ["content", "when"]
    assert list(shown["reminder_update"]["properties"]) == ["reminder_id", "when", "content", "who"]
    assert list(shown["reminder_snooze"]["properties"]) == ["reminder_id", "when"]
    # The full view keeps the structured fields for strong models.
    full = builtin_tools().get("reminder_set").parameters["properties"]
    assert {"type", "time", "in_minutes", "weekday", "day", "interval"} <= set(full)


def test_every_builtin_tool_schema_is_valid_json_schema() -> None:
    """What start does not check again (a built-in's schemas are groupmate's own)."""
    for tool in builtin_tools():
        Draft202012Validator.check_schema(tool.parameters)
        Draft202012Validator.check_schema(tool.compact_parameters)


class Note(BaseModel):
    text: str = Field(description="what to note")


async def note(args: Note) -> str:
    """Note something down."""
    return args.text


def test_builtin_tools_load_without_their_schemas_checked_and_others_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked: list[Any] = []
    monkeypatch.setattr(Draft202012Validator, "check_schema", checked.append)
    loaded = load_plugins([PluginSpec(module=BUILTIN_MODULES["core"])], builtin=True)
    assert not loaded.failed and len(loaded.toolset()) > 0
    assert checked == []
    build_tool(note)  # a plugin's tool: both of its views checked
    assert len(checked) == 2
