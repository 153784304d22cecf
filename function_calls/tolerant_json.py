"""The tolerant JSON reader of prompt mode: one JSON-ish value decoded forgivingly.

Where a value ends (a quote-aware bracket scan), what it decodes to (JSON, then JSON5, then
a Python literal), and what the decoded value says as tool calls: the OpenAI shapes, a
``tool_calls`` wrapper, flattened or JSON-encoded arguments. It never guesses at broken
JSON; :mod:`function_calls.prompt_parser` finds the values in a reply and calls this.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import json5

__all__ = [
    "EXHAUSTED",
    "MAX_DEPTH",
    "TOO_DEEP",
    "MalformedCall",
    "ParsedCall",
    "is_clear_call",
    "load_json",
    "normalize_calls",
    "scan_value_end",
    "truncate_raw",
]


@dataclass(frozen=True, slots=True)
class ParsedCall:
    """One tool call: the tool name and its decoded arguments."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class MalformedCall:
    """A call the model clearly attempted but that could not be decoded."""

    raw: str  # the offending source text, truncated to ~300 chars
    problem: str  # short human-readable reason


_RAW_LIMIT: Final = 300
# Deeper values are not plausible tool arguments; the cap also bounds the scanner's work on
# bracket soup and keeps recursive checks far from the interpreter's recursion limit.
MAX_DEPTH: Final = 100
TOO_DEEP: Final = -1
EXHAUSTED: Final = -2
# Characters the bracket scanner has to look at; everything else is skipped in bulk.
_SCAN_RE: Final = re.compile(r"[\"'\\{}\[\]]")
_CLOSERS: Final = {"}": "{", "]": "["}
_ALIAS_PREFIXES: Final = ("functions.", "function.")


def scan_value_end(text: str, start: int, budget: list[int]) -> int | None:
    """Return the index just past the balanced ``{...}``/``[...]`` starting at ``start``.

    Quote-aware (``"`` and ``'`` with backslash escapes) so that braces, brackets and tags
    inside string values do not count. ``None`` if unbalanced or mismatched, ``TOO_DEEP``
    if nested deeper than ``MAX_DEPTH``.
    """
    stack: list[str] = []
    quote: str | None = None
    pos = start
    while (match := _SCAN_RE.search(text, pos)) is not None:
        budget[0] -= 1
        if budget[0] < 0:
            return EXHAUSTED
        char = match.group(0)
        pos = match.end()
        if quote is not None:
            if char == "\\":
                pos += 1  # skip the escaped character, whatever it is
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in "{[":
            stack.append(char)
            if len(stack) > MAX_DEPTH:
                return TOO_DEEP
        elif char in "}]":
            if not stack or stack.pop() != _CLOSERS[char]:
                return None
            if not stack:
                return pos
    return None


def load_json(source: str, *, tolerant: bool = True) -> tuple[Any, str | None]:
    """Decode JSON, then (if ``tolerant``) JSON5, then a Python literal.

    Returns ``(value, None)`` or ``(None, reason)``, the reason being strict JSON's complaint.
    """
    try:
        return json.loads(source), None
    except json.JSONDecodeError as exc:
        error = f"{exc.msg}: line {exc.lineno} column {exc.colno}"
    except (ValueError, RecursionError) as exc:
        error = str(exc)
    if not tolerant:
        return None, error
    try:
        return json5.loads(source), None
    except Exception:  # json5 raises assorted errors on garbage; strict json's message is kept
        pass
    try:
        with warnings.catch_warnings():
            # Backslashes that are fine in JSON are "invalid escape sequences" to Python.
            warnings.simplefilter("ignore")
            value = ast.literal_eval(source.strip())
    except Exception:  # SyntaxError, ValueError, MemoryError... all mean "not a literal"
        return None, error
    if _is_jsonish(value, 0):
        return value, None
    return None, error


