"""Compact, model-facing JSON Schemas built from Pydantic models.

Each argument model gives two views of its schema:

- ``full``: every field, nullable optionals as ``anyOf [..., null]``, the shape OpenAI's
  strict mode wants;
- ``compact``: for small models. Fields marked ``COMPACT_HIDDEN`` are left out (a 1.5B
  model given both ``when`` and six structured time fields mixed them up), fields marked
  ``COMPACT_REQUIRED`` are required, and optionals are shown as their plain type.

A view's schema is the one its arguments are validated against.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel

JsonSchema = dict[str, Any]
SchemaView = Literal["full", "compact"]

# Put in a field's `json_schema_extra`; neither view shows the marker itself.
_MARK: Final = "x-compact"
COMPACT_HIDDEN: Final[dict[str, Any]] = {_MARK: "hidden"}
COMPACT_REQUIRED: Final[dict[str, Any]] = {_MARK: "required"}

_SCHEMA_MAPS = frozenset({"properties", "$defs", "patternProperties", "dependentSchemas"})
_SCHEMA_LISTS = frozenset({"anyOf", "allOf", "oneOf", "prefixItems"})
_SCHEMA_VALUES = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "contains",
        "propertyNames",
        "if",
        "then",
        "else",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)
# Keywords OpenAI's strict mode accepts; anything else means the tool is sent non-strict.
_STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "description",
        "items",
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    }
)
_REF_PREFIX = "#/$defs/"


def _refs_in(node: Any) -> Counter[str]:
    found: Counter[str] = Counter()
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            found[ref.removeprefix(_REF_PREFIX)] += 1
        for value in node.values():
            found += _refs_in(value)
    elif isinstance(node, list):
        for item in node:
            found += _refs_in(item)
    return found


def _reachable(root: Mapping[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """The definitions `root` uses, directly or through other definitions."""
    names: set[str] = set()
    pending = list(_refs_in(root))
    while pending:
        name = pending.pop()
        if name in names or name not in defs:
            continue
        names.add(name)
        pending.extend(_refs_in(defs[name]))
    return {name: body for name, body in defs.items() if name in names}


def _every_ref(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield ref
        for value in node.values():
            yield from _every_ref(value)
    elif isinstance(node, list):
        for item in node:
            yield from _every_ref(item)


def _recursive_defs(defs: Mapping[str, Any]) -> set[str]:
    """Definitions that reach themselves through `$ref`s and so cannot be inlined."""
    direct = {name: _refs_in(body) for name, body in defs.items()}
    recursive = set()
    for name in defs:
        seen: set[str] = set()
        stack = list(direct[name])
        while stack:
            current = stack.pop()
            if current == name:
                recursive.add(name)
                break
            if current in seen or current not in direct:
                continue
            seen.add(current)
            stack.extend(direct[current])
    return recursive


class _Inliner:
    """Inlines `$ref`s used once; shared and recursive definitions stay in `$defs`.

    Inlining a definition used in several places would repeat it and grow the schema.
    """

    def __init__(
        self, root: Mapping[str, Any], defs: Mapping[str, Any], *, close_objects: bool = True
    ) -> None:
        self._defs = defs
        self._close = close_objects
        uses = _refs_in(root) + _refs_in(dict(defs))
        shared = {name for name, count in uses.items() if count > 1 and name in defs}
        self._kept_names = _recursive_defs(defs) | shared

    def kept_defs(self) -> JsonSchema:
        return {name: self.schema(self._defs[name]) for name in sorted(self._kept_names)}

    def schema(self, node: Mapping[str, Any]) -> JsonSchema:
        out: JsonSchema = {}
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            name = ref.removeprefix(_REF_PREFIX)
            if name not in self._kept_names:
                out.update(self.schema(self._defs[name]))
                node = {k: v for k, v in node.items() if k != "$ref"}
        for key, value in node.items():
            if key == "title":
                continue
            if key in _SCHEMA_MAPS and isinstance(value, Mapping):
                out[key] = {name: self.schema(sub) for name, sub in value.items()}
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self.schema(sub) for sub in value]
            elif key in _SCHEMA_VALUES and isinstance(value, Mapping):
                out[key] = self.schema(value)
            else:
                out[key] = value
        return _simplify(out, close=self._close)


def _simplify(node: JsonSchema, *, close: bool = True) -> JsonSchema:
    """Flatten single-branch `allOf` and fold type-only `anyOf` branches into a type list."""
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1:
        rest = {k: v for k, v in node.items() if k != "allOf"}
        node = {**all_of[0], **rest}
    any_of = node.get("anyOf")
    if isinstance(any_of, list) and all(
        isinstance(b, dict) and set(b) == {"type"} and isinstance(b["type"], str) for b in any_of
    ):
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        node = {"type": [b["type"] for b in any_of], **rest}
    if close and (node.get("type") == "object" or "properties" in node):
        node.setdefault("additionalProperties", False)
    return node


def model_parameters_schema(model: type[BaseModel], view: SchemaView = "full") -> JsonSchema:
    """The JSON Schema the model is shown for a handler's argument model.

    No titles, `$defs` inlined (kept only for recursive models), closed objects,
    descriptions, enums, constraints and defaults preserved.
    """
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    inliner = _Inliner(raw, defs)
    schema = inliner.schema(raw)
    # The tool's own description says what the arguments are for.
    schema.pop("description", None)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema.setdefault("additionalProperties", False)
    schema = _compact(schema) if view == "compact" else _unmarked(schema)
    kept = inliner.kept_defs()
    if kept:
        schema["$defs"] = kept
    return schema


def _unmarked(schema: JsonSchema) -> JsonSchema:
    properties = {
        name: {key: value for key, value in node.items() if key != _MARK}
        for name, node in schema["properties"].items()
    }
    return {**schema, "properties": properties}


def _compact(schema: JsonSchema) -> JsonSchema:
    """The top-level properties for a small model: hidden ones out, marked ones required,
    optionals without their null branch."""
    required = list(schema.get("required", ()))
    properties: JsonSchema = {}
    for name, node in schema["properties"].items():
        mark = node.get(_MARK)
        if mark == "hidden":
            continue
        if mark == "required" and name not in required:
            required.append(name)
        properties[name] = _without_null({k: v for k, v in node.items() if k != _MARK})
    out = {**schema, "properties": properties}
    out.pop("required", None)
    if required:
        out["required"] = [name for name in required if name in properties]
    return out


def _without_null(node: JsonSchema) -> JsonSchema:
    """`anyOf [X, null]` with default null becomes X: a left-out argument is the null."""
    if node.get("default", ...) is not None:
        return node
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "default", "type")}
    any_of = node.get("anyOf")
    if isinstance(any_of, list):
        branches = [b for b in any_of if b != {"type": "null"}]
        if len(branches) == 1 and isinstance(branches[0], dict):
            return {**branches[0], **rest}
    types = node.get("type")
    if isinstance(types, list) and "null" in types:
        kept = [t for t in types if t != "null"]
        return {"type": kept[0] if len(kept) == 1 else kept, **rest}
    return node


def is_strict_compatible(schema: Any) -> bool:
    """Whether OpenAI's strict structured-output rules accept `schema` unchanged."""
    if isinstance(schema, list):
        return all(is_strict_compatible(item) for item in schema)
    if not isinstance(schema, dict):
        return True
    if not set(schema) <= _STRICT_KEYWORDS:
        return False
    types = schema.get("type")
    is_object = types == "object" or (isinstance(types, list) and "object" in types)
    if is_object and (
        "properties" not in schema or schema.get("additionalProperties") is not False
    ):
        # Strict mode needs closed objects with declared properties: no free-form dicts.
        return False
    if "properties" in schema:
        props = schema["properties"]
        if schema.get("additionalProperties") is not False:
            return False
        if set(schema.get("required", ())) != set(props):
            return False
        if not all(is_strict_compatible(sub) for sub in props.values()):
            return False
    for key in ("items", "anyOf", "$defs"):
        value = schema.get(key)
        if isinstance(value, dict) and key == "$defs":
            if not all(is_strict_compatible(sub) for sub in value.values()):
                return False
        elif value is not None and not is_strict_compatible(value):
            return False
    return True


