"""The ToolInvoker: one path from a call to a typed result, whoever asks (the LLM loop,
the slash commands, the HTTP routes)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pydantic import BaseModel, Field, model_validator

from groupmate.bot.tool_calls import ChatTools, CommandError
from groupmate.function_calls import (
    FunctionResult,
    InvalidArgumentsError,
    MessageContext,
    ToolCall,
    ToolDefinitionError,
    ToolError,
    ToolFailedError,
    ToolHiddenError,
    ToolInvocationError,
    ToolInvoker,
    ToolRegistry,
    ToolTimeoutError,
    UnknownToolError,
    tool_function,
)
from groupmate.storage.chatlog import ChatLog
from tests.conftest import make_ctx


class NoteArgs(BaseModel):
    text: str = Field(min_length=1, max_length=20)

    @model_validator(mode="after")
    def _no_shouting(self) -> NoteArgs:
        if self.text.isupper():
            raise ValueError("text must not be all caps")
        return self


class SleepArgs(BaseModel):
    seconds: float = Field(ge=0, le=5)


class Ran:
    def __init__(self) -> None:
        self.notes: list[str] = []
        self.active = 0
        self.most_at_once = 0


@pytest.fixture
def ran() -> Ran:
    return Ran()


@pytest.fixture
def invoker(registry: ToolRegistry, ran: Ran) -> ToolInvoker:
    @tool_function(description="Save a note", registry=registry)
    async def note(args: NoteArgs) -> FunctionResult:
        ran.notes.append(args.text)
        return FunctionResult.direct(f"saved {args.text}")

    @tool_function(description="Wipe all notes", registry=registry, admin_only=True)
    def wipe() -> str:
        ran.notes.clear()
        return "wiped"

    @tool_function(description="Sleep a while", registry=registry)
    async def nap(args: SleepArgs) -> dict[str, Any]:
        ran.active += 1
        ran.most_at_once = max(ran.most_at_once, ran.active)
        try:
            await asyncio.sleep(args.seconds)
        finally:
            ran.active -= 1
        return {"slept": args.seconds}

    @tool_function(description="Refuses politely", registry=registry)
    def refuse() -> str:
        raise ToolError("the printer is out of paper")

    @tool_function(description="Refuses with its own sentence", registry=registry)
    def pick() -> str:
        raise ToolError("Pick a number from 1 to 3!")

    @tool_function(description="Refuses in Chinese", registry=registry)
    def xuan() -> str:
        raise ToolError("请选 1 到 3")

    @tool_function(description="Breaks", registry=registry)
    def crash() -> str:
        raise RuntimeError("secret internals: password=hunter2")

    return ToolInvoker(registry, call_timeout=0.5, max_concurrency=2)


async def test_a_valid_call_runs_and_returns_its_result(invoker: ToolInvoker, ran: Ran) -> None:
    (answer,) = await invoker.invoke(make_ctx(), [ToolCall("note", '{"text": "milk"}')])
    assert answer.ok and answer.outcome == "ok"
    assert answer.result is not None and answer.result.reply == "saved milk"
    assert answer.validated is not None and answer.validated.arguments == NoteArgs(text="milk")
    assert ran.notes == ["milk"]


@pytest.mark.parametrize(
    ("call", "error", "outcome"),
    [
        (ToolCall("nope", {}), UnknownToolError, "unknown"),
        (ToolCall("wipe", {}), ToolHiddenError, "hidden"),
        (ToolCall("note", {"text": ""}), InvalidArgumentsError, "invalid"),  # stage 1
        (ToolCall("note", {"text": "MILK"}), InvalidArgumentsError, "invalid"),  # stage 2
        (ToolCall("note", "{not json"), InvalidArgumentsError, "invalid"),
    ],
)
async def test_a_call_that_cannot_run_says_why_and_runs_nothing(
    invoker: ToolInvoker, ran: Ran, call: ToolCall, error: type[Exception], outcome: str
) -> None:
    (answer,) = await invoker.invoke(make_ctx(), [call])
    assert isinstance(answer.error, error) and answer.outcome == outcome
    assert answer.result is None and ran.notes == []
    with pytest.raises(error):
        invoker.validate_tool_call(make_ctx(), call)


async def test_visibility_is_the_senders_own(invoker: ToolInvoker, ran: Ran) -> None:
    ran.notes.append("old")
    (answer,) = await invoker.invoke(make_ctx(is_admin=True), [ToolCall("wipe", {})])
    assert answer.ok and ran.notes == []
    with pytest.raises(ToolHiddenError) as hidden:
        invoker.validate_tool_call(make_ctx(), ToolCall("wipe", {}))
    assert "wipe" not in hidden.value.available and "note" in hidden.value.available


async def test_a_hung_call_times_out_and_the_others_still_answer(invoker: ToolInvoker) -> None:
    calls = [ToolCall("nap", {"seconds": 3}), ToolCall("note", {"text": "tea"})]
    started = asyncio.get_running_loop().time()
    hung, fine = await invoker.invoke(make_ctx(), calls)
    assert asyncio.get_running_loop().time() - started < 2
    assert isinstance(hung.error, ToolTimeoutError) and hung.outcome == "timeout"
    assert str(hung.error) == "nap timed out after 0.5 s"
    assert fine.ok


async def test_a_tool_error_is_shown_and_a_crash_is_logged_not_shown(
    invoker: ToolInvoker, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        refused, crashed = await invoker.invoke(
            make_ctx(), [ToolCall("refuse", {}), ToolCall("crash", {})]
        )
    assert isinstance(refused.error, ToolFailedError) and not refused.error.internal
    assert str(refused.error) == "the printer is out of paper"
    assert isinstance(crashed.error, ToolFailedError) and crashed.error.internal
    assert str(crashed.error) == "crash failed with an internal error"
    assert "hunter2" not in str(crashed.error)
    assert "tool crash failed" in caplog.text  # the traceback is in the log, for the operator
    assert refused.outcome == crashed.outcome == "failed"


async def test_the_same_call_twice_runs_once(invoker: ToolInvoker, ran: Ran) -> None:
    first, again, other = await invoker.invoke(
        make_ctx(),
        [
            ToolCall("note", {"text": "milk"}),
            ToolCall("note", '{"text":"milk"}'),
            ToolCall("note", {"text": "eggs"}),
        ],
    )
    assert ran.notes == ["milk", "eggs"]
    assert not first.duplicate and again.duplicate and not other.duplicate
    assert again.result is first.result


async def test_calls_run_in_parallel_at_most_max_concurrency_at_once(
    invoker: ToolInvoker, ran: Ran
) -> None:
    naps = [0.14, 0.1, 0.13, 0.11, 0.12]
    answers = await invoker.invoke(make_ctx(), [ToolCall("nap", {"seconds": s}) for s in naps])
    assert all(a.ok for a in answers) and ran.most_at_once == 2
    assert [a.result.data["slept"] for a in answers if a.result] == naps  # in the order given


async def test_run_raises_the_error_that_stopped_the_call(invoker: ToolInvoker) -> None:
    result = await invoker.run(make_ctx(), "note", {"text": "jam"})
    assert result.reply == "saved jam"
    with pytest.raises(ToolInvocationError):
        await invoker.run(make_ctx(), "note", {"text": "JAM"})


def test_bad_limits_are_refused(registry: ToolRegistry) -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        ToolInvoker(registry, max_concurrency=0)


@pytest.mark.parametrize(
    ("name", "raw", "said"),
    [
        ("nope", {}, "That isn't available on this bot."),
        ("wipe", {}, "Sorry, that isn't available to you in this chat."),
        ("note", {"text": "MILK"}, "That didn't work: text must not be all caps."),
        ("nap", {"seconds": 3}, "That took too long; please try again later."),
        ("refuse", {}, "That didn't work: the printer is out of paper."),
        # The tool's own last mark is kept, not doubled; a Chinese one ends in 。
        ("pick", {}, "That didn't work: Pick a number from 1 to 3!"),
        ("xuan", {}, "That didn't work: 请选 1 到 3。"),
        ("crash", {}, "Sorry, that failed on my side; please try again."),
    ],
)
async def test_commands_answer_every_failure_in_words(
    invoker: ToolInvoker, name: str, raw: dict[str, Any], said: str
) -> None:
    ctx: MessageContext = make_ctx()
    with pytest.raises(CommandError) as error:
        await ChatTools(invoker).call(ctx, name, raw)
    assert str(error.value) == said


def test_a_dependency_nothing_provides_is_refused_at_registration(
    registry: ToolRegistry,
) -> None:
    class Unprovided:
        pass

    with pytest.raises(ToolDefinitionError, match=r"parameter 'thing' \(Unprovided\): nothing"):

        @tool_function(description="Look up", registry=registry)
        def look_up(thing: Unprovided) -> str:
            return ""


async def test_a_tool_is_offered_only_where_its_services_are(registry: ToolRegistry) -> None:
    @tool_function(description="Recent chat", registry=registry)
    async def recent(ctx: MessageContext, chatlog: ChatLog) -> int:
        return len(await chatlog.recent(ctx.chat_id, 5))

    invoker = ToolInvoker(registry)
    with pytest.raises(ToolHiddenError):
        invoker.validate_tool_call(make_ctx(), ToolCall("recent", {}))
    assert invoker.offered(make_ctx()) == []


async def test_a_chinese_asker_reads_the_failure_in_chinese(invoker: ToolInvoker) -> None:
    with pytest.raises(CommandError) as error:
        await ChatTools(invoker).call(make_ctx(text="/选 5"), "xuan", {})
    assert str(error.value) == "没有成功：请选 1 到 3。"
