from __future__ import annotations

import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field, field_validator, model_validator

from groupmate.function_calls import InvalidArgumentsError
from groupmate.function_calls.registry import Tool, build_tool


class Attendee(BaseModel):
    name: str
    age: int = Field(ge=0)


class MeetingArgs(BaseModel):
    type: Literal["once", "weekly"]
    count: int = Field(ge=1, le=10)
    weekday: int | None = Field(default=None, ge=0, le=6)
    note: str = Field(default="", max_length=20)
    attendees: list[Attendee] = []

    @model_validator(mode="after")
    def _weekday_for_weekly(self) -> MeetingArgs:
        if self.type == "weekly" and self.weekday is None:
            raise ValueError("weekday is required when type=weekly")
        return self


@pytest.fixture(scope="module")
def tool() -> Tool:
    def meeting(ctx: Any, args: MeetingArgs) -> None:
        """Plan a meeting."""

    return build_tool(meeting)


def _issues(tool: Tool, raw: Any) -> list[tuple[str, str, str]]:
    with pytest.raises(InvalidArgumentsError) as caught:
        tool.validate(raw)
    return [(i.path, i.problem, i.received) for i in caught.value.issues]


def test_valid_arguments_become_the_model(tool: Tool) -> None:
    args = tool.validate('{"type": "weekly", "count": 2, "weekday": 0}')
    assert args == MeetingArgs(type="weekly", count=2, weekday=0)


# (case id, raw arguments, expected (path, problem fragment, received) triples)
MATRIX: list[tuple[str, Any, list[tuple[str, str, str]]]] = [
    ("missing-required", {"type": "once"}, [("count", "required field is missing", "nothing")]),
    (
        "string-for-int",
        {"type": "once", "count": "5"},
        [("count", "is not of type 'integer'", '"5"')],
    ),
    (
        "bool-for-int",
        {"type": "once", "count": True},
        [("count", "is not of type 'integer'", "true")],
    ),
    (
        "float-for-int",
        {"type": "once", "count": 2.5},
        [("count", "is not of type 'integer'", "2.5")],
    ),
    (
        "enum-violation",
        {"type": "daily", "count": 1},
        [("type", "must be one of 'once', 'weekly'", '"daily"')],
    ),
    (
        "unknown-key",
        {"type": "once", "count": 1, "colour": "red"},
        [("colour", "unknown field", '"red"')],
    ),
    (
        "above-maximum",
        {"type": "once", "count": 11},
        [("count", "must be at most 10", "11")],
    ),
    (
        "nullable-out-of-range",
        {"type": "weekly", "count": 1, "weekday": 7},
        [("weekday", "must be at most 6", "7")],
    ),
    (
        "too-long",
        {"type": "once", "count": 1, "note": "x" * 21},
        [("note", "is longer than", '"xxxxxxxxxxxxxxxxxxxxx"')],
    ),
    (
        "nested-path",
        {
            "type": "once",
            "count": 1,
            "attendees": [{"name": "a", "age": 1}, {"name": "b", "age": -1}],
        },
        [("attendees[1].age", "must be at least 0", "-1")],
    ),
    (
        "nested-missing",
        {"type": "once", "count": 1, "attendees": [{"age": 3}]},
        [("attendees[0].name", "required field is missing", "nothing")],
    ),
    (
        "semantic-rule",
        {"type": "weekly", "count": 1},
        [("(arguments)", "weekday is required when type=weekly", "")],
    ),
    (
        "invalid-json",
        '{"type": "once", "count": ',
        [
            (
                "(arguments)",
                "arguments are not valid JSON",
                '"{\\"type\\": \\"once\\", \\"count\\": "',
            )
        ],
    ),
    (
        "not-an-object",
        "[1, 2]",
        [("(arguments)", "arguments must be a JSON object, got list", '"[1, 2]"')],
    ),
    ("number", "42", [("(arguments)", "arguments must be a JSON object, got int", '"42"')]),
    (
        "two-stages-merged",
        {"type": "weekly", "count": 1, "extra": 1},
        [
            ("(arguments)", "weekday is required when type=weekly", ""),
            ("extra", "unknown field", "1"),
        ],
    ),
    (
        "nullable-wrong-type",
        {"type": "weekly", "count": 1, "weekday": "monday"},
        [("weekday", "is not of type 'integer', 'null'", '"monday"')],
    ),
]


