"""The eval harness against the scripted stub model: each outcome is judged by what was
stored and answered, and the corpus is complete and runnable."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from groupmate.bot.cli import main
from groupmate.bot.config import LLMSettings, parse_config
from groupmate.bot.eval import Outcome, Verdict, load_cases
from groupmate.bot.eval.cases import Case, RelativeTime
from groupmate.bot.eval.judge import State, judge
from groupmate.bot.eval.relative import Moment, expected, resolve
from groupmate.bot.eval.runner import CaseResult, EvalSettings, eval_config, run_case, run_eval
from groupmate.testing.stub_llm import Reply, StubLLM, calls, error, text

CORPUS = Path(__file__).resolve().parent.parent / "evals"
CASES = {case.id: case for case in load_cases(CORPUS)}


def settings(stub: StubLLM) -> EvalSettings:
    return EvalSettings(base_url=stub.base_url, model="stub", mode="native")


def assert_covers(cases: list[Case], size: int) -> None:
    """`size` cases or more, of every kind the eval measures, in both languages."""
    assert len(cases) >= size
    languages = Counter(case.lang for case in cases)
    assert languages["en"] >= size // 2 and languages["zh"] >= size // 4
    tags = Counter(tag for case in cases for tag in case.tags)
    for needed in ("set", "list", "delete", "snooze", "edit", "summary", "timezone", "search"):
        assert tags[needed] >= max(2, size // 25), needed
    assert tags["talk"] >= size // 10 and tags["refuse"] >= size // 10
    rules = {case.expect.reminder.rule for case in cases if case.expect.reminder}
    assert rules == {"once", "daily", "weekly", "weekdays", "monthly"}


def test_the_corpus_covers_what_the_eval_must_measure() -> None:
    assert_covers(list(CASES.values()), 80)


async def judged(stub: StubLLM, case_id: str, *script: Any) -> CaseResult:
    stub.script(*script)
    return await run_case(CASES[case_id], settings(stub))


async def test_the_right_call_is_right(stub: StubLLM) -> None:
    call = ("reminder_set", {"when": "tomorrow at 9", "content": "call the dentist"})
    result = await judged(stub, "set-tomorrow-9", calls(call))
    assert result.verdict.outcome is Outcome.RIGHT, result.verdict
    assert result.tools == ["reminder_set"]
    assert "Wed 25 Nov 09:00" in result.reply
    assert result.usage.requests == 1 and result.usage.prompt_tokens > 0


async def test_a_call_against_the_users_words_is_repaired_not_stored(stub: StubLLM) -> None:
    daily = ("reminder_set", {"type": "daily", "time": "09:00", "content": "call the dentist"})
    right = ("reminder_set", {"when": "tomorrow at 9", "content": "call the dentist"})
    result = await judged(stub, "set-tomorrow-9", calls(daily), calls(right))
    assert result.verdict.outcome is Outcome.RIGHT, result.verdict
    assert result.repairs == 1
    assert "the message asks for Wed 25 Nov 2026 09:00" in json.dumps(stub.requests[1])


async def test_another_change_than_asked_is_silently_wrong(stub: StubLLM) -> None:
    renamed = ("reminder_update", {"reminder_id": "1", "content": "minerals"})
    result = await judged(stub, "edit-text", calls(renamed))
    assert result.verdict.outcome is Outcome.WRONG
    assert result.verdict.reason == "changed to daily 2026-11-25 07:00 'minerals'"


async def test_a_claim_without_a_deed_reaches_the_user_as_an_offer(stub: StubLLM) -> None:
    result = await judged(stub, "set-tomorrow-9", text("Okay, reminder set for tomorrow 9:00!"))
    assert result.verdict.outcome is Outcome.OFFERED
    assert result.reply.startswith("Nothing is set yet. Set 'call the dentist' for Wed 25 Nov")


def test_a_reply_claiming_a_reminder_that_was_not_stored_is_silently_wrong() -> None:
    nothing = State(reminders=(), other=(), timezone="Europe/Berlin")
    case = CASES["set-tomorrow-9"]
    verdict = judge(case, nothing, nothing, "⏰ Reminder #1 set for tomorrow", [], None)
    assert verdict == Verdict(Outcome.WRONG, "the reply claims a reminder that was not stored")


async def test_an_answer_without_the_asked_facts_is_missed(stub: StubLLM) -> None:
    result = await judged(stub, "summary-picnic", text("People talked."))
    assert result.verdict == Verdict(
        Outcome.MISSED, "the reply lacks 'picnic|lake'; the reply lacks 'saturday'"
    )


async def test_an_endpoint_failure_is_an_error(stub: StubLLM) -> None:
    result = await judged(stub, "set-tomorrow-9", *[error(500, "boom")] * 4)
    assert result.verdict.outcome is Outcome.ERROR


async def test_a_snooze_of_a_reminder_that_went_off(stub: StubLLM) -> None:
    result = await judged(stub, "snooze-10", calls(("reminder_snooze", {"when": "in 10 minutes"})))
    assert result.verdict.outcome is Outcome.RIGHT, result.verdict


async def test_another_chats_reminder_stays_untouched(stub: StubLLM) -> None:
    result = await judged(
        stub,
        "refuse-other-chat",
        calls(("reminder_delete", {"reminder_id": "1"})),
        text("There is no reminder 1 here."),
    )
    assert result.verdict.outcome is Outcome.RIGHT, result.verdict


async def test_a_tool_for_small_talk_is_missed(stub: StubLLM) -> None:
    result = await judged(stub, "talk-hi", calls(("reminder_list", {})), text("hi"))
    assert result.verdict.outcome is Outcome.MISSED
    assert "called reminder_list" in result.verdict.reason


async def test_a_model_that_does_nothing_is_never_right_about_state_nor_wrong(
    stub: StubLLM,
) -> None:
    stub.fallback = text("Sure.")
    results = await run_eval(list(CASES.values()), settings(stub))
    by_outcome = Counter(r.verdict.outcome for r in results)
    assert by_outcome[Outcome.WRONG] == 0 and by_outcome[Outcome.ERROR] == 0
    offered = []
    refused_by_the_bot = []
    for result in results:
        expect = result.case.expect
        changes = expect.changed or expect.deleted or expect.snoozed
        if result.reply.startswith(("Nothing is set:", "Nothing was set:")):
            # The user's own words name a past time: the bot says so, whatever the model.
            assert "refuse" in result.case.tags and result.verdict.outcome is Outcome.RIGHT
            refused_by_the_bot.append(result.case.id)
        elif expect.reminder:
            # Asked for a reminder that was not set: the grammar's reading is offered.
            assert result.verdict.outcome in (Outcome.OFFERED, Outcome.MISSED), result.case.id
            offered.append(result.verdict.outcome is Outcome.OFFERED)
        elif changes or expect.timezone or expect.reply_has:
            assert result.verdict.outcome is Outcome.MISSED, result.case.id
        else:
            assert result.verdict.outcome is Outcome.RIGHT, result.case.id
    assert sum(offered) >= 0.9 * len(offered)
    assert "refuse-today-8am" in refused_by_the_bot  # and "yesterday" as the grammar reads it


def test_the_command_prints_the_table_and_writes_json(
    stub: StubLLM, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stub.fallback = text("hello")
    code = main(
        [
            "eval",
            "--base-url", stub.base_url,
            "--model", "stub",
            "--mode", "prompt",
            "--only", "talk-hi", "talk-joke",
            "--results", str(tmp_path),
        ]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "2 cases, stub at" in out
    assert "right share" in out and "100%" in out
    (written,) = tmp_path.glob("eval-stub-prompt_hermes.json")
    assert '"right": 2' in written.read_text()


async def test_the_right_time_with_paraphrased_words_is_missed_not_wrong(stub: StubLLM) -> None:
    call = ("reminder_set", {"when": "tomorrow at 9", "content": "phone the doctor"})
    result = await judged(stub, "set-tomorrow-9", calls(call))
    assert result.verdict == Verdict(Outcome.MISSED, "stored the text 'phone the doctor'")


HIDDEN = load_cases(CORPUS / "hidden")


def test_the_hidden_corpus_is_of_the_same_kind_and_apart() -> None:
    assert_covers(HIDDEN, 40)
    assert not {case.id for case in HIDDEN} & set(CASES), "ids are shared with the main corpus"
    assert not {case.say for case in HIDDEN} & {case.say for case in CASES.values()}


def via_http(stub: StubLLM) -> EvalSettings:
    return EvalSettings(base_url=stub.base_url, model="stub", mode="native", via="http")


async def test_a_case_posted_to_the_http_api_is_judged_the_same(stub: StubLLM) -> None:
    stub.script(calls(("reminder_set", {"when": "tomorrow at 9", "content": "call the dentist"})))
    result = await run_case(CASES["set-tomorrow-9"], via_http(stub))
    assert result.verdict.outcome is Outcome.RIGHT, result.verdict
    assert "Wed 25 Nov 09:00" in result.reply
    assert via_http(stub).label() == "native via HTTP"


async def test_over_http_the_case_senders_admin_right_reaches_the_tools(stub: StubLLM) -> None:
    # The eval's API has a token, so the posted sender_is_admin is trusted, as a bridge's.
    tokyo = ("set_timezone", {"timezone": "Asia/Tokyo"})
    stub.script(calls(tokyo))
    admin = await run_case(CASES["tz-admin-tokyo"], via_http(stub))
    assert admin.verdict.outcome is Outcome.RIGHT, admin.verdict
    stub.script(calls(tokyo), text("Only an admin can change it."))
    member = await run_case(CASES["tz-member-refused"], via_http(stub))
    assert member.verdict.outcome is Outcome.RIGHT, member.verdict
    assert member.tools == ["set_timezone"] and "admin" in member.reply.lower()


# -- the plain corpus: a new user's requests on the real clock (issue 25) --------------

PLAIN = load_cases(CORPUS / "plain")
BERLIN = ZoneInfo("Europe/Berlin")


def test_the_plain_corpus_is_a_new_users_day_in_a_berlin_group() -> None:
    assert len(PLAIN) >= 30
    assert all(case.real_clock and case.zone == "Europe/Berlin" for case in PLAIN)
    assert not any(case.sender.admin for case in PLAIN)
    reminders = [case for case in PLAIN if case.expect.reminder]
    assert len(reminders) >= 24
    assert Counter(case.lang for case in reminders)["zh"] >= 10
    tags = Counter(tag for case in PLAIN for tag in case.tags)
    for needed in ("list", "delete", "talk", "summary", "negation", "question", "interval"):
        assert tags[needed] >= 1, needed
    assert tags["time-first"] >= 3 and tags["time-last"] >= 3
    assert not {case.id for case in PLAIN} & (set(CASES) | {case.id for case in HIDDEN})


def at(day: int, hour: int, minute: int = 0, month: int = 11, year: int = 2026) -> datetime:
    """A Berlin moment; 2026-11-24 is a Tuesday."""
    return datetime(year, month, day, hour, minute, tzinfo=BERLIN)


@pytest.mark.parametrize(
    ("spec", "now", "first"),
    [
        ({"day": "tomorrow", "at": "09:00"}, at(24, 14, 5), at(25, 9)),
        ({"day": "tomorrow", "at": "09:00"}, at(25, 0, 30), at(26, 9)),  # after midnight
        ({"day": "day_after_tomorrow", "at": "15:00"}, at(24, 14), at(26, 15)),  # 后天
        ({"day": "tomorrow", "at": "12:00"}, at(30, 23, 59), at(1, 12, month=12)),
        ({"day": "today", "at": "20:00"}, at(24, 19), at(24, 20)),  # 今晚8点
        ({"day": "today", "at": "20:00"}, at(24, 21), None),  # said too late: past
        ({"at": "18:00"}, at(24, 17, 59), at(24, 18)),  # still ahead: today
        ({"at": "18:00"}, at(24, 18), at(25, 18)),  # the very minute: tomorrow
        ({"at": "18:00"}, at(24, 19, 5), at(25, 18)),  # after 18:00: tomorrow
        ({"weekday": "monday", "at": "09:00"}, at(30, 8), at(30, 9)),  # Monday, ahead
        ({"weekday": "monday", "at": "09:00"}, at(30, 10), at(7, 9, month=12)),  # gone
        ({"weekday": "monday", "at": "09:00"}, at(29, 23), at(30, 9)),  # Sunday night
        ({"weekday": "friday", "at": "17:00"}, at(27, 18), at(4, 17, month=12)),
        ({"weekday": "wednesday", "next_week": True, "at": "10:00"}, at(24, 9), at(2, 10, 0, 12)),
        ({"weekday": "wednesday", "next_week": True, "at": "10:00"}, at(22, 23), at(25, 10)),
        ({"weekday": "wednesday", "next_week": True, "at": "10:00"}, at(25, 8), at(2, 10, 0, 12)),
        ({"workday": True, "at": "08:30"}, at(27, 8), at(27, 8, 30)),  # Friday, ahead
        ({"workday": True, "at": "08:30"}, at(27, 9), at(30, 8, 30)),  # Friday, gone
        ({"workday": True, "at": "08:30"}, at(28, 7), at(30, 8, 30)),  # Saturday
        ({"month_day": 1, "at": "09:00"}, at(30, 12), at(1, 9, month=12)),
        ({"month_day": 1, "at": "09:00"}, at(1, 10, month=12), at(1, 9, month=1, year=2027)),
        ({"date": "12-24", "at": "18:00"}, at(24, 14), at(24, 18, month=12)),
        ({"date": "12-24", "at": "18:00"}, at(24, 19, month=12), None),  # today, gone
        ({"date": "12-24", "at": "18:00"}, at(25, 9, month=12), at(24, 18, 0, 12, 2027)),
        ({"date": "02-29", "at": "09:00"}, at(1, 9, month=3), at(29, 9, 0, 2, 2028)),
        ({"in_minutes": 120}, at(24, 23, 30), at(25, 1, 30)),
        # Spring forward (29 March 2026): tomorrow's 09:00 is CEST, an hour less in UTC.
        ({"day": "tomorrow", "at": "09:00"}, at(28, 12, month=3), at(29, 9, month=3)),
    ],
)
def test_the_judge_reads_a_relative_time_itself(
    spec: dict[str, Any], now: datetime, first: datetime | None
) -> None:
    got = resolve(RelativeTime(**spec), BERLIN, now)
    assert got == first
    if got is not None:
        assert got.astimezone(BERLIN).strftime("%H:%M") == spec.get("at", got.strftime("%H:%M"))


def test_an_interval_admits_every_minute_the_bot_may_have_read_its_clock_at() -> None:
    moment = Moment(at(24, 14, 5).replace(second=50), at(24, 14, 8).replace(second=10))
    times = expected(RelativeTime(in_minutes=120), "Europe/Berlin", moment)
    assert [times.admits(at(24, 16, m)) for m in (4, 5, 6, 8, 9)] == [
        False,
        True,
        True,
        True,
        False,
    ]


def test_a_time_said_as_it_passes_admits_today_or_tomorrow_and_nothing_between() -> None:
    moment = Moment(at(24, 17, 59).replace(second=50), at(24, 18, 0).replace(second=40))
    times = expected(RelativeTime(at="18:00"), "Europe/Berlin", moment)
    assert times.admits(at(24, 18)) and times.admits(at(25, 18))
    assert not times.admits(at(25, 9)) and not times.past_ok
    assert times.describe(BERLIN) == "2026-11-24 18:00 or 2026-11-25 18:00"
    tonight = RelativeTime(day="today", at="18:00")
    assert expected(tonight, "Europe/Berlin", moment).past_ok  # nothing stored is right too
    later = expected(tonight, "Europe/Berlin", Moment.at(at(24, 19)))
    assert later.past and later.describe(BERLIN) == "a time already past"


def test_a_fixed_time_admits_both_readings_of_the_hour_that_occurs_twice() -> None:
    times = expected("2026-10-25 02:30", "Europe/Berlin", Moment.at(at(24, 9, month=10)))
    assert len(times.spans) == 2


@pytest.mark.parametrize(
    "spec",
    [
        {"day": "tomorrow", "weekday": "monday", "at": "09:00"},
        {"in_minutes": 30, "at": "09:00"},
        {"day": "tomorrow"},
        {"next_week": True, "at": "09:00"},
        {"date": "02-30", "at": "09:00"},
        {"at": "25:00"},
        {"month_day": 31, "at": "09:00"},
    ],
)
def test_a_relative_time_that_names_no_single_moment_is_refused(spec: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        RelativeTime(**spec)


@pytest.mark.parametrize(
    "change",
    [
        {"expect": {"reminder": {"rule": "once", "first": "2026-11-25 09:00", "content": "x"}}},
        {"reminders": [{"remind": "in 5 minutes stretch", "gone_off": True}]},
        {"expect": {"snoozed": 10}},
    ],
)
def test_a_real_clock_case_cannot_name_a_fixed_date_nor_go_back(change: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="now"):
        Case.model_validate({"id": "x", "say": "hi", "expect": {}} | change)


def test_nothing_stored_is_right_for_a_time_gone_and_an_offer_nobody_asked_for_missed() -> None:
    nothing = State(reminders=(), other=(), timezone="Europe/Berlin")
    plain = {case.id: case for case in PLAIN}
    late = Moment.at(at(24, 23, 30))
    assert (
        judge(plain["p-en-tonight"], nothing, nothing, "", [], None, late).outcome.value == "right"
    )
    offer = "Nothing is set yet. Set 'the meeting' for Wed 25 Nov 09:00? Reply yes."
    verdict = judge(plain["p-en-no-more-reminders"], nothing, nothing, offer, [], None, late)
    assert verdict == Verdict(Outcome.MISSED, "offered a reminder nobody asked for")


def test_the_minimal_config_is_a_new_users_and_the_rest_are_defaults(tmp_path: Path) -> None:
    minimal = EvalSettings(base_url="http://127.0.0.1:1/v1", model="m", mode="prompt")
    minimal = dataclasses.replace(minimal, profile="minimal", temperature=0.7)
    admin = CASES["tz-admin-tokyo"]
    raw = eval_config(admin, minimal, tmp_path, "token")
    assert raw["llm"] == {"base_url": "http://127.0.0.1:1/v1", "model": "m", "tool_mode": "prompt"}
    config = parse_config(raw, environ={})
    assert config.bot.admins == [] and config.bot.timezone == "Europe/Berlin"
    unset = {"base_url", "model", "tool_mode"}
    assert config.llm.model_dump(exclude=unset) == LLMSettings().model_dump(exclude=unset)
    assert config.bot.rate_limits == parse_config({}, environ={}).bot.rate_limits
    tuned = parse_config(eval_config(admin, settings_for("x"), tmp_path, "token"), environ={})
    assert tuned.bot.admins == [admin.sender.id] and tuned.llm.max_output_tokens == 1024
    assert minimal.label() == "minimal prompt"


def settings_for(base_url: str, **fields: Any) -> EvalSettings:
    return EvalSettings(base_url=base_url, model="stub", mode="prompt", **fields)


def hermes(name: str, arguments: dict[str, Any]) -> Reply:
    return text(
        f'<tool_call>\n{{"name": "{name}", "arguments": {json.dumps(arguments)}}}\n</tool_call>'
    )


def plain_group(request: dict[str, Any]) -> Reply:
    """The model of the two plain cases below: small talk, else the car reminder and its
    answer (the bot may also set that one itself, from the grammar, without asking)."""
    said = json.dumps(request["messages"], ensure_ascii=False)
    if "what can you do" in said:
        return text("Hi! I can set reminders and sum up the chat.")
    if "<tool_response>" in said:
        return text("Set for in 2 hours.")
    return hermes("reminder_set", {"when": "in 2 hours", "content": "move the car"})


async def test_a_minimal_run_over_http_is_a_members_message_at_the_real_time(
    stub: StubLLM,
) -> None:
    minimal = settings_for(stub.base_url, via="http", profile="minimal")
    stub.fallback = plain_group
    plain = {case.id: case for case in PLAIN}
    results = await run_eval([plain["p-en-can-you-2-hours"], plain["p-en-talk"]], minimal)
    assert [r.verdict.outcome for r in results] == [Outcome.RIGHT] * 2, results
    assert len(stub.warm_ups) == 2  # each case's bot warmed up first, as a user's does
    talk = stub.requests[-1]
    # The defaults, not the eval's tuned 1024; the real date, not a case's fixed one.
    assert talk["max_tokens"] == LLMSettings().max_output_tokens
    now = datetime.now(BERLIN)
    assert f"now {now:%A, %Y-%m-%d}" in json.dumps(talk, ensure_ascii=False)


async def test_a_minimal_run_over_http_never_makes_the_sender_an_admin(stub: StubLLM) -> None:
    minimal = settings_for(stub.base_url, via="http", profile="minimal")
    stub.script(hermes("set_timezone", {"timezone": "Asia/Tokyo"}), text("Only admins can."))
    result = await run_case(CASES["tz-admin-tokyo"], minimal)
    assert result.case.sender.admin is False and result.tools == ["set_timezone"]
    assert result.verdict == Verdict(Outcome.MISSED, "time zone unchanged")


def test_a_reply_with_internal_text_is_counted_against_the_run() -> None:
    from groupmate.bot.eval.report import shows_internal_text

    assert shows_internal_text("Sorry: the details for reminder_set were invalid ((arguments) x)")
    assert shows_internal_text('{"name": "reminder_set", "arguments": {"when": "9"}}')
    assert not shows_internal_text("⏰ Reminder #1 set for Wed 25 Nov 09:00 (Europe/Berlin): x")
    assert not shows_internal_text("Nothing was set: I couldn't read that as a reminder.")
