"""No internal text reaches a user.

A corpus of failing model outputs (invalid arguments until the repairs run out, unknown
and hidden tools, unreadable calls, calls and repair reports written as the answer,
validation wording, Python reprs), each run through the real loop in native and in
prompt mode against the scripted stub server. Every reply the user gets is checked
against the one vocabulary of internal markers (`internal_marker`), and must be
non-empty and in the language the user wrote in.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, model_validator

from groupmate.function_calls import (
    FunctionResult,
    MessageContext,
    ToolInvoker,
    ToolRegistry,
    TurnEnding,
    TurnResult,
    tool_function,
)
from groupmate.function_calls._shaping import tool_parameters
from groupmate.function_calls.internal_text import (
    COULD_NOT_DO,
    INTERNAL_MARKERS,
    NO_ANSWER,
    NOT_AVAILABLE,
    UNFINISHED,
    internal_marker,
)
from groupmate.function_calls.language import CJK
from groupmate.function_calls.turn import CallMode
from groupmate.testing import stub_llm as s
from tests.conftest import make_ctx

Mode = CallMode


class ReminderArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    when: str = Field(min_length=1, description="When, in words: 'tomorrow at 9'")
    content: str = Field(min_length=1, max_length=100)

    @model_validator(mode="after")
    def _not_shouted(self) -> ReminderArgs:
        if self.content.isupper():
            raise ValueError("content must not be all caps")
        return self


class DeleteArgs(BaseModel):
    reminder_id: str = Field(pattern="^#?[0-9]+$")


class QueryArgs(BaseModel):
    query: str = Field(min_length=1)


@pytest.fixture
def ran() -> list[str]:
    return []


@pytest.fixture
def tools(registry: ToolRegistry, ran: list[str]) -> ToolRegistry:
    @tool_function(name="reminder_set", description="Set a reminder", registry=registry)
    async def reminder_set(ctx: MessageContext, args: ReminderArgs) -> FunctionResult:
        ran.append("reminder_set")
        return FunctionResult.direct(f"⏰ Reminder set: {args.content}", data={"id": "r1"})

    @tool_function(name="reminder_delete", description="Delete a reminder", registry=registry)
    async def reminder_delete(ctx: MessageContext, args: DeleteArgs) -> FunctionResult:
        ran.append("reminder_delete")
        return FunctionResult.direct(f"Deleted {args.reminder_id}.")

    @tool_function(name="web_search", description="Search the web", registry=registry)
    async def web_search(ctx: MessageContext, args: QueryArgs) -> FunctionResult:
        ran.append("web_search")
        return FunctionResult.for_model({"results": [{"title": "Oslo", "snippet": "cold"}]})

    # The lookups change nothing: their failures are no failed writes (see test_failed_writes).
    @tool_function(
        name="slow_lookup",
        description="Look up slowly",
        registry=registry,
        timeout=0.05,
        effect="read",
    )
    async def slow_lookup(ctx: MessageContext, args: QueryArgs) -> FunctionResult:
        await asyncio.sleep(5)
        return FunctionResult.for_model("never")

    @tool_function(
        name="broken_lookup", description="Look up, badly", registry=registry, effect="read"
    )
    async def broken_lookup(ctx: MessageContext, args: QueryArgs) -> FunctionResult:
        raise RuntimeError("db password=hunter2 rejected")

    @tool_function(name="purge_chat", description="Admins only", registry=registry, admin_only=True)
    async def purge_chat(ctx: MessageContext) -> FunctionResult:
        ran.append("purge_chat")
        return FunctionResult.direct("purged")

    # A tool whose name is a word: "help" in an answer is not internal text.
    @tool_function(name="help", description="What the bot can do", registry=registry)
    async def show_help(ctx: MessageContext) -> FunctionResult:
        return FunctionResult.direct("I can set reminders and search.")

    return registry


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call: native tool_calls in native mode, a <tool_call> block in prompt mode.
    `arguments` as a str is the raw text the model wrote (broken JSON, say)."""

    name: str
    arguments: Any

    def hermes(self) -> str:
        raw = self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)
        return f'<tool_call>\n{{"name": "{self.name}", "arguments": {raw}}}\n</tool_call>'


