"""The eval harness against the scripted stub model: each outcome is judged by what was
stored and answered, and the corpus is complete and runnable."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bot.cli import main
from bot.eval import Outcome, Verdict, load_cases
from bot.eval.cases import Case
from bot.eval.judge import State, judge
from bot.eval.runner import CaseResult, EvalSettings, run_case, run_eval
from tests.stub_llm import StubLLM, calls, error, text

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
        if result.reply.startswith("Nothing is set:"):
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
    assert refused_by_the_bot == ["refuse-today-8am"]


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
