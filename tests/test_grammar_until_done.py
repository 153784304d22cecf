"""“Until done” in words, case by case: who must acknowledge, the schedule that repeats
until then (and its cap), the content left; near-misses that must not be taken are refused
with how to write them, or left to the rest of the grammar. Every case goes on through
ReminderArgs (both validation stages) and its `resolve`, so the table checks what would
really be stored."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from jsonschema import Draft202012Validator

import groupmate.function_calls.handlers  # noqa: F401  (registers the built-in tools)
from groupmate.function_calls import InvalidArgumentsError
from groupmate.function_calls.deps import Deps
from groupmate.function_calls.grammar import GrammarError, parse_reminder, read_whole
from groupmate.function_calls.grammar.until_done import split_until_done
from groupmate.function_calls.handlers import builtin_tools
from groupmate.function_calls.handlers.reminder_words import describe_schedule
from groupmate.function_calls.handlers.until_done import UntilDoneCap, scheduled
from groupmate.storage.errors import RepeatTooOftenError
from groupmate.storage.recurrence import Schedule, check_rate
from tests.conftest import make_ctx

BERLIN = ZoneInfo("Europe/Berlin")
WED = datetime(2026, 11, 25, 10, 20, tzinfo=BERLIN)  # a Wednesday morning
# The day before the clocks go back (25 October, 03:00 CEST -> 02:00 CET).
DST_AUTUMN = datetime(2026, 10, 24, 20, 0, tzinfo=BERLIN)


def stored(phrase: str, now: datetime = WED) -> tuple[str | None, str, str, str]:
    """(ack, rule, first local fire time, content) as reminder_set would store them."""
    parsed = parse_reminder(phrase, now)
    ctx = make_ctx(clock=lambda: now.astimezone(UTC))
    args = builtin_tools().get("reminder_set").validate(parsed.arguments(), ctx)
    schedule, first = scheduled(args, ctx)  # type: ignore[arg-type]
    rule = describe_schedule(schedule)
    return args.ack, rule, f"{first.astimezone(BERLIN):%Y-%m-%d %H:%M}", parsed.content  # type: ignore[attr-defined]


NAG_AT_9PM = "every 10 minutes from 21:00, 12 times (the last on Wed 25 Nov at 22:50)"

CASES: list[tuple[str, str, str, str, str]] = [
    # --- English: a time, then every 10 minutes until acknowledged, at most 12 times ---
    ("me at 9pm to take pills until I say done", "asker", NAG_AT_9PM, "21:00", "take pills"),
    ("me at 9pm to take pills until done", "asker", NAG_AT_9PM, "21:00", "take pills"),
    ("me at 9pm to take pills until it's done", "asker", NAG_AT_9PM, "21:00", "take pills"),
    ("me at 9pm to take pills till I say done.", "asker", NAG_AT_9PM, "21:00", "take pills"),
    (
        "us at 9pm to feed the cat until someone says done",
        "anyone",
        NAG_AT_9PM,
        "21:00",
        "feed the cat",
    ),
    (
        "us at 9pm until someone says done to feed the cat",
        "anyone",
        NAG_AT_9PM,
        "21:00",
        "feed the cat",
    ),
    ("us at 9pm to call back until somebody answers", "anyone", NAG_AT_9PM, "21:00", "call back"),
    ("us at 9pm to call back until anyone replies", "anyone", NAG_AT_9PM, "21:00", "call back"),
    ("@bob at 9pm to pay until Bob says done", "each", NAG_AT_9PM, "21:00", "pay"),
    ("@bob at 9pm to pay until @bob says done", "each", NAG_AT_9PM, "21:00", "pay"),
    (
        "@bob and @carol at 9pm to pay until @bob and @carol say done",
        "each",
        NAG_AT_9PM,
        "21:00",
        "pay",
    ),
    (
        "@bob @carol at 9pm to pay until everyone mentioned says done",
        "each",
        NAG_AT_9PM,
        "21:00",
        "pay",
    ),
    ("@bob @carol at 9pm to pay until we all say done", "each", NAG_AT_9PM, "21:00", "pay"),
    (
        "me in 30 minutes to stretch until I say done",
        "asker",
        "every 10 minutes from 10:50, 12 times (the last on Wed 25 Nov at 12:40)",
        "10:50",
        "stretch",
    ),
    # --- with a repeat within a day: its own step, capped (or fewer, as said) --------
    (
        "us every 10 minutes until someone says done to stretch",
        "anyone",
        "every 10 minutes from 10:30, 12 times (the last on Wed 25 Nov at 12:20)",
        "10:30",
        "stretch",
    ),
    (
        "me every 10 minutes 5 times until I say done to drink",
        "asker",
        "every 10 minutes from 10:30, 5 times (the last on Wed 25 Nov at 11:10)",
        "10:30",
        "drink",
    ),
    (
        "us every 30 minutes from 9 to 17 until someone says done to check the door",
        "anyone",
        "every 30 minutes from 09:00 to 17:00 until Wed 25 Nov at 16:00 (the last on Wed 25 Nov "
        "at 16:00)",
        "10:30",
        "check the door",
    ),
    # --- Chinese ---------------------------------------------------------------------
    (
        "我每5分钟吃药，直到我说好了",
        "asker",
        "every 5 minutes from 10:25, 12 times (the last on Wed 25 Nov at 11:20)",
        "10:25",
        "吃药",
    ),
    ("我晚上9点吃药，直到我说好了", "asker", NAG_AT_9PM, "21:00", "吃药"),
    ("我晚上9点吃药，直到我说好了为止", "asker", NAG_AT_9PM, "21:00", "吃药"),
    ("我们晚上9点喂猫，直到有人说好了", "anyone", NAG_AT_9PM, "21:00", "喂猫"),
    ("我们晚上9点喂猫，直到有人回复", "anyone", NAG_AT_9PM, "21:00", "喂猫"),
    ("@bob 和 @carol 晚上9点交钱，直到大家都说好了", "each", NAG_AT_9PM, "21:00", "交钱"),
]


@pytest.mark.parametrize(
    ("phrase", "ack", "rule", "first", "content"), CASES, ids=[case[0] for case in CASES]
)
def test_until_done_becomes_exactly_this_reminder(
    phrase: str, ack: str, rule: str, first: str, content: str
) -> None:
    assert stored(phrase) == (ack, rule, f"2026-11-25 {first}", content)


def test_every_ten_minutes_keeps_its_step_across_the_autumn_change() -> None:
    """From 01:30 on the night the clocks go back, 12 times 10 minutes of real time apart:
    the hour from 02:00 happens twice, so the last is at 02:20 CET (110 minutes on), not
    at 03:20 on the wall clock."""
    assert stored("me tomorrow at 01:30 to check the backup until I say done", DST_AUTUMN) == (
        "asker",
        "every 10 minutes from 01:30, 12 times (the last on Sun 25 Oct at 02:20)",
        "2026-10-25 01:30",
        "check the backup",
    )


# Phrases that are not a rule: left whole to the rest of the grammar (which reads or
# refuses them), never cut.
NOT_OURS = [
    "me at 9pm to walk the dog until I get home",
    "me every day until Friday to stretch",
    "me at 9pm to read “until done” aloud",
    "我晚上9点做说好了的事",
    "我每天直到周五跑步",
]


@pytest.mark.parametrize("phrase", NOT_OURS)
def test_other_until_phrases_are_not_taken(phrase: str) -> None:
    assert split_until_done(phrase) == (phrase, None)


def test_quotes_keep_the_words_as_the_text() -> None:
    """What the guide tells a user whose text says "until done"."""
    assert stored('me at 5pm "work until done with the report"') == (
        None,
        "once, on Wed 25 Nov 2026 at 17:00",
        "2026-11-25 17:00",
        "work until done with the report",
    )


REFUSALS: list[tuple[str, str]] = [
    # Content or a rule? Never guessed either way.
    ("me at 5pm to work on the slides until done with the report", "part of the reminder"),
    ("us at 9pm to call until someone answers the phone", "part of the reminder"),
    ("我们每天9点查邮箱，直到有人回复邮件", "是提醒的内容"),
    ("我晚上9点吃药，直到我说好了的时候", "是提醒的内容"),
    # A word nobody acknowledges with.
    ("me at 9pm to take pills until I say ok", "not on “ok”"),
    ("me at 9pm to take pills until I say so", "not on “so”"),
    ("我晚上9点吃药，直到我说可以", "我只在有人回复"),
    # "each" needs the people, exactly the reminder's.
    ("us at 9pm to pay until everyone says done", "only wait for people the reminder names"),
    ("me at 9pm to pay until Bob says done", "only wait for people the reminder names"),
    ("@bob at 9pm to pay until @carol says done", "must name everyone the reminder is for"),
    ("@bob @carol at 9pm to pay until @bob says done", "must name everyone"),
    # "each" of "me and @bob" is both of them: naming only Bob would be read as both.
    ("me and @bob at 9pm to pay until @bob says done", r"is for \(you, @bob\)"),
    ("大家晚上9点交钱，直到大家都说好了", "only wait for people"),
]


@pytest.mark.parametrize(("phrase", "why"), REFUSALS, ids=[case[0] for case in REFUSALS])
def test_unclear_until_done_is_refused_with_the_reason(phrase: str, why: str) -> None:
    with pytest.raises(GrammarError, match=why):
        parse_reminder(phrase, WED)


@pytest.mark.parametrize(
    "phrase",
    [
        "me every day at 9 to take pills until I say done",
        "me every monday at 9 to water the plants until someone says done",
        "我每天晚上9点吃药，直到我说好了",
        "me every day until done to stretch",
    ],
)
def test_a_daily_or_weekly_rule_cannot_be_until_done(phrase: str) -> None:
    """Done on Monday would end Tuesday's too: refused by the grammar, with what to write
    instead (so the fast path never takes it), and by validation for a model's call."""
    with pytest.raises(GrammarError, match="can't go with a daily or weekly rule"):
        parse_reminder(phrase, WED)
    assert read_whole(f"remind {phrase}", WED) is None