# Text the model answers with, in either mode; a tuple is several calls in one reply.
Step = Call | str | tuple[Call, ...]


def reply(step: Step, mode: Mode) -> s.Reply:
    if isinstance(step, str):
        return s.text(step)
    calls = step if isinstance(step, tuple) else (step,)
    if mode == "native":
        return s.calls(*((call.name, call.arguments) for call in calls))
    return s.text("\n".join(call.hermes() for call in calls))


@dataclass(frozen=True, slots=True)
class Failing:
    """The model's answers to `said`, in order; the last one it repeats for good."""

    id: str
    said: str
    steps: tuple[Step, ...]
    ending: TurnEnding


def refused(id: str, said: str, *steps: Step) -> Failing:
    return Failing(id, said, steps, "repairs_ran_out")


def withheld(id: str, said: str, *steps: Step) -> Failing:
    return Failing(id, said, steps, "withheld")


EN_REMIND = "remind me tomorrow at 9 to call mom"
ZH_REMIND = "明天早上9点提醒我给妈妈打电话"
EN_SEARCH = "what's the weather in Oslo?"
ZH_SEARCH = "奥斯陆天气怎么样？"
OLD_MESSAGE = (
    "Sorry, I couldn't do that: the details for reminder_set were invalid ((arguments) "
    "content must not be all caps). Please rephrase your request."
)
REPORT = (
    '{"error":"invalid arguments for reminder_set","issues":[{"path":"when","problem":'
    '"required field is missing","received":"nothing"}],"fix":"Correct these arguments '
    'and call reminder_set again."}'
)
PYDANTIC = (
    "1 validation error for ReminderArgs\nwhen\n  Field required [type=missing, "
    "input_value={'content': 'call mom'}, input_type=dict]\n    For further information "
    "visit https://errors.pydantic.dev/2.11/v/missing"
)
TRACEBACK = (
    "Traceback (most recent call last):\n  File \"bot.py\", line 3, in <module>\nKeyError: 'when'"
)
DEEPSEEK = (
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>web_search\n"
    '```json\n{"query": \n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>'
)
SET_MOM = Call("reminder_set", {"when": "tomorrow 9am", "content": "call mom"})
SEARCHES = [Call("web_search", {"query": query}) for query in ("Oslo", "weather", "today", "now")]

