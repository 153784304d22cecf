from __future__ import annotations

import asyncio
import json
import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from pydantic import BaseModel, Field, model_validator

from groupmate.function_calls import (
    ChatTurn,
    FunctionResult,
    MessageContext,
    ToolError,
    ToolRegistry,
    tool_function,
)
from groupmate.function_calls.internal_text import (
    COULD_NOT_DO,
    NO_ANSWER,
    NOT_AVAILABLE,
    UNFINISHED,
)
from groupmate.testing import stub_llm as s
from tests.conftest import FIXED_NOW, make_ctx

ONE_DAY = timedelta(days=1)


class CityArgs(BaseModel):
    city: str = Field(..., description="City name, e.g. Berlin")


class NoteArgs(BaseModel):
    text: str = Field(min_length=1, max_length=50)
    priority: int = Field(default=1, ge=1, le=3)

    @model_validator(mode="after")
    def _no_shouting(self) -> NoteArgs:
        if self.text.isupper():
            raise ValueError("text must not be all caps")
        return self


class Calls:
    """Records handler executions so tests can assert what really ran."""

    def __init__(self) -> None:
        self.log: list[tuple[str, Any]] = []

    def names(self) -> list[str]:
        return [name for name, _ in self.log]


@pytest.fixture
def calls() -> Calls:
    return Calls()


@pytest.fixture
def tools(registry: ToolRegistry, calls: Calls) -> ToolRegistry:
    @tool_function(description="Current weather for a city", registry=registry)
    async def weather(ctx: MessageContext, args: CityArgs) -> FunctionResult:
        calls.log.append(("weather", args.city))
        return FunctionResult.for_model({"city": args.city, "temp_c": 21, "sky": "sonnig ☀"})

    @tool_function(description="Save a note", registry=registry)
    async def add_note(ctx: MessageContext, args: NoteArgs) -> FunctionResult:
        calls.log.append(("add_note", (ctx.chat_id, ctx.sender_id, args.text)))
        return FunctionResult.direct(f"Saved: {args.text}")

    @tool_function(description="List notes", registry=registry)
    async def list_notes(ctx: MessageContext) -> FunctionResult:
        calls.log.append(("list_notes", None))
        return FunctionResult.for_model({"notes": [{"id": 7, "text": "buy milk"}]})

    @tool_function(description="Delete a note", registry=registry, admin_only=True)
    async def delete_note(ctx: MessageContext, args: NoteArgs) -> FunctionResult:
        calls.log.append(("delete_note", args.text))
        return FunctionResult.direct("deleted")

    @tool_function(description="Only in private chats", registry=registry, scope="private")
    async def private_diary(ctx: MessageContext) -> FunctionResult:
        calls.log.append(("private_diary", None))
        return FunctionResult.direct("diary")

    return registry


def _tool_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


async def test_direct_reply_costs_a_single_llm_call(stub, make_llm, tools, calls, ctx) -> None:
    stub.script(s.calls(("add_note", {"text": "buy milk"})))
    result = await make_llm(tools).run(ctx, "note: buy milk")
    assert result.replies == ["Saved: buy milk"]
    assert result.llm_calls == 1 and len(stub.requests) == 1
    assert calls.log == [("add_note", ("chat-1", "u-alice", "buy milk"))]
    assert [(r.outcome, r.direct) for r in result.calls] == [("ok", True)]


async def test_data_result_is_phrased_by_the_model(stub, make_llm, tools, calls, ctx) -> None:
    stub.script(s.calls(("weather", {"city": "Köln"})), s.text("It's 21 °C and sunny in Köln."))
    result = await make_llm(tools).run(ctx, "weather in Köln?")
    assert result.text == "It's 21 °C and sunny in Köln."
    assert result.llm_calls == 2
    [tool_message] = _tool_messages(stub.requests[1])
    # Compact JSON, non-ASCII kept.
    assert tool_message["content"] == '{"city":"Köln","temp_c":21,"sky":"sonnig ☀"}'
    assert tool_message["tool_call_id"] == stub.requests[1]["messages"][-2]["tool_calls"][0]["id"]