def test_a_model_call_with_a_daily_rule_and_ack_is_refused() -> None:
    ctx = make_ctx(clock=lambda: WED.astimezone(UTC))
    raw = {"type": "daily", "time": "09:00", "content": "pills", "ack": "asker"}
    with pytest.raises(InvalidArgumentsError, match="can't go with a daily or weekly rule"):
        builtin_tools().get("reminder_set").validate(raw, ctx)


def test_the_fast_path_reads_the_rule_whole() -> None:
    request = read_whole("remind me at 9pm to take my pills until I say done", WED)
    assert request is not None
    assert request.arguments == {
        "type": "once",
        "time": "2026-11-25 21:00",
        "content": "take my pills",
        "ack": "asker",
    }
    chinese = read_whole("晚上9点提醒我吃药，直到我说好了", WED)
    assert chinese is not None
    assert chinese.arguments["ack"] == "asker"
    assert chinese.arguments["content"] == "吃药"
    # A near-miss is never set without the model: it goes on to it (or is asked about).
    assert read_whole("remind me at 5pm to work until done with the report", WED) is None


def test_a_model_when_phrase_says_the_rule_too() -> None:
    """A model that puts the words in `when` gets the same rule, checked the same way."""
    ctx = make_ctx(clock=lambda: WED.astimezone(UTC))
    tool = builtin_tools().get("reminder_set")
    args = tool.validate({"when": "at 9pm until someone says done", "content": "feed the cat"}, ctx)
    assert args.ack == "anyone"  # type: ignore[attr-defined]
    with pytest.raises(InvalidArgumentsError, match="not ack 'asker'"):
        tool.validate(
            {"when": "at 9pm until someone says done", "content": "x", "ack": "asker"}, ctx
        )
    with pytest.raises(InvalidArgumentsError, match="needs the people named"):
        tool.validate({"when": "at 9pm", "content": "x", "ack": "each", "who": ["everyone"]}, ctx)


