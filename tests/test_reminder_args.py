"""`reminder_set` arguments through the real path: the registered tool's two-stage validation.

Stage 1 is the JSON Schema the model sees; stage 2 is `ReminderArgs` with the chat's clock
and zone. `make_ctx()` is Sat 21 Nov 2026 13:05 UTC, i.e. 14:05 in Europe/Berlin (CET).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from jsonschema import Draft202012Validator

import groupmate.function_calls.handlers  # noqa: F401  (registers the built-in tools)
from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers import builtin_tools
from groupmate.function_calls.handlers.reminder_args import MAX_CONTENT, ReminderArgs
from groupmate.function_calls.registry import Tool
from groupmate.function_calls.validation import ArgumentIssue, InvalidArgumentsError
from groupmate.storage.recurrence import Schedule
from tests.conftest import FIXED_NOW, make_ctx

BERLIN = "Europe/Berlin"


@pytest.fixture(scope="module")
def tool() -> Tool:
    return builtin_tools().get("reminder_set")


def _accept(tool: Tool, raw: Any, ctx: MessageContext | None = None) -> ReminderArgs:
    args = tool.validate(raw, make_ctx() if ctx is None else ctx)
    assert isinstance(args, ReminderArgs)
    return args


def _reject(tool: Tool, raw: Any, ctx: MessageContext | None = None) -> list[ArgumentIssue]:
    with pytest.raises(InvalidArgumentsError) as caught:
        tool.validate(raw, make_ctx() if ctx is None else ctx)
    return list(caught.value.issues)


def _schema_accepts(tool: Tool, raw: dict[str, Any]) -> bool:
    return not list(Draft202012Validator(tool.parameters).iter_errors(raw))


# --- the schema the model sees ---------------------------------------------------------


def test_schema_shown_to_the_model(tool: Tool) -> None:
    schema = tool.parameters
    assert schema["type"] == "object"
    assert set(schema["properties"]) == {
        "when",
        "type",
        "time",
        "in_minutes",
        "content",
        "weekday",
        "day",
        "interval",
        "every_minutes",
        "to",
        "until",
        "count",
        "who",
    }
    assert set(schema["required"]) == {"content"}
    assert next(iter(schema["properties"])) == "when"  # shown first: the way to set a time
    assert schema["additionalProperties"] is False
    assert next(b for b in schema["properties"]["type"]["anyOf"] if "enum" in b)["enum"] == [
        "once",
        "daily",
        "weekly",
        "weekdays",
        "monthly",
    ]
    time_branches = schema["properties"]["time"]["anyOf"]
    patterns = [branch["pattern"] for branch in time_branches if "pattern" in branch]
    assert len(patterns) == 1
    assert {"type": "null"} in time_branches
    assert schema["properties"]["content"]["maxLength"] == MAX_CONTENT
    assert schema["properties"]["content"]["minLength"] == 1
    # The definition sent to the API carries the same schema.
    assert tool.definition()["function"]["parameters"] == schema
    assert tool.definition()["function"]["name"] == "reminder_set"


# --- accepted -------------------------------------------------------------------------

# (case id, raw arguments, expected normalized time)
ACCEPTED: list[tuple[str, dict[str, Any], str | None]] = [
    ("daily-single-digit-hour", {"type": "daily", "time": "9:05", "content": "standup"}, "09:05"),
    ("daily-midnight", {"type": "daily", "time": "0:00", "content": "x"}, "00:00"),
    ("daily-23-59", {"type": "daily", "time": "23:59", "content": "x"}, "23:59"),
    ("weekdays", {"type": "weekdays", "time": "8:30", "content": "x"}, "08:30"),
    (
        "weekly-monday",
        {"type": "weekly", "time": "09:00", "weekday": 0, "content": "x"},
        "09:00",
    ),
    (
        "weekly-sunday",
        {"type": "weekly", "time": "09:00", "weekday": 6, "content": "x"},
        "09:00",
    ),
    ("monthly-1", {"type": "monthly", "time": "09:00", "day": 1, "content": "x"}, "09:00"),
    ("monthly-31", {"type": "monthly", "time": "09:00", "day": 31, "content": "x"}, "09:00"),
    (
        "once-tomorrow",
        {"type": "once", "time": "2026-11-22 09:00", "content": "x"},
        "2026-11-22 09:00",
    ),
    (
        "once-single-digit-hour",
        {"type": "once", "time": "2026-11-22 9:00", "content": "x"},
        "2026-11-22 09:00",
    ),
    (
        "once-a-minute-from-now",
        {"type": "once", "time": "2026-11-21 14:06", "content": "x"},
        "2026-11-21 14:06",
    ),
    ("once-in-minutes", {"type": "once", "in_minutes": 90, "content": "x"}, None),
    ("once-explicit-nulls", {"type": "once", "time": None, "in_minutes": 1, "content": "x"}, None),
]


@pytest.mark.parametrize(
    ("raw", "normalized"), [c[1:] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED]
)
def test_accepted(tool: Tool, raw: dict[str, Any], normalized: str | None) -> None:
    args = _accept(tool, raw)
    assert args.type == raw["type"]
    assert args.time == normalized
    assert args.content == raw["content"]


def test_accepted_from_a_json_string(tool: Tool) -> None:
    args = _accept(tool, '{"type": "daily", "time": "9:05", "content": "standup"}')
    assert (args.type, args.time, args.content) == ("daily", "09:05", "standup")


def test_content_is_stripped_and_1000_characters_are_accepted(tool: Tool) -> None:
    assert _accept(tool, {"type": "daily", "time": "09:00", "content": "  tea  "}).content == "tea"
    longest = "x" * MAX_CONTENT
    assert len(longest) == 1000
    args = _accept(tool, {"type": "daily", "time": "09:00", "content": longest})
    assert args.content == longest


# --- resolving to a schedule and the first fire time -----------------------------------


def test_once_resolves_to_utc_and_a_once_schedule(tool: Tool) -> None:
    ctx = make_ctx()
    args = _accept(tool, {"type": "once", "time": "2026-11-22 09:00", "content": "x"}, ctx)
    schedule, first = args.resolve(ctx)
    assert first == datetime(2026, 11, 22, 8, 0, tzinfo=UTC)  # 09:00 CET
    assert schedule == Schedule("once", time(9, 0), BERLIN, on_date=date(2026, 11, 22))
    assert not schedule.recurring


def test_in_minutes_resolves_to_exactly_now_plus_minutes(tool: Tool) -> None:
    ctx = make_ctx()
    args = _accept(tool, {"type": "once", "in_minutes": 90, "content": "call Bob"}, ctx)
    schedule, first = args.resolve(ctx)
    assert first == datetime(2026, 11, 21, 14, 35, tzinfo=UTC)
    assert first == FIXED_NOW + timedelta(minutes=90)
    assert schedule == Schedule("once", time(15, 35), BERLIN, on_date=date(2026, 11, 21))
    assert schedule.first_after(FIXED_NOW) == first


def test_in_minutes_keeps_seconds_of_the_clock(tool: Tool) -> None:
    now = datetime(2026, 11, 21, 13, 5, 42, tzinfo=UTC)
    ctx = make_ctx(clock=lambda: now)
    args = _accept(tool, {"type": "once", "in_minutes": 1, "content": "x"}, ctx)
    _, first = args.resolve(ctx)
    assert first == now + timedelta(minutes=1)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Sat 14:05 local: 09:05 today has passed, so tomorrow.
        ({"type": "daily", "time": "9:05"}, datetime(2026, 11, 22, 8, 5, tzinfo=UTC)),
        ({"type": "daily", "time": "14:06"}, datetime(2026, 11, 21, 13, 6, tzinfo=UTC)),
        ({"type": "daily", "time": "14:05"}, datetime(2026, 11, 22, 13, 5, tzinfo=UTC)),
        ({"type": "weekdays", "time": "08:30"}, datetime(2026, 11, 23, 7, 30, tzinfo=UTC)),
        (
            {"type": "weekly", "time": "09:00", "weekday": 0},
            datetime(2026, 11, 23, 8, 0, tzinfo=UTC),
        ),
        (
            {"type": "monthly", "time": "09:00", "day": 31},
            datetime(2026, 11, 30, 8, 0, tzinfo=UTC),
        ),
    ],
    ids=["daily-tomorrow", "daily-today", "daily-now-is-next-day", "weekdays", "weekly", "monthly"],
)
def test_recurring_resolves_to_the_next_occurrence(
    tool: Tool, raw: dict[str, Any], expected: datetime
) -> None:
    ctx = make_ctx()
    args = _accept(tool, {**raw, "content": "x"}, ctx)
    schedule, first = args.resolve(ctx)
    assert first == expected
    assert schedule.timezone == BERLIN
    assert schedule.kind == raw["type"]


def test_once_in_the_spring_gap_resolves_to_the_shifted_time(tool: Tool) -> None:
    ctx = make_ctx(timezone=BERLIN, clock=lambda: datetime(2026, 3, 5, 10, 0, tzinfo=UTC))
    args = _accept(tool, {"type": "once", "time": "2026-03-29 02:30", "content": "x"}, ctx)
    schedule, first = args.resolve(ctx)
    assert first == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    local = first.astimezone(ZoneInfo(BERLIN))
    assert local.time() == time(3, 30)
    assert local.utcoffset() == timedelta(hours=2)  # CEST
    assert schedule.on_date == date(2026, 3, 29)
    assert schedule.wall_time == time(2, 30)  # the user's words are kept


def test_once_in_the_fall_overlap_resolves_to_the_first_occurrence(tool: Tool) -> None:
    ctx = make_ctx(timezone=BERLIN, clock=lambda: datetime(2026, 10, 20, 10, 0, tzinfo=UTC))
    args = _accept(tool, {"type": "once", "time": "2026-10-25 02:30", "content": "x"}, ctx)
    _, first = args.resolve(ctx)
    assert first == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    assert first.astimezone(ZoneInfo(BERLIN)).utcoffset() == timedelta(hours=2)  # CEST


def test_resolve_uses_the_chats_time_zone(tool: Tool) -> None:
    ctx = make_ctx(timezone="America/New_York")
    args = _accept(tool, {"type": "once", "time": "2026-11-22 09:00", "content": "x"}, ctx)
    schedule, first = args.resolve(ctx)
    assert first == datetime(2026, 11, 22, 14, 0, tzinfo=UTC)  # 09:00 EST
    assert schedule.timezone == "America/New_York"


# --- rejected -------------------------------------------------------------------------

# (case id, raw arguments, issue path, phrase in the problem, caught by stage 1 schema)
REJECTED: list[tuple[str, dict[str, Any], str, str, bool]] = [
    (
        "once-in-the-past",
        {"type": "once", "time": "2026-11-21 14:00", "content": "x"},
        "time",
        "in the past",
        False,
    ),
    (
        "once-right-now",
        {"type": "once", "time": "2026-11-21 14:05", "content": "x"},
        "time",
        "in the past",
        False,
    ),
    (
        "once-without-date",
        {"type": "once", "time": "14:00", "content": "x"},
        "time",
        "needs the date",
        False,
    ),
    (
        "once-too-far-ahead",
        {"type": "once", "time": "2040-11-22 09:00", "content": "x"},
        "time",
        "ten years",
        False,
    ),
    ("hour-25", {"type": "daily", "time": "25:00", "content": "x"}, "time", "not a time", False),
    ("minute-60", {"type": "daily", "time": "9:60", "content": "x"}, "time", "not a time", False),
    (
        "once-hour-24",
        {"type": "once", "time": "2026-11-22 24:00", "content": "x"},
        "time",
        "not a time",
        False,
    ),
    (
        "feb-30",
        {"type": "once", "time": "2026-02-30 10:00", "content": "x"},
        "time",
        "not a calendar date",
        False,
    ),
    (
        "natural-language",
        {"type": "once", "time": "tomorrow 9am", "content": "x"},
        "time",
        "has the wrong format",
        True,
    ),
    (
        "daily-with-date",
        {"type": "daily", "time": "2026-11-22 09:00", "content": "x"},
        "time",
        "only the time of day",
        False,
    ),
    (
        "weekday-7",
        {"type": "weekly", "time": "09:00", "weekday": 7, "content": "x"},
        "weekday",
        "must be at most 6",
        True,
    ),
    (
        "weekday-negative",
        {"type": "weekly", "time": "09:00", "weekday": -1, "content": "x"},
        "weekday",
        "must be at least 0",
        True,
    ),
    (
        "weekly-without-weekday",
        {"type": "weekly", "time": "09:00", "content": "x"},
        "weekday",
        "needs weekday",
        False,
    ),
    (
        "weekday-with-daily",
        {"type": "daily", "time": "09:00", "weekday": 1, "content": "x"},
        "weekday",
        "only used with type 'weekly'",
        False,
    ),
    (
        "day-0",
        {"type": "monthly", "time": "09:00", "day": 0, "content": "x"},
        "day",
        "must be at least 1",
        True,
    ),
    (
        "day-32",
        {"type": "monthly", "time": "09:00", "day": 32, "content": "x"},
        "day",
        "must be at most 31",
        True,
    ),
    (
        "monthly-without-day",
        {"type": "monthly", "time": "09:00", "content": "x"},
        "day",
        "needs day",
        False,
    ),
    (
        "day-with-weekly",
        {"type": "weekly", "time": "09:00", "weekday": 0, "day": 3, "content": "x"},
        "day",
        "only used with type 'monthly'",
        False,
    ),
    ("content-empty", {"type": "daily", "time": "09:00", "content": ""}, "content", "empty", True),
    (
        "content-blank",
        {"type": "daily", "time": "09:00", "content": "   "},
        "content",
        "at least 1 character",
        False,
    ),
    (
        "content-1001",
        {"type": "daily", "time": "09:00", "content": "x" * 1001},
        "content",
        "is longer than 1000",
        True,
    ),
    (
        "time-and-in-minutes",
        {"type": "once", "time": "2026-11-22 09:00", "in_minutes": 5, "content": "x"},
        "in_minutes",
        "not both",
        False,
    ),
    (
        "in-minutes-with-daily",
        {"type": "daily", "time": "09:00", "in_minutes": 5, "content": "x"},
        "in_minutes",
        "only works with type 'once'",
        False,
    ),
    (
        "in-minutes-0",
        {"type": "once", "in_minutes": 0, "content": "x"},
        "in_minutes",
        "must be at least 1",
        True,
    ),
    (
        "in-minutes-over-a-year",
        {"type": "once", "in_minutes": 60 * 24 * 366 + 1, "content": "x"},
        "in_minutes",
        "must be at most",
        True,
    ),
    (
        "once-without-time-or-in-minutes",
        {"type": "once", "content": "x"},
        "in_minutes",
        "or in_minutes",
        False,
    ),
    (
        "unknown-type",
        {"type": "hourly", "time": "09:00", "content": "x"},
        "type",
        "must be one of",
        True,
    ),
    (
        "extra-chat-id",
        {"type": "daily", "time": "09:00", "content": "x", "chat_id": "other-chat"},
        "chat_id",
        "unknown field",
        True,
    ),
    (
        "string-weekday",
        {"type": "weekly", "time": "09:00", "weekday": "1", "content": "x"},
        "weekday",
        "type",
        True,
    ),
]


@pytest.mark.parametrize(
    ("raw", "path", "phrase", "stage1"),
    [case[1:] for case in REJECTED],
    ids=[case[0] for case in REJECTED],
)
def test_rejected(tool: Tool, raw: dict[str, Any], path: str, phrase: str, stage1: bool) -> None:
    issues = _reject(tool, raw)
    assert [issue.path for issue in issues] == [path], issues
    assert phrase in issues[0].problem
    assert issues[0].received  # what the model sent is echoed back
    # Which stage catches it: shapes and ranges in the schema, the rest in ReminderArgs.
    assert _schema_accepts(tool, raw) is not stage1


def test_past_message_names_the_local_time_and_zone(tool: Tool) -> None:
    (issue,) = _reject(tool, {"type": "once", "time": "2026-11-21 14:00", "content": "x"})
    assert issue.problem == (
        "Sat 21 Nov 2026 14:00 is in the past: it is now Sat 21 Nov 2026 14:05 in Europe/Berlin"
    )
    assert issue.received == '"2026-11-21 14:00"'


def test_the_past_depends_on_the_chats_clock(tool: Tool) -> None:
    raw = {"type": "once", "time": "2026-11-21 14:00", "content": "x"}
    earlier = make_ctx(clock=lambda: datetime(2026, 11, 21, 12, 0, tzinfo=UTC))
    assert _accept(tool, raw, earlier).time == "2026-11-21 14:00"
    # Same wall time, but in a zone where it is already later.
    tokyo = make_ctx(clock=lambda: datetime(2026, 11, 21, 5, 30, tzinfo=UTC), timezone="Asia/Tokyo")
    (issue,) = _reject(tool, raw, tokyo)
    assert issue.path == "time"
    assert "Asia/Tokyo" in issue.problem


def test_daily_without_time_is_rejected(tool: Tool) -> None:
    issues = _reject(tool, {"type": "daily", "content": "x"})
    assert len(issues) == 1
    assert 'needs time as "HH:MM"' in issues[0].problem


def test_every_problem_is_reported_at_once(tool: Tool) -> None:
    issues = _reject(tool, {"type": "weekly", "time": "25:00", "content": ""})
    assert [issue.path for issue in issues] == ["content", "time", "weekday"]
    problems = {issue.path: issue.problem for issue in issues}
    assert "empty" in problems["content"]
    assert "not a time" in problems["time"]
    assert "needs weekday" in problems["weekday"]


def test_missing_required_fields_are_each_reported_once(tool: Tool) -> None:
    issues = _reject(tool, {})
    assert [(issue.path, issue.problem) for issue in issues] == [
        ("content", "required field is missing"),
        ("type", "give when, the time in words (e.g. 'tomorrow at 9'), or type and time"),
    ]


# --- `when`: the time as words, read by the /remind grammar -----------------------------


@pytest.mark.parametrize(
    ("when", "kind", "first_local"),
    [
        ("tomorrow at 9", "once", datetime(2026, 11, 22, 9, 0)),
        ("in 30 minutes", "once", datetime(2026, 11, 21, 14, 35)),
        ("every monday at 9am", "weekly", datetime(2026, 11, 23, 9, 0)),
        ("every day at 18:30", "daily", datetime(2026, 11, 21, 18, 30)),
        ("on dec 24 at 18:00", "once", datetime(2026, 12, 24, 18, 0)),
        ("明天下午3点", "once", datetime(2026, 11, 22, 15, 0)),
        ("每周一上午9点", "weekly", datetime(2026, 11, 23, 9, 0)),
        ("10分钟后", "once", datetime(2026, 11, 21, 14, 15)),
    ],
)
def test_when_is_read_exactly_in_the_chats_zone(
    tool: Tool, when: str, kind: str, first_local: datetime
) -> None:
    raw = {"when": when, "content": "call the dentist"}
    assert _schema_accepts(tool, raw)
    args = _accept(tool, raw)
    schedule, first = args.resolve(make_ctx())
    assert schedule.kind == kind
    assert first.astimezone(ZoneInfo(BERLIN)).replace(tzinfo=None) == first_local


def test_when_and_fields_that_agree_are_accepted(tool: Tool) -> None:
    raw = {"when": "tomorrow at 9", "type": "once", "time": "2026-11-22 09:00", "content": "x"}
    args = _accept(tool, raw)
    assert (args.type, args.time) == ("once", "2026-11-22 09:00")


@pytest.mark.parametrize(
    "fields",
    [
        {"type": "daily", "time": "09:00"},  # the rule differs: "stored as every day at 09:00"
        {"type": "once", "time": "2026-11-23 09:00"},  # the day differs
        {"type": "once", "time": "2026-11-22 99:00"},  # not even a time
    ],
)
def test_when_and_fields_that_disagree_are_reported_not_guessed(
    tool: Tool, fields: dict[str, Any]
) -> None:
    issues = _reject(tool, {"when": "tomorrow at 9", "content": "x", **fields})
    (problem,) = [issue.problem for issue in issues]
    assert "means Sun 22 Nov 2026 09:00 (Europe/Berlin)" in problem
    assert "send only when" in problem


@pytest.mark.parametrize(
    ("when", "expected"),
    [
        ("sometime soon", "couldn't find a time"),
        ("at 3", "3:00 or 15:00"),  # a bare hour from 1 to 5 is asked back
        ("every day at 9 and 5pm", "more than one"),
        ("yesterday at 9", "in the past"),
    ],
)
def test_a_when_the_grammar_cant_read_exactly_is_a_repairable_report(
    tool: Tool, when: str, expected: str
) -> None:
    issues = _reject(tool, {"when": when, "content": "x"})
    problems = " ".join(issue.problem for issue in issues)
    assert expected in problems
    if "past" not in expected:
        assert "'tomorrow at 9'" in problems  # the accepted examples


def test_when_holds_only_the_time_unless_the_rest_is_the_content(tool: Tool) -> None:
    args = _accept(
        tool, {"when": "tomorrow at 9 to call the dentist", "content": "call the dentist"}
    )
    assert args.time == "2026-11-22 09:00"
    issues = _reject(tool, {"when": "tomorrow at 9 to call the dentist", "content": "tea"})
    assert "put that in content" in issues[0].problem


@pytest.mark.parametrize(
    "raw",
    [
        {"time": "2026-11-22 09:00", "content": "x"},
        {"in_minutes": 30, "content": "x"},
    ],
)
def test_a_date_or_a_delay_without_type_can_only_be_once(tool: Tool, raw: dict[str, Any]) -> None:
    assert _accept(tool, raw).type == "once"


def test_a_time_of_day_without_type_is_not_guessed(tool: Tool) -> None:
    issues = _reject(tool, {"time": "09:00", "content": "x"})
    assert [issue.path for issue in issues] == ["type"]