async def test_tools_are_sent_with_compact_schemas(stub, make_llm, tools, ctx) -> None:
    stub.script(s.text("hi"))
    await make_llm(tools).run(ctx, "the weather, then save a note and list my notes")
    sent = {t["function"]["name"]: t["function"] for t in stub.requests[0]["tools"]}
    # admin-only and private-only tools are not offered to a non-admin in a group.
    assert set(sent) == {"weather", "add_note", "list_notes"}
    assert sent["weather"]["strict"] is True
    assert "strict" not in sent["add_note"]  # priority has a default: not strict-compatible
    assert "title" not in json.dumps(sent)


async def test_requests_carry_the_api_key_and_the_tools_but_not_the_hosts_platform(
    stub, make_llm, tools, ctx
) -> None:
    stub.script(s.text("hi"), s.text("hi again"))
    llm = make_llm(tools)
    await llm.run(ctx, "weather and notes")
    await llm.run(ctx, "weather and notes again")
    first, second = stub.headers
    assert second.keys() == first.keys()  # the same headers for every request
    assert first["authorization"] == "Bearer sk-test-secret"
    assert first["content-type"] == "application/json"
    told = {name for name in first if name.startswith("x-stainless-")}
    assert told <= {"x-stainless-retry-count", "x-stainless-read-timeout"}  # no OS, CPU, Python
    # The tool list is sent whole in every request, beside the request's own messages.
    assert stub.requests[0]["tools"] == stub.requests[1]["tools"]
    assert {t["function"]["name"] for t in stub.requests[1]["tools"]} == {
        "weather",
        "add_note",
        "list_notes",
    }
    assert stub.requests[1]["messages"][-1]["content"].startswith("weather and notes again")


async def test_the_latest_message_carries_local_date_time_and_zone(stub, make_llm, tools) -> None:
    stub.script(s.text("ok"))
    ctx = make_ctx(timezone="America/New_York")
    await make_llm(tools, persona="You are Testy.").run(ctx, "hi")
    system, latest = stub.requests[0]["messages"][0], stub.requests[0]["messages"][-1]
    assert system["role"] == "system" and latest["role"] == "user"
    assert system["content"].startswith("You are Testy.")
    assert "Rules for tools" in system["content"]
    content = latest["content"]
    # 2026-11-21 13:05 UTC is 08:05 in New York (EST, UTC-05:00), a Saturday.
    assert "Saturday, 2026-11-21 08:05" in content
    assert "America/New_York (UTC-05:00)" in content
    assert "tomorrow is Sunday, 2026-11-22" in content
    # Native mode: the message as written first, then the context line naming its
    # sender (before it, in the system text, it would precede the template's tool list).
    assert content.startswith("hi\n\n[Context: ")
    assert content.endswith("the latest message is from Alice.]")


async def test_prompt_mode_puts_the_context_last_in_the_system_prompt(
    stub, make_llm, tools
) -> None:
    """After the rules, tools and examples: the prefix cache keeps all of those, and the
    message stays as written (a small model called a tool for "hi" with the clock after
    it)."""
    llm = make_llm(tools, tool_mode="prompt")
    stub.fallback = s.text("ok")
    tokyo = make_ctx(timezone="Asia/Tokyo", chat_id="c2", sender_name="Bob")
    await llm.run(make_ctx(), "list my notes")
    await llm.run(tokyo, "list the notes")
    (first_system, first_user), (second_system, second_user) = (
        request["messages"] for request in stub.requests
    )
    stable, context = first_system["content"].split("\n\n[Context: ")
    assert second_system["content"].startswith(f"{stable}\n\n[Context: ")
    assert "# Tools" in stable and "2026" not in stable and "Alice" not in stable
    assert context.endswith("the latest message is from Alice.]")
    assert "Asia/Tokyo" in second_system["content"].split("\n\n[Context: ")[1]
    assert (first_user["content"], second_user["content"]) == ("list my notes", "list the notes")