def test_ack_is_checked_by_the_schema_and_again_by_validation() -> None:
    """Stage 1 (the JSON Schema the model sees) and stage 2 (Pydantic) both refuse a rule
    that is not one of the three."""
    tool = builtin_tools().get("reminder_set")
    ack = tool.parameters["properties"]["ack"]
    assert next(b for b in ack["anyOf"] if "enum" in b)["enum"] == ["asker", "anyone", "each"]
    raw = {"when": "at 9pm", "content": "x", "ack": "someone"}
    assert list(Draft202012Validator(tool.parameters).iter_errors(raw))
    with pytest.raises(InvalidArgumentsError, match="ack"):
        tool.validate(raw, make_ctx(clock=lambda: WED.astimezone(UTC)))


def test_more_than_the_cap_is_refused_with_the_cap_named() -> None:
    ctx = make_ctx(clock=lambda: WED.astimezone(UTC))
    raw = parse_reminder("me every 10 minutes 20 times until I say done to drink", WED).arguments()
    with pytest.raises(InvalidArgumentsError, match="at most 12 times here; ask for 12 or fewer"):
        builtin_tools().get("reminder_set").validate(raw, ctx)
    capped = make_ctx(clock=lambda: WED.astimezone(UTC), deps=Deps({UntilDoneCap: UntilDoneCap(3)}))
    raw = parse_reminder("me at 9pm to take pills until I say done", WED).arguments()
    args = builtin_tools().get("reminder_set").validate(raw, capped)
    schedule, _ = scheduled(args, capped)  # type: ignore[arg-type]
    assert describe_schedule(schedule) == (
        "every 10 minutes from 21:00, 3 times (the last on Wed 25 Nov at 21:20)"
    )


