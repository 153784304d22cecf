"""Two-stage argument validation: the JSON Schema the model saw, then the Pydantic model."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError
from jsonschema.exceptions import best_match
from pydantic import BaseModel
from pydantic import ValidationError as PydanticError

from groupmate.function_calls.errors import InvocationOutcome, ToolInvocationError
from groupmate.function_calls.result import to_compact_json
from groupmate.function_calls.schema import JsonSchema

log = logging.getLogger("groupmate.validation")

_RECEIVED_LIMIT = 80
_ROOT = "(arguments)"


@dataclass(frozen=True, slots=True)
class ArgumentIssue:
    """One problem with a tool call's arguments."""

    path: str
    problem: str
    received: str
    # The problem is a sentence of the argument model's own validators (written for
    # users), not the wording of JSON Schema or of pydantic's built-in checks.
    own_words: bool = False

    def describe(self) -> str:
        return f"{self.path}: {self.problem} (received {self.received})"


class InvalidArgumentsError(ToolInvocationError, ValueError):
    """The arguments failed validation; `issues` is the merged report of both stages."""

    outcome: ClassVar[InvocationOutcome] = "invalid"

    def __init__(self, issues: Sequence[ArgumentIssue]) -> None:
        self.issues = tuple(issues)
        super().__init__("; ".join(issue.describe() for issue in self.issues))


def _truncate(value: Any) -> str:
    try:
        rendered = to_compact_json(value)
    except Exception:  # e.g. a lone surrogate, which no JSON encoder accepts
        rendered = ascii(value)
    if len(rendered) > _RECEIVED_LIMIT:
        return rendered[: _RECEIVED_LIMIT - 1] + "…"
    return rendered


def _join_path(parts: Iterable[str | int]) -> str:
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path or _ROOT


def _child(parent: Iterable[str | int], name: str) -> str:
    return _join_path([*parent, name])


def decode_arguments(raw: Any) -> dict[str, Any]:
    """Turn raw tool-call arguments into a dict, or explain why they are unusable.

    Empty or null arguments mean "no arguments"; stage 1 then reports any required
    field. A JSON string that itself holds an object (double-encoded) is unwrapped.
    Broken JSON is an error, never silently `{}`.
    """
    value = raw
    for _ in range(2):
        if not isinstance(value, str):
            break
        if not value.strip():
            return {}
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            problem = f"arguments are not valid JSON ({exc.msg} at position {exc.pos})"
            raise InvalidArgumentsError([ArgumentIssue(_ROOT, problem, _truncate(raw))]) from None
        except (ValueError, RecursionError):
            # Python's own limits: integers over 4300 digits, absurd nesting.
            problem = "arguments are not usable JSON (too deeply nested or too large numbers)"
            raise InvalidArgumentsError([ArgumentIssue(_ROOT, problem, _truncate(raw))]) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        problem = f"arguments must be a JSON object, got {type(value).__name__}"
        raise InvalidArgumentsError([ArgumentIssue(_ROOT, problem, _truncate(raw))])
    return value


def _schema_issues(error: SchemaError) -> list[ArgumentIssue]:
    parent = list(error.absolute_path)
    instance = error.instance
    required = error.validator_value
    if error.validator == "required" and isinstance(instance, dict) and isinstance(required, list):
        missing = [name for name in required if name not in instance]
        return [
            ArgumentIssue(_child(parent, name), "required field is missing", "nothing")
            for name in missing
        ]
    if (
        error.validator == "additionalProperties"
        and isinstance(instance, dict)
        and isinstance(error.schema, dict)
    ):
        known = error.schema.get("properties", {})
        extra = [name for name in instance if name not in known]
        return [
            ArgumentIssue(_child(parent, name), "unknown field", _truncate(instance[name]))
            for name in extra
        ]
    if error.context:
        # anyOf/oneOf: the branch of the right type explains the problem best.
        specific = [sub for sub in error.context if sub.validator != "type"]
        if specific:
            return _schema_issues(best_match(specific))
        types = ", ".join(repr(sub.validator_value) for sub in error.context)
        return [ArgumentIssue(_join_path(parent), f"is not of type {types}", _truncate(instance))]
    return [ArgumentIssue(_join_path(parent), _schema_problem(error), _truncate(instance))]