async def test_the_system_prompt_is_the_same_for_every_chat_clock_and_sender(
    stub, make_llm, tools
) -> None:
    """A server's prefix cache reuses it: nothing volatile may be in it."""
    llm = make_llm(tools)
    stub.fallback = s.text("ok")
    berlin = make_ctx()
    tokyo = make_ctx(
        timezone="Asia/Tokyo", chat_id="c2", sender_name="Bob", clock=lambda: FIXED_NOW + ONE_DAY
    )
    await llm.run(berlin, "hi")
    await llm.run(tokyo, "hello")
    first, second = (request["messages"][0] for request in stub.requests)
    assert first == second
    assert first["role"] == "system"
    assert "2026" not in first["content"] and "Alice" not in first["content"]


async def test_history_and_sender_names_reach_the_model(stub, make_llm, tools, ctx) -> None:
    stub.script(s.text("ok"))
    history = [
        ChatTurn("user", "lunch at noon?", sender_name="Bob"),
        ChatTurn("assistant", "Sounds good."),
    ]
    await make_llm(tools).run(ctx, "and tomorrow?", history)
    messages = stub.requests[0]["messages"]
    # One user message: the earlier chat as a transcript, then the latest message. The
    # bot's earlier answers are not past assistant turns, which small models imitate.
    assert [m["role"] for m in messages] == ["system", "user"]
    transcript, latest, context = messages[1]["content"].split("\n\n")
    assert transcript.splitlines()[1:] == ["Bob: lunch at noon?", "groupmate: Sounds good."]
    assert latest == "and tomorrow?"
    assert context.startswith("[Context: ") and context.endswith("is from Alice.]")


async def test_invalid_arguments_are_fed_back_and_then_fixed(
    stub, make_llm, tools, calls, ctx
) -> None:
    stub.script(
        s.calls(("add_note", {"text": "BUY MILK", "priority": "2", "colour": 1})),
        s.calls(("add_note", {"text": "buy milk", "priority": 2})),
    )
    result = await make_llm(tools).run(ctx, "note BUY MILK")
    assert result.replies == ["Saved: buy milk"]
    assert calls.log == [("add_note", ("chat-1", "u-alice", "buy milk"))]
    report = json.loads(_tool_messages(stub.requests[1])[0]["content"])
    assert report["error"] == "invalid arguments for add_note"
    paths = {issue["path"]: issue for issue in report["issues"]}
    assert set(paths) == {"(arguments)", "colour", "priority"}
    assert paths["priority"]["received"] == '"2"'
    assert "all caps" in paths["(arguments)"]["problem"]
    assert [(r.outcome, r.direct) for r in result.calls] == [("invalid", False), ("ok", True)]


async def test_retries_are_bounded_and_nothing_executes(stub, make_llm, tools, calls, ctx) -> None:
    bad = s.calls(("add_note", {"text": ""}))
    stub.script(bad, bad, bad)
    result = await make_llm(tools).run(ctx, "note nothing")
    assert calls.log == []
    assert len(stub.requests) == 2  # the first try plus one retry
    assert result.error is not None and result.text == result.error
    # One plain sentence: the tool, the field and the reason were the model's to fix.
    assert result.error == COULD_NOT_DO.english and result.ending == "repairs_ran_out"


async def test_retry_budget_is_configurable(stub, make_llm, tools, calls, ctx) -> None:
    bad = s.calls(("add_note", {"text": ""}))
    stub.script(bad, bad, bad, s.calls(("add_note", {"text": "ok"})))
    result = await make_llm(tools, max_invalid_retries=3).run(ctx, "note")
    assert result.replies == ["Saved: ok"] and len(stub.requests) == 4
    stub.reset()
    stub.script(bad)
    result = await make_llm(tools, max_invalid_retries=0).run(ctx, "note")
    assert result.error and len(stub.requests) == 1