def test_a_count_bounds_the_rate_of_a_day() -> None:
    """Every 10 minutes all day is 144 a day, over the 48 allowed; 12 times in all is
    at most 12 in any day, which the store lets through."""
    step = Schedule(
        "interval", time(21, 0), "Europe/Berlin", on_date=WED.date(), every=timedelta(minutes=10)
    )
    assert step.per_day() == 144
    with pytest.raises(RepeatTooOftenError):
        check_rate(step)
    capped = replace(step, count=12)
    assert capped.per_day() == 12
    assert check_rate(capped) == capped


def test_a_model_call_that_drops_the_rule_is_sent_back() -> None:
    """The user said "until I say done"; a model's call without ack would set a reminder
    that waits for no one: refused with what to pass. Words that may be the text or a
    rule are asked about, not set."""
    tool = builtin_tools().get("reminder_set")
    said = make_ctx(
        clock=lambda: WED.astimezone(UTC),
        text="remind me at 9pm to take my pills until I say done",
    )
    with pytest.raises(InvalidArgumentsError, match="pass ack 'asker' too"):
        tool.validate({"when": "at 9pm", "content": "take my pills"}, said)
    args = tool.validate({"when": "at 9pm", "content": "take my pills", "ack": "asker"}, said)
    assert args.ack == "asker"  # type: ignore[attr-defined]
    unclear = make_ctx(
        clock=lambda: WED.astimezone(UTC),
        text="remind me at 5pm to work on the slides until done with the report",
    )
    with pytest.raises(InvalidArgumentsError, match="need a question first"):
        tool.validate(
            {"when": "at 5pm", "content": "work on the slides until done with the report"},
            unclear,
        )