def _schema_problem(error: SchemaError) -> str:
    """A short problem statement; jsonschema's own messages quote the whole value."""
    limit = error.validator_value
    schema = error.schema if isinstance(error.schema, dict) else {}
    if error.validator == "maxLength":
        return f"is longer than {limit} characters"
    if error.validator == "minLength":
        return "must not be empty" if limit == 1 else f"is shorter than {limit} characters"
    if error.validator == "pattern":
        # Inside anyOf (nullable fields) the description sits on the enclosing schema.
        enclosing = error.parent.schema if error.parent is not None else {}
        hint = schema.get("description") or (
            enclosing.get("description") if isinstance(enclosing, dict) else None
        )
        return f"has the wrong format (expected {hint})" if hint else "has the wrong format"
    if error.validator in ("maximum", "exclusiveMaximum"):
        return (
            f"must be at most {limit}" if error.validator == "maximum" else f"must be below {limit}"
        )
    if error.validator in ("minimum", "exclusiveMinimum"):
        return (
            f"must be at least {limit}"
            if error.validator == "minimum"
            else f"must be above {limit}"
        )
    if error.validator == "enum" and isinstance(limit, list):
        return "must be one of " + ", ".join(repr(choice) for choice in limit)
    return _truncate(error.message) if len(error.message) > 200 else error.message


def _pydantic_issues(error: PydanticError) -> list[ArgumentIssue]:
    issues = []
    for detail in error.errors(include_url=False):
        message = detail["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
        issues.append(
            ArgumentIssue(
                _join_path(detail["loc"]),
                message,
                _truncate(detail["input"]),
                own_words=detail["type"] == "value_error",
            )
        )
    return issues


class ArgumentValidator:
    """Validates one tool's arguments: stage 1 by JSON Schema, stage 2 by its Pydantic model."""

    __slots__ = ("_model", "_optional_nulls", "_schema_validator")

    def __init__(
        self,
        schema: JsonSchema,
        model: type[BaseModel],
        *,
        null_means_absent: bool = False,
        checked: bool = False,
    ) -> None:
        # `checked`: a built-in tool's schema, which tests/test_schema.py checks against
        # the meta-schema; checking it again at every start cost 3 ms a schema.
        if not checked:
            Draft202012Validator.check_schema(schema)
        # No format checker: which formats it checks depends on optional packages, and
        # stage 2 (Pydantic) validates dates, URLs and the like deterministically.
        self._schema_validator = Draft202012Validator(schema)
        self._model = model
        # The compact view shows optionals without their null branch, yet small models
        # still write `"day": null` for "not this one": that is the same as leaving it out.
        self._optional_nulls: frozenset[str] = (
            frozenset(schema.get("properties", {})) - set(schema.get("required", ()))
            if null_means_absent
            else frozenset()
        )

    def validate(self, raw: Any, context: Mapping[str, Any] | None = None) -> BaseModel:
        """Return the handler's argument model, or raise InvalidArgumentsError with every issue.

        `context` reaches the model's validators as `info.context` (see `validation_context`).
        """
        arguments = decode_arguments(raw)
        if self._optional_nulls:
            arguments = {
                name: value
                for name, value in arguments.items()
                if value is not None or name not in self._optional_nulls
            }
        issues: list[ArgumentIssue] = []
        try:
            for error in self._schema_validator.iter_errors(arguments):
                issues.extend(_schema_issues(error))
        except RecursionError:
            problem = "arguments are nested too deeply"
            raise InvalidArgumentsError([ArgumentIssue(_ROOT, problem, _truncate(raw))]) from None
        try:
            instance = self._model.model_validate(arguments, context=context)
        except PydanticError as exc:
            covered = {issue.path for issue in issues}
            issues.extend(i for i in _pydantic_issues(exc) if i.path not in covered)
        except Exception as exc:
            # A validator that assumed stage 1 passed (e.g. str methods on an int) may
            # raise anything; stage 1's report already explains such input.
            if not issues:
                log.warning("validator of %s raised %s", self._model.__name__, type(exc).__name__)
                received = _truncate(arguments)
                issues.append(ArgumentIssue(_ROOT, "arguments were rejected", received))
        else:
            if not issues:
                return instance
        # One missing field is reported by every `required` error of its object; say it once.
        unique = list(dict.fromkeys(issues))
        raise InvalidArgumentsError(sorted(unique, key=lambda issue: issue.path))