CORPUS: tuple[Failing, ...] = (
    # Invalid arguments, every time: the repairs run out.
    refused("missing-when-en", EN_REMIND, Call("reminder_set", {"content": "call mom"})),
    refused("missing-when-zh", ZH_REMIND, Call("reminder_set", {"content": "给妈妈打电话"})),
    refused("empty-content-en", EN_REMIND, Call("reminder_set", {"when": "9am", "content": ""})),
    refused(
        "unknown-field-zh",
        ZH_REMIND,
        Call("reminder_set", {"when": "明天早上9点", "content": "打电话", "chat_id": "g2"}),
    ),
    refused("wrong-type-en", EN_REMIND, Call("reminder_set", {"when": 9, "content": "call mom"})),
    refused("wrong-type-zh", ZH_REMIND, Call("reminder_set", {"when": ["明天"], "content": "打"})),
    refused("broken-arguments-en", EN_REMIND, Call("reminder_set", '{"when": "tomorrow 9am"')),
    refused("array-arguments-zh", ZH_REMIND, Call("reminder_set", '["明天早上9点"]')),
    refused(
        "model-validator-en",
        EN_REMIND,
        Call("reminder_set", {"when": "tomorrow 9am", "content": "CALL MOM"}),
    ),
    refused(
        "too-long-zh",
        ZH_REMIND,
        Call("reminder_set", {"when": "明天早上9点", "content": "打" * 101}),
    ),
    refused("bad-id-en", "delete reminder abc", Call("reminder_delete", {"reminder_id": "abc"})),
    refused("bad-id-zh", "删除提醒abc", Call("reminder_delete", {"reminder_id": "第一个"})),
    refused(
        "then-another-mistake-en",
        EN_REMIND,
        Call("reminder_set", {"content": "call mom"}),
        Call("reminder_set", {"when": "", "content": "call mom"}),
    ),
    # Tools that do not exist, or are not offered to this sender here.
    refused("unknown-tool-en", EN_REMIND, Call("set_alarm", {"time": "09:00"})),
    refused("unknown-tool-zh", ZH_REMIND, Call("create_reminder", {"when": "明天"})),
    refused("hidden-tool-en", "purge this chat", Call("purge_chat", {})),
    refused("hidden-tool-zh", "清空这个群的聊天记录", Call("purge_chat", {})),
    # Calls that cannot be read.
    refused(
        "unclosed-call-en",
        EN_REMIND,
        '<tool_call>{"name": "reminder_set", "arguments": {"when": </tool_call>',
    ),
    refused(
        "unclosed-call-zh",
        ZH_REMIND,
        '<tool_call>{"name": "reminder_set", "arguments": {"content": "打电话",</tool_call>',
    ),
    refused("bracket-soup-en", EN_SEARCH, "<tool_call>{{{{</tool_call>"),
    refused("deepseek-markers-zh", ZH_SEARCH, DEEPSEEK),
    # Calls and reports written as the answer.
    withheld(
        "call-json-unclosed-en",
        EN_REMIND,
        '{"name": "reminder_set", "arguments": {"when": "tomorrow 9am", "content": "call mom"',
    ),
    withheld(
        "call-json-unclosed-zh",
        ZH_REMIND,
        '好的：{"name": "reminder_set", "arguments": {"when": "明天早上9点"',
    ),
    withheld(
        "tool-calls-wrapper-unclosed-en",
        EN_SEARCH,
        '{"tool_calls": [{"name": "web_search", "parameters": {"query": "Oslo weather"',
    ),
    withheld(
        "python-dict-call-zh",
        ZH_REMIND,
        "{'name': 'reminder_set', 'arguments': {'when': '明天', 'content': '打电话'",
    ),
    withheld("function-tag-en", EN_REMIND, '<function=reminder_set>{"when": "9am"}</function>'),
    withheld("old-message-echo-en", EN_REMIND, OLD_MESSAGE),
    withheld("report-echo-en", EN_REMIND, REPORT),
    withheld("report-echo-zh", ZH_REMIND, f"出错了：{REPORT}"),
    withheld(
        "python-report-zh",
        ZH_REMIND,
        "{'error': 'invalid arguments for reminder_set', 'issues': [{'path': 'when'}]}",
    ),
    withheld(
        "argument-issue-repr-en",
        EN_REMIND,
        "ArgumentIssue(path='when', problem='required field is missing', received='nothing')",
    ),
    withheld("pydantic-en", EN_REMIND, PYDANTIC),
    withheld("pydantic-phrase-zh", ZH_REMIND, "抱歉，Input should be a valid string。"),
    withheld("field-required-zh", ZH_REMIND, "设置失败：when: Field required"),
    withheld("validation-error-en", EN_REMIND, "There was a validation error with the time."),
    withheld("validation-error-class-zh", ZH_REMIND, "ValidationError：时间格式不对"),
    withheld("jsonschema-en", EN_REMIND, "'when' is a required property"),
    withheld("traceback-en", EN_SEARCH, TRACEBACK),
    withheld(
        "object-repr-zh", ZH_SEARCH, "<function_calls.result.FunctionResult object at 0x7f3a>"
    ),
    withheld("tool-name-en", EN_REMIND, "I'll use reminder_set to do that for you."),
    withheld("tool-name-zh", ZH_REMIND, "我用reminder_set帮你设置好了"),
    withheld("root-path-en", EN_REMIND, "The (arguments) were not right, sorry."),
    withheld("bare-arguments-en", EN_REMIND, '{"when": "tomorrow 9am", "content": "call mom"}'),
    withheld(
        "fenced-arguments-zh",
        ZH_REMIND,
        '```json\n{"when": "明天早上9点", "content": "给妈妈打电话"}\n```',
    ),
    withheld("unknown-tool-echo-zh", ZH_REMIND, "unknown tool 'set_alarm'，可用：web_search"),
    withheld("nudge-echo-en", EN_SEARCH, "Answer my last message directly in plain text."),
    withheld("template-token-en", EN_SEARCH, "It is cold in Oslo.<|eot|>"),
    # A tool failed and the model repeats what it was told.
    withheld(
        "timeout-echo-en",
        EN_SEARCH,
        Call("slow_lookup", {"query": "Oslo"}),
        "slow_lookup timed out after 0.05 s",
    ),
    withheld(
        "crash-echo-zh",
        ZH_SEARCH,
        Call("broken_lookup", {"query": "奥斯陆"}),
        "broken_lookup failed with an internal error",
    ),
    # After a tool's own reply, an internal answer is dropped, not apologised for.
    withheld(
        "after-a-reply-en",
        EN_REMIND,
        (SET_MOM, Call("web_search", {"query": "mom"})),
        '{"name": "web_search", "arguments": {"query": "mom"',
    ),
    # A made-up tool result alone, or nothing: nothing to show, even after a nudge.
    Failing(
        "fake-result-zh",
        ZH_SEARCH,
        ('<tool_response>{"name": "web_search", "content": "cold"}</tool_response>',),
        "no_answer",
    ),
    Failing("silence-en", EN_SEARCH, ("",), "no_answer"),
    Failing(
        "silence-after-a-reply-zh",
        ZH_REMIND,
        (
            (
                Call("reminder_set", {"when": "明天早上9点", "content": "打电话"}),
                Call("web_search", {"query": "妈妈"}),
            ),
            "",
        ),
        "no_answer",
    ),
    # Valid calls, different each round, until the rounds run out.
    Failing(
        "rounds-en", EN_SEARCH, (*SEARCHES, Call("web_search", {"query": "Oslo?"})), "out_of_rounds"
    ),
    Failing(
        "rounds-zh",
        ZH_SEARCH,
        (*SEARCHES, Call("web_search", {"query": "奥斯陆"})),
        "out_of_rounds",
    ),
)