async def test_invalid_json_arguments_get_a_repair_round(stub, make_llm, tools, calls, ctx) -> None:
    stub.script(
        s.calls(("weather", '{"city": "Berlin"')),
        s.calls(("weather", '{"city": "Berlin"}')),
        s.text("Sunny."),
    )
    result = await make_llm(tools).run(ctx, "weather?")
    assert result.text == "Sunny."
    report = json.loads(_tool_messages(stub.requests[1])[0]["content"])
    assert "not valid JSON" in report["issues"][0]["problem"]
    assert calls.log == [("weather", "Berlin")]


async def test_arguments_sent_as_a_json_string_work(stub, make_llm, tools, calls, ctx) -> None:
    stub.script(s.calls(("add_note", json.dumps(json.dumps({"text": "double"})))))
    result = await make_llm(tools).run(ctx, "note")
    assert result.replies == ["Saved: double"]


async def test_unknown_tool_answer_lists_available_tools(stub, make_llm, tools, calls, ctx) -> None:
    stub.script(
        s.calls(("wether", {"city": "Rome"})),
        s.calls(("weather", {"city": "Rome"})),
        s.text("Warm."),
    )
    result = await make_llm(tools).run(ctx, "weather in Rome")
    report = json.loads(_tool_messages(stub.requests[1])[0]["content"])
    # The tools the model was shown: the weather, and the finder for any other.
    assert report == {
        "error": "unknown tool 'wether'",
        "available_tools": ["weather", "find_tools"],
    }
    assert result.text == "Warm." and calls.names() == ["weather"]


@pytest.mark.parametrize(
    ("tool", "chat_type"), [("delete_note", "group"), ("private_diary", "group")]
)
async def test_hidden_tools_are_never_executed(
    stub, make_llm, tools, calls, tool: str, chat_type: str
) -> None:
    attempt = s.calls((tool, {"text": "buy milk"} if tool == "delete_note" else {}))
    stub.script(attempt, attempt)
    result = await make_llm(tools).run(make_ctx(chat_type=chat_type), "do it")
    assert calls.log == []
    report = json.loads(_tool_messages(stub.requests[1])[0]["content"])
    assert report["error"].startswith(f"tool '{tool}' is not available in this chat")
    assert result.error == NOT_AVAILABLE.english and result.ending == "repairs_ran_out"


async def test_admin_sees_and_may_call_admin_tools(stub, make_llm, tools, calls) -> None:
    stub.script(s.calls(("delete_note", {"text": "old"})))
    result = await make_llm(tools).run(make_ctx(is_admin=True), "delete old")
    assert result.replies == ["deleted"] and calls.names() == ["delete_note"]


async def test_same_call_twice_in_one_reply_runs_once(stub, make_llm, tools, calls, ctx) -> None:
    stub.script(
        s.calls(("weather", {"city": "Oslo"}), ("weather", '{ "city" : "Oslo" }')),
        s.text("Cold."),
    )
    result = await make_llm(tools).run(ctx, "weather Oslo")
    assert calls.log == [("weather", "Oslo")]
    contents = [m["content"] for m in _tool_messages(stub.requests[1])]
    assert len(contents) == 2 and contents[0] == contents[1]
    assert [(r.outcome, r.duplicate) for r in result.calls] == [("ok", False), ("ok", True)]