_LEGACY_REF_PREFIX = "#/definitions/"


def external_parameters_schema(raw: Any) -> JsonSchema:
    """A server's own argument schema (an MCP `inputSchema`, merged OpenAPI parameters),
    cleaned like ours: no titles, `$defs` inlined, a closed top level. Raises ValueError for
    a schema that is not an object schema or whose `$ref`s point outside it.
    """
    if not isinstance(raw, Mapping):
        raise ValueError("the argument schema is not a JSON object")
    if raw.get("type", "object") != "object":
        raise ValueError(f"the argument schema has type {raw.get('type')!r}, not 'object'")
    # Older generators (and draft 7) keep shared pieces under "definitions".
    text = json.dumps(raw).replace(f'"{_LEGACY_REF_PREFIX}', f'"{_REF_PREFIX}')
    root: JsonSchema = json.loads(text)
    defs = {**root.pop("definitions", {}), **root.pop("$defs", {})}
    for key in ("$schema", "$id", "$comment"):
        root.pop(key, None)
    defs = _reachable(root, defs)  # an OpenAPI spec's components hold every operation's
    local = {f"{_REF_PREFIX}{name}" for name in defs}
    foreign = sorted((set(_every_ref(root)) | set(_every_ref(defs))) - local)
    if foreign:
        raise ValueError(f"the argument schema refers to {foreign}, which it does not define")
    # Nested objects keep the server's own rule for extra keys (a free-form `{"type":
    # "object"}` takes any); the top level is closed, as ours are, so that an invented
    # argument is reported to the model rather than passed on.
    inliner = _Inliner(root, defs, close_objects=False)
    schema = inliner.schema(root)
    schema.pop("description", None)  # the tool's own description says what they are for
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema.setdefault("additionalProperties", False)
    kept = inliner.kept_defs()
    if kept:
        schema["$defs"] = kept
    return schema