@pytest.mark.parametrize(("raw", "expected"), [m[1:] for m in MATRIX], ids=[m[0] for m in MATRIX])
def test_validation_matrix(tool: Tool, raw: Any, expected: list[tuple[str, str, str]]) -> None:
    issues = _issues(tool, raw if isinstance(raw, str) else json.dumps(raw))
    assert len(issues) == len(expected), issues
    for (path, problem, received), (want_path, want_problem, want_received) in zip(
        issues, expected, strict=True
    ):
        assert path == want_path
        assert want_problem in problem
        if want_received:
            assert received == want_received


def test_semantic_rule_reports_the_received_arguments(tool: Tool) -> None:
    [(_path, problem, received)] = _issues(tool, '{"type": "weekly", "count": 1}')
    assert problem == "weekday is required when type=weekly"
    assert '"type":"weekly"' in received


def test_arguments_sent_as_a_json_string_are_unwrapped(tool: Tool) -> None:
    doubled = json.dumps(json.dumps({"type": "once", "count": 3}))
    assert tool.validate(doubled) == MeetingArgs(type="once", count=3)


@pytest.mark.parametrize("raw", ["", "   ", "null", None, {}])
def test_empty_arguments_mean_no_arguments_and_still_hit_required(tool: Tool, raw: Any) -> None:
    issues = _issues(tool, raw)
    assert {path for path, _, _ in issues} == {"type", "count"}


def test_bad_json_is_never_treated_as_empty() -> None:
    def ping(ctx: Any) -> None:
        """Ping."""

    tool = build_tool(ping)
    assert tool.validate("{}") is not None
    with pytest.raises(InvalidArgumentsError, match="not valid JSON"):
        tool.validate("{oops")


def test_received_values_are_truncated(tool: Tool) -> None:
    [(_, _, received)] = _issues(tool, {"type": "x" * 500, "count": 1})
    assert len(received) <= 80 and received.endswith("…")


def test_non_ascii_values_are_kept_readable(tool: Tool) -> None:
    [(_, _, received)] = _issues(tool, json.dumps({"type": "wöchentlich", "count": 1}))
    assert received == '"wöchentlich"'


def test_issue_order_is_stable_and_messages_name_the_path(tool: Tool) -> None:
    with pytest.raises(InvalidArgumentsError) as caught:
        tool.validate({"count": "x", "type": 5})
    text = str(caught.value)
    assert text.index("count:") < text.index("type:")


@pytest.mark.parametrize(
    ("raw", "problem"),
    [("[" * 5000, "not usable JSON"), ('{"count": ' + "1" * 5000 + "}", "not usable JSON")],
    ids=["absurd-nesting", "huge-integer"],
)
def test_python_json_limits_become_a_report(tool: Tool, raw: str, problem: str) -> None:
    [(path, found, _)] = _issues(tool, raw)
    assert path == "(arguments)" and problem in found


def test_a_crashing_validator_never_escapes() -> None:
    class Args(BaseModel):
        name: str

        @field_validator("name", mode="before")
        @classmethod
        def _strip(cls, value: Any) -> Any:
            return value.strip()  # an int has no .strip(): AttributeError

    def greet(ctx: Any, args: Args) -> None:
        """Greet."""

    tool = build_tool(greet, localns={"Args": Args})
    assert _issues(tool, {"name": 5}) == [("name", "5 is not of type 'string'", "5")]
    assert tool.validate({"name": "  Ana "}) == Args(name="Ana")