async def test_parallel_calls_run_concurrently(stub, make_llm, registry) -> None:
    class Delay(BaseModel):
        seconds: float

    @tool_function(description="Sleep", registry=registry)
    async def nap(ctx: MessageContext, args: Delay) -> FunctionResult:
        await asyncio.sleep(args.seconds)
        return FunctionResult.for_model("rested")

    @tool_function(description="Sleep in a thread", registry=registry)
    def blocking_nap(ctx: MessageContext, args: Delay) -> FunctionResult:
        time.sleep(args.seconds)
        return FunctionResult.for_model(threading.current_thread().name)

    stub.script(
        s.calls(
            ("nap", {"seconds": 0.4}),
            ("nap", {"seconds": 0.41}),
            ("blocking_nap", {"seconds": 0.4}),
            ("blocking_nap", {"seconds": 0.41}),
        ),
        s.text("done"),
    )
    started = time.perf_counter()
    result = await make_llm(registry).run(make_ctx(), "nap")
    elapsed = time.perf_counter() - started
    assert result.text == "done"
    assert elapsed < 1.2, f"calls were serialized: {elapsed:.2f}s"
    thread_names = [m["content"] for m in _tool_messages(stub.requests[1])[2:]]  # text as text
    assert all(name != threading.main_thread().name for name in thread_names)


async def test_per_call_timeout(stub, make_llm, registry) -> None:
    @tool_function(description="Hangs", registry=registry, timeout=0.2)
    async def hang(ctx: MessageContext) -> FunctionResult:
        await asyncio.sleep(30)
        return FunctionResult.direct("never")

    @tool_function(description="Also hangs", registry=registry)
    async def hang_default(ctx: MessageContext) -> FunctionResult:
        await asyncio.sleep(30)
        return FunctionResult.direct("never")

    stub.script(s.calls(("hang", {}), ("hang_default", {})), s.text("Both timed out, sorry."))
    started = time.perf_counter()
    result = await make_llm(registry, call_timeout=0.3).run(make_ctx(), "go")
    assert time.perf_counter() - started < 2
    assert result.text == "Both timed out, sorry."
    reports = [json.loads(m["content"]) for m in _tool_messages(stub.requests[1])]
    assert reports == [
        {"error": "hang timed out after 0.2 s"},
        {"error": "hang_default timed out after 0.3 s"},
    ]


async def test_handler_failures_never_leak_a_traceback(stub, make_llm, registry, caplog) -> None:
    @tool_function(description="Breaks", registry=registry)
    async def broken(ctx: MessageContext) -> FunctionResult:
        raise RuntimeError("db password=hunter2 rejected")

    @tool_function(description="Refuses", registry=registry)
    async def refuses(ctx: MessageContext) -> FunctionResult:
        raise ToolError("That note does not exist.")

    stub.script(s.calls(("broken", {}), ("refuses", {})), s.text("Something went wrong."))
    result = await make_llm(registry).run(make_ctx(), "go")
    reports = [json.loads(m["content"]) for m in _tool_messages(stub.requests[1])]
    assert reports == [
        {"error": "broken failed with an internal error"},
        {"error": "That note does not exist."},
    ]
    assert "hunter2" not in json.dumps(stub.requests[1])
    assert result.text == "Something went wrong."
    assert any("tool broken failed" in r.message for r in caplog.records)


async def test_dependent_calls_across_rounds(stub, make_llm, tools, calls, ctx) -> None:
    def second_round(body: dict[str, Any]) -> s.Reply:
        listed = json.loads(_tool_messages(body)[-1]["content"])
        return s.calls(("add_note", {"text": f"after {listed['notes'][0]['text']}"}))

    stub.script(s.calls(("list_notes", {})), second_round)
    result = await make_llm(tools).run(ctx, "copy the first note")
    assert calls.names() == ["list_notes", "add_note"]
    assert result.replies == ["Saved: after buy milk"] and result.llm_calls == 2


async def test_max_rounds_ends_with_a_clear_message(stub, make_llm, tools, calls, ctx) -> None:
    stub.fallback = s.calls(("list_notes", {}))
    result = await make_llm(tools, max_rounds=3).run(ctx, "loop forever")
    assert len(stub.requests) == 3 and result.llm_calls == 3
    assert result.error == UNFINISHED.english and result.ending == "out_of_rounds"


