"""`<think>` as reasoning markup around calls, and as literal text inside call arguments."""

from __future__ import annotations

import json
from typing import Any

import pytest

from groupmate.function_calls.handlers import builtin_tools
from groupmate.function_calls.prompt_parser import parse_tool_calls
from groupmate.function_calls.tolerant_json import ParsedCall
from groupmate.storage import ReminderService
from groupmate.testing.stub_llm import StubLLM, calls, text
from tests.conftest import FakeClock, chat_ctx
from tests.test_reminder_tools import active

KNOWN = {"reminder_set": frozenset({"type", "time", "content"}), "get_time": frozenset({"tz"})}
LITERAL = "<think> about it"


def _hermes(arguments: dict[str, Any]) -> str:
    body = json.dumps({"name": "reminder_set", "arguments": arguments})
    return f"<tool_call>\n{body}\n</tool_call>"


def _json_format(arguments: dict[str, Any]) -> str:
    return json.dumps({"tool_calls": [{"name": "reminder_set", "parameters": arguments}]})


@pytest.mark.parametrize("content", [LITERAL, "</think> then", "a <thinking> b </think> c"])
@pytest.mark.parametrize("render", [_hermes, _json_format], ids=["hermes", "json"])
def test_reasoning_tags_inside_arguments_are_argument_text(render: Any, content: str) -> None:
    arguments = {"type": "daily", "time": "9:00", "content": content}
    reply = parse_tool_calls(render(arguments), KNOWN)
    assert reply.calls == (ParsedCall("reminder_set", arguments),)
    assert reply.malformed == ()
    assert reply.text == ""


def test_reasoning_before_a_call_with_a_literal_tag_is_still_dropped() -> None:
    arguments = {"type": "daily", "time": "9:00", "content": LITERAL}
    raw = "<think>The user wants a reminder.</think>\nSetting it." + _hermes(arguments)
    reply = parse_tool_calls(raw, KNOWN)
    assert reply.calls == (ParsedCall("reminder_set", arguments),)
    assert reply.text == "Setting it."


def test_deepseek_reasoning_with_a_literal_tag_in_the_real_call() -> None:
    arguments = {"type": "daily", "time": "9:00", "content": "</think> twice"}
    raw = "They want a daily reminder.\n</think>\n\n" + _hermes(arguments)
    reply = parse_tool_calls(raw, KNOWN)
    assert reply.calls == (ParsedCall("reminder_set", arguments),)
    assert reply.text == ""


def test_an_unclosed_draft_call_in_deepseek_reasoning_does_not_swallow_the_answer() -> None:
    # The reply starts inside the reasoning (the template opened it); the draft call there
    # is never closed, and must end where the reasoning ends.
    raw = (
        "I'll call <tool_call> with the zone, hmm, no: they just greet.\n</think>\n\n"
        "Hallo! Wie geht's?"
    )
    reply = parse_tool_calls(raw, KNOWN)
    assert reply.calls == ()
    assert reply.malformed == ()
    assert reply.text == "Hallo! Wie geht's?"


def test_json_data_the_model_shows_keeps_a_literal_tag() -> None:
    reply = parse_tool_calls('Example: {"note": "<think> about it"}', KNOWN)
    assert reply.calls == ()
    assert reply.text == 'Example: {"note": "<think> about it"}'


@pytest.mark.parametrize(
    ("tool_mode", "prompt_format"),
    [("native", "hermes"), ("prompt", "hermes"), ("prompt", "json")],
    ids=["native", "prompt-hermes", "prompt-json"],
)
async def test_a_reminder_about_think_tags_is_stored_verbatim(
    reminders: ReminderService,
    clock: FakeClock,
    stub: StubLLM,
    make_llm: Any,
    tool_mode: str,
    prompt_format: str,
) -> None:
    arguments = {"when": "daily at 9", "content": LITERAL}
    if tool_mode == "native":
        stub.script(calls(("reminder_set", arguments)))
    else:
        render = _hermes if prompt_format == "hermes" else _json_format
        stub.script(text(render(arguments)), text("Done."))
    llm = make_llm(builtin_tools(), tool_mode=tool_mode, prompt_format=prompt_format)
    result = await llm.run(chat_ctx(reminders, clock), "remind us daily at 9: <think> about it")
    assert [(c.outcome, c.direct) for c in result.calls] == [("ok", True)]
    assert result.text.startswith("⏰ Reminder #1 set for Sun 22 Nov 09:00")
    assert result.text.endswith(f": {LITERAL}")
    assert await active(reminders, "chat-1") == [LITERAL]