PLAIN = {
    "repairs_ran_out": (COULD_NOT_DO, NOT_AVAILABLE),
    "withheld": (COULD_NOT_DO,),
    "no_answer": (NO_ANSWER,),
    "out_of_rounds": (UNFINISHED,),
}


def assert_plain(result: TurnResult, said: str, registry: ToolRegistry) -> None:
    """What the user gets: something, in their language, and nothing internal."""
    assert result.replies and all(part.strip() for part in result.replies)
    visible = ToolInvoker(registry).offered(make_ctx())
    parameters = tool_parameters({tool.name: tool for tool in visible})
    for part in result.replies:
        marker = internal_marker(part, registry.names(), parameters)
        assert marker is None, f"{marker} in {part!r}"
    assert bool(CJK.search(result.text)) == bool(CJK.search(said)), result.text


@pytest.mark.parametrize("mode", ["native", "prompt"])
@pytest.mark.parametrize("case", CORPUS, ids=[case.id for case in CORPUS])
async def test_no_internal_text_reaches_the_user(
    stub, make_llm, tools: ToolRegistry, ran: list[str], case: Failing, mode: Mode
) -> None:
    *first, last = (reply(step, mode) for step in case.steps)
    stub.script(*first)
    stub.fallback = last
    result = await make_llm(tools, tool_mode=mode).run(make_ctx(), case.said)
    assert result.ending == case.ending
    assert_plain(result, case.said, tools)
    if case.ending in PLAIN:
        sentences = {sentence.for_message(case.said) for sentence in PLAIN[case.ending]}
        told = result.replies[-1]
        if "reminder_set" in ran:  # after a tool's own reply, no apology for the model's words
            assert told.startswith("⏰") and len(result.replies) == 1
        else:
            assert told in sentences
    if case.ending == "repairs_ran_out":
        assert result.error == result.replies[-1]
        assert "purge_chat" not in ran and "reminder_delete" not in ran