async def test_mixed_direct_and_data_results(stub, make_llm, tools, calls, ctx) -> None:
    stub.script(
        s.calls(("add_note", {"text": "umbrella"}), ("weather", {"city": "Paris"})),
        s.text("Also: 21 °C in Paris."),
    )
    result = await make_llm(tools).run(ctx, "note umbrella and weather in Paris")
    assert result.replies == ["Saved: umbrella", "Also: 21 °C in Paris."]
    first = json.loads(_tool_messages(stub.requests[1])[0]["content"])
    assert first == {"shown_to_user": "Saved: umbrella"}


async def test_a_hopeless_call_stops_the_whole_round(stub, make_llm, tools, calls, ctx) -> None:
    stub.script(
        s.calls(("add_note", {"text": ""})),
        s.calls(("add_note", {"text": ""}), ("weather", {"city": "Rome"})),
    )
    result = await make_llm(tools).run(ctx, "do both")
    assert calls.log == [] and result.error


async def test_an_empty_native_answer_is_asked_again_for_text_alone(
    stub, make_llm, tools, ctx
) -> None:
    # llama-cpp-python's chatml-function-calling answers "" to "hi" when tools are offered.
    stub.script(s.text(""), s.text("Hello!"))
    result = await make_llm(tools, tool_mode="native").run(ctx, "hi, how is the weather?")
    assert result.text == "Hello!"
    first, second = stub.requests
    assert (first["tool_choice"], second["tool_choice"]) == ("auto", "none")
    assert second["messages"] == first["messages"]  # no empty assistant turn added


async def test_an_empty_prompt_mode_answer_gets_one_nudge(stub, make_llm, tools, ctx) -> None:
    stub.script(s.text(""), s.text(""))
    result = await make_llm(tools, tool_mode="prompt").run(ctx, "hi")
    assert result.text == NO_ANSWER.english and result.ending == "no_answer"
    assert stub.requests[1]["messages"][-1]["content"].startswith("Answer my last message")
    assert len(stub.requests) == 2


async def test_two_bad_calls_in_one_reply_are_one_attempt(
    stub, make_llm, tools, calls, ctx
) -> None:
    stub.script(
        s.calls(("add_note", {"text": ""}), ("add_note", {"text": "X" * 60})),
        s.calls(("add_note", {"text": "fixed"})),
    )
    result = await make_llm(tools, max_invalid_retries=1).run(ctx, "note")
    assert result.replies == ["Saved: fixed"] and calls.names() == ["add_note"]


async def test_a_call_repeated_in_a_later_round_runs_once(
    stub, make_llm, tools, calls, ctx
) -> None:
    stub.script(
        s.calls(("weather", {"city": "Oslo"})),
        s.calls(("weather", {"city": "Oslo"})),
        s.text("Cold."),
    )
    result = await make_llm(tools).run(ctx, "weather Oslo")
    assert result.text == "Cold." and calls.log == [("weather", "Oslo")]
    first = _tool_messages(stub.requests[1])[0]["content"]
    assert _tool_messages(stub.requests[2])[-1]["content"] == first
    assert [(r.outcome, r.duplicate) for r in result.calls] == [("ok", False), ("ok", True)]


async def test_timeout_raised_inside_a_handler_is_an_error(stub, make_llm, registry) -> None:
    @tool_function(description="Upstream times out", registry=registry)
    async def flaky(ctx: MessageContext) -> FunctionResult:
        raise TimeoutError("upstream read timeout")

    stub.script(s.calls(("flaky", {})), s.text("Upstream failed."))
    await make_llm(registry).run(make_ctx(), "go")
    report = json.loads(_tool_messages(stub.requests[1])[0]["content"])
    assert report == {"error": "flaky failed with an internal error"}


