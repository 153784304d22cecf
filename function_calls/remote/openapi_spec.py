"""An OpenAPI document's operations, each as the tool it becomes: where each argument
goes in the request, and one argument schema with the spec's `$ref`s resolved."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

_METHODS = ("get", "post", "put", "patch", "delete")
_COMPONENT_REF = re.compile(r'"#/components/schemas/')
_PARAMETER_REF = "#/components/parameters/"
_BODY = "body"

ParameterPlace = Literal["path", "query", "body"]


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation of the spec, as a tool: where each argument goes in the request."""

    operation_id: str
    method: str
    path: str
    description: str
    schema: dict[str, Any]
    places: Mapping[str, ParameterPlace]
    whole_body: bool  # the JSON body is the `body` argument itself, not its properties


def operations(spec: Mapping[str, Any]) -> Iterable[Operation | str]:
    """The spec's operations; a string says why one was left out."""
    components = spec.get("components") or {}
    if not isinstance(components, Mapping):
        components = {}
    defs = dict(components.get("schemas") or {})
    for path, item in (spec.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            continue
        shared = list(item.get("parameters") or [])
        for method in _METHODS:
            operation = item.get(method)
            if not isinstance(operation, Mapping):
                continue
            try:
                yield _operation(path, method, operation, shared, components, defs)
            except Exception as exc:  # a spec is outside data: any shape may come
                yield f"{method.upper()} {path}: {type(exc).__name__}: {exc}"


def _operation(
    path: str,
    method: str,
    operation: Mapping[str, Any],
    shared: list[Any],
    components: Mapping[str, Any],
    defs: dict[str, Any],
) -> Operation:
    operation_id = operation.get("operationId") or re.sub(r"\W+", "_", f"{method}{path}").strip("_")
    properties: dict[str, Any] = {}
    required: list[str] = []
    places: dict[str, ParameterPlace] = {}
    by_name: dict[tuple[str, str], Any] = {}
    for parameter in [*shared, *(operation.get("parameters") or [])]:
        resolved = _parameter(parameter, components)
        by_name[(resolved.get("name", ""), resolved.get("in", ""))] = resolved  # op overrides
    for (name, place), parameter in by_name.items():
        if place not in ("path", "query"):
            continue  # headers and cookies are the operator's (`headers`), not the model's
        if name in properties:
            raise ValueError(f"{name!r} is both a path and a query parameter")
        parameter_schema = dict(parameter.get("schema") or {"type": "string"})
        if parameter.get("description"):
            parameter_schema.setdefault("description", parameter["description"])
        properties[name] = parameter_schema
        places[name] = "path" if place == "path" else "query"
        if parameter.get("required") or place == "path":
            required.append(name)
    whole_body = False
    body = _json_body(operation, components)
    if body is not None:
        body_schema, body_required = body
        target = _resolve_schema(body_schema, defs)
        body_properties = (
            target.get("properties") if target.get("type", "object") == "object" else None
        )
        if isinstance(body_properties, Mapping) and not set(body_properties) & set(properties):
            for name, property_schema in body_properties.items():
                properties[name] = property_schema
                places[name] = "body"
            required.extend(target.get("required") or [])
        else:  # an array, a scalar, or names that clash with parameters
            body_name = next(n for n in (_BODY, "request_body", "_body") if n not in properties)
            properties[body_name] = body_schema
            places[body_name] = "body"
            whole_body = True
            if body_required:
                required.append(body_name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(dict.fromkeys(required))
    if defs:
        schema["$defs"] = defs
    words = [operation.get("summary"), operation.get("description")]
    description = " ".join(str(w).strip() for w in words if w) or f"{method.upper()} {path}"
    # The spec's "#/components/schemas/X" are the schema's "#/$defs/X".
    # (default=str: a YAML spec's unquoted dates in examples are not JSON)
    schema = json.loads(_COMPONENT_REF.sub('"#/$defs/', json.dumps(schema, default=str)))
    return Operation(operation_id, method, path, description, schema, places, whole_body)


def _parameter(parameter: Any, components: Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(parameter, Mapping) and isinstance(parameter.get("$ref"), str):
        ref = parameter["$ref"]
        name = ref.removeprefix(_PARAMETER_REF)
        found = (components.get("parameters") or {}).get(name)
        if not ref.startswith(_PARAMETER_REF) or not isinstance(found, Mapping):
            raise ValueError(f"unresolvable parameter {ref!r}")
        return found
    if not isinstance(parameter, Mapping):
        raise ValueError("a parameter is not an object")
    return parameter


def _json_body(
    operation: Mapping[str, Any], components: Mapping[str, Any]
) -> tuple[dict[str, Any], bool] | None:
    body = operation.get("requestBody")
    if not isinstance(body, Mapping):
        return None
    ref = body.get("$ref")
    if isinstance(ref, str):
        body = (components.get("requestBodies") or {}).get(ref.rsplit("/", 1)[-1]) or {}
    content = body.get("content") or {}
    media = content.get("application/json")
    if not isinstance(media, Mapping):
        if content:
            raise ValueError(f"its body is {', '.join(content)}, not JSON")
        return None
    return dict(media.get("schema") or {}), bool(body.get("required"))


def _resolve_schema(schema: Mapping[str, Any], defs: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        found = defs.get(ref.rsplit("/", 1)[-1])
        if not isinstance(found, Mapping):
            raise ValueError(f"unresolvable schema {ref!r}")
        return found
    return schema