def test_the_corpus_is_big_and_bilingual() -> None:
    chinese = [case for case in CORPUS if CJK.search(case.said)]
    assert len(CORPUS) >= 40 and 15 <= len(chinese) <= len(CORPUS) - 15


# Internal text, at least one for every marker of the vocabulary.
INTERNAL = {
    "argument root path": "(arguments) text must not be all caps",
    "tool-call tag": 'Sure </tool_call> <tool_code>{"name": "x"}',
    "template token": "Done.<|im_end|>",
    "tool-call JSON": '{"function": {"name": "set_alarm", "arguments": "{}"}}',
    "repair report": '{"shown_to_user": "Saved"}',
    "validation wording": "String should have at least 1 character",
    "validation error": "2 validation errors for NoteArgs",
    "python repr": "<bot.Thing object at 0x7f00aa>",
    "tool name": "calling reminder_delete now",
    "tool arguments": '{"reminder_id": "4"}',
}


def test_every_marker_has_an_example() -> None:
    names = {marker.name for marker in INTERNAL_MARKERS} | {"tool name", "tool arguments"}
    assert set(INTERNAL) == names


@pytest.mark.parametrize(("name", "text"), INTERNAL.items(), ids=list(INTERNAL))
def test_internal_text_is_recognised(name: str, text: str, tools: ToolRegistry) -> None:
    parameters = tool_parameters({tool.name: tool for tool in tools})
    assert internal_marker(text, tools.names(), parameters) == name


# Answers that merely look technical stay answers.
LEGITIMATE = (
    "Done, I set the alarm for 9.",
    "I can help with that: tell me when.",
    "Here is a summary of today's chat.",
    'In Python: `d = {"a": 1}` makes a dict; `d["a"]` reads it.',
    '```json\n{"name": "Alice", "age": 30}\n```',
    "The reminder is set for tomorrow at 09:00.",
    "Use /remind tomorrow at 9 call mom, or ask me in words.",
    "Oslo is cold today: -3 °C. Source: yr.no {updated hourly}",
    "function f(x) { return x + 1; }",
    "The form has a required field for your name.",
    "好的，明天早上9点提醒你给妈妈打电话。",
    "奥斯陆今天很冷，零下3度。",
    "reminder set ✅",
    "Error 404 means the page was not found.",
    "I couldn't find anything about that; try other words?",
    '{"when": "tomorrow", "where": "Oslo"}',  # not any one tool's arguments
    "My name is groupmate; type /help to see what I do.",
)


@pytest.mark.parametrize("text", LEGITIMATE)
def test_legitimate_answers_are_not_censored(text: str, tools: ToolRegistry) -> None:
    parameters = tool_parameters({tool.name: tool for tool in tools})
    assert internal_marker(text, tools.names(), parameters) is None


@pytest.mark.parametrize("mode", ["native", "prompt"])
async def test_a_legitimate_answer_is_passed_on(
    stub, make_llm, tools: ToolRegistry, mode: Mode
) -> None:
    answer = 'In JSON, `{"name": "Alice"}` is an object; I can help with more.'
    stub.script(s.text(answer))
    result = await make_llm(tools, tool_mode=mode).run(make_ctx(), "what's a JSON object?")
    assert (result.text, result.ending, result.error) == (answer, "answered", None)