async def test_tool_requests_fit_what_llama_cpp_servers_accept(stub, make_llm, tools) -> None:
    """llama-cpp-python's chatml-function-calling leaves tools out of the prompt unless
    tool_choice is sent, and answers HTTP 500 to an assistant message whose content is
    null; OpenAI, vLLM and Ollama accept both shapes used here."""
    stub.script(s.calls(("weather", {"city": "Paris"})), s.text("Sunny."))
    result = await make_llm(tools, tool_mode="native").run(make_ctx(), "weather in Paris?")
    assert result.text == "Sunny."
    first, second = stub.requests
    assert first["tool_choice"] == "auto" and first["tools"]
    echoed = next(m for m in second["messages"] if m["role"] == "assistant")
    assert echoed["content"] == "" and echoed["tool_calls"][0]["function"]["name"] == "weather"


EARLIER = [
    ChatTurn("user", "which notes do we have?", "Bob"),
    ChatTurn("assistant", "You have one note: buy milk."),
]


async def test_an_answer_copied_from_the_chat_is_sent_back_once_then_withheld(
    stub, make_llm, tools, ctx
) -> None:
    """A small model shown the chat may copy the bot's earlier answer instead of
    answering: it is told so once; copied again, the user gets no wrong answer."""
    stub.script(s.text("You have one note: buy milk."), s.text("It is 21 °C in Berlin."))
    result = await make_llm(tools).run(ctx, "how warm is it in Berlin?", EARLIER)
    assert result.text == "It is 21 °C in Berlin."
    assert stub.requests[1]["messages"][-1]["content"].startswith("That repeats an earlier")
    stub.script(s.text("You have one note: buy milk."), s.text("You have one note: buy milk."))
    result = await make_llm(tools).run(ctx, "how warm is it in Berlin?", EARLIER)
    assert result.text == NO_ANSWER.english and result.ending == "no_answer"


async def test_an_answer_the_turns_own_tool_gave_again_is_no_copy(
    stub, make_llm, tools, calls, ctx
) -> None:
    stub.script(s.calls(("list_notes", {})), s.text("You have one note: buy milk."))
    result = await make_llm(tools).run(ctx, "and now?", EARLIER)
    assert result.text == "You have one note: buy milk." and calls.names() == ["list_notes"]


async def test_what_a_read_tool_found_is_shown_when_the_model_cannot_phrase_it(
    stub, make_llm, registry, ctx
) -> None:
    """A small model that called the time server and then said nothing (or copied the
    chat) leaves the user the tool's data, plainly, rather than no answer."""

    @tool_function(description="The time in a zone", registry=registry, effect="read")
    async def zone_time(ctx: MessageContext, args: CityArgs) -> FunctionResult:
        return FunctionResult.for_model('{"timezone": "Asia/Tokyo", "datetime": "11:05"}')

    stub.script(s.calls(("zone_time", {"city": "Tokyo"})), s.text(""), s.text(""))
    result = await make_llm(registry, tool_mode="native").run(ctx, "time in Tokyo?")
    assert result.text == "timezone: Asia/Tokyo\ndatetime: 11:05"
    # Nothing found: no answer, said so.
    stub.script(s.text(""), s.text(""))
    result = await make_llm(registry, tool_mode="prompt").run(ctx, "time in Tokyo?")
    assert result.text == NO_ANSWER.english


async def test_the_same_question_asked_again_may_get_the_same_answer(
    stub, make_llm, tools, ctx
) -> None:
    asked_before = [*EARLIER, ChatTurn("user", "what is the capital of France?", "Ann")]
    asked_before.append(ChatTurn("assistant", "Paris is the capital of France."))
    stub.script(s.text("Paris is the capital of France."))
    result = await make_llm(tools).run(
        ctx, "@groupmate What is the capital of France?", asked_before
    )
    assert result.text == "Paris is the capital of France." and len(stub.requests) == 1