def _is_jsonish(value: Any, depth: int) -> bool:
    """Whether a Python literal only uses JSON types (no sets, tuples, bytes...)."""
    if depth > MAX_DEPTH:
        return False
    if value is None or isinstance(value, str | int | float):
        return True
    if isinstance(value, list):
        return all(_is_jsonish(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(
            isinstance(key, str) and _is_jsonish(item, depth + 1) for key, item in value.items()
        )
    return False


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def is_clear_call(value: Any, known: Mapping[str, frozenset[str]]) -> bool:
    """Whether JSON found in free text is unmistakably a tool call (not data in prose)."""
    if isinstance(value, list):
        return bool(value) and all(_is_clear_call_object(item, known) for item in value)
    return _is_clear_call_object(value, known)


def _is_clear_call_object(value: Any, known: Mapping[str, frozenset[str]]) -> bool:
    if not isinstance(value, dict):
        return False
    if "name" not in value and isinstance(value.get("tool_calls"), list | dict):
        return True
    function = value.get("function")
    if "name" not in value and isinstance(function, dict):
        value = function
    # A tool *definition* (name, description, parameters schema) echoed back is not a call.
    if "description" in value:
        return False
    name = value.get("name")
    has_arguments = "arguments" in value or "parameters" in value
    if isinstance(name, str):
        if has_arguments:
            return True
        parameters = known.get(name)
        if parameters is None:
            return False
        return set(value) - {"name", "id", "type"} <= parameters
    if name is None and has_arguments:
        arguments = value.get("arguments", value.get("parameters"))
        if not isinstance(arguments, dict):
            return False
        nested = arguments.get("name")
        return isinstance(nested, str) and nested in known
    return False


def normalize_calls(
    value: Any, raw: str, known: Mapping[str, frozenset[str]]
) -> list[ParsedCall | MalformedCall]:
    """Turn a decoded value (object, list of objects, ``tool_calls`` wrapper) into results."""
    if isinstance(value, list):
        if len(value) == 1 and not isinstance(value[0], list):
            return normalize_calls(value[0], raw, known)
        return [_normalize_entry(item, _dump(item), known) for item in value]
    if isinstance(value, dict) and "name" not in value and "tool_calls" in value:
        entries = value["tool_calls"]
        if isinstance(entries, dict):
            entries = [entries]
        if not isinstance(entries, list):
            return [MalformedCall(truncate_raw(raw), "tool_calls must be an array")]
        if len(entries) == 1:
            return [_normalize_entry(entries[0], raw, known)]
        return [_normalize_entry(item, _dump(item), known) for item in entries]
    return [_normalize_entry(value, raw, known)]


def _normalize_entry(
    value: Any, raw: str, known: Mapping[str, frozenset[str]]
) -> ParsedCall | MalformedCall:
    """Validate one call object and resolve the common shape variations."""
    if not isinstance(value, dict):
        return MalformedCall(
            truncate_raw(raw), f"expected a JSON object with a tool name, got {_json_type(value)}"
        )
    function = value.get("function")
    if "name" not in value and isinstance(function, dict):
        value = function  # OpenAI shape: {"type": "function", "function": {...}}
    name = value.get("name")
    arguments: dict[str, Any] | None
    problem: str | None
    if "arguments" in value:
        arguments, problem = _coerce_arguments(value["arguments"])
    elif "parameters" in value:
        arguments, problem = _coerce_arguments(value["parameters"])
    else:
        # No arguments key: models sometimes flatten the arguments next to the name.
        arguments = {
            key: item
            for key, item in value.items()
            if key not in ("name", "id") and not (key == "type" and item == "function")
        }
        problem = None
    if arguments is None:
        return MalformedCall(truncate_raw(raw), problem or "invalid arguments")
    if name is None:
        nested = arguments.get("name")
        if not (isinstance(nested, str) and nested in known):
            return MalformedCall(truncate_raw(raw), "missing tool name")
        name = nested
        arguments = {key: item for key, item in arguments.items() if key != "name"}
    if not isinstance(name, str):
        return MalformedCall(
            truncate_raw(raw), f"tool name must be a string, got {_json_type(name)}"
        )
    name = _resolve_alias(name.strip(), known)
    if not name:
        return MalformedCall(truncate_raw(raw), "empty tool name")
    parameters = known.get(name)
    if parameters is not None and "name" not in parameters and arguments.get("name") == name:
        # The model repeated the tool name inside the arguments; the tool takes no "name".
        arguments = {key: item for key, item in arguments.items() if key != "name"}
    return ParsedCall(name=name, arguments=arguments)


def _coerce_arguments(value: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments as a dict; a JSON-encoded string is decoded (OpenAI sends them so)."""
    if value is None:
        return {}, None
    if isinstance(value, str):
        source = value.strip()
        if not source:
            return {}, None
        decoded, error = load_json(source)
        if error is not None:
            return None, f"arguments string is not valid JSON: {error}"
        if not isinstance(decoded, dict):
            found = _json_type(decoded)
            return None, f"arguments string does not decode to an object (got {found})"
        value = decoded
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {_json_type(value)}"
    if not all(isinstance(key, str) for key in value):
        return None, "argument names must be strings"
    return dict(value), None


def _resolve_alias(name: str, known: Mapping[str, frozenset[str]]) -> str:
    """Map ``functions.weather`` (OpenAI-internal naming some models copy) to ``weather``."""
    if name in known:
        return name
    for prefix in _ALIAS_PREFIXES:
        if name.startswith(prefix) and name[len(prefix) :] in known:
            return name[len(prefix) :]
    return name


def _dump(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # pragma: no cover - decoded values are JSON types
        return repr(value)


def truncate_raw(raw: str) -> str:
    raw = raw.strip()
    return raw if len(raw) <= _RAW_LIMIT else raw[: _RAW_LIMIT - 1] + "…"
