"""Per-message tool selection and the context window, through the real LLM loop and the
test kit's model server: what each message is offered, the tool finder, calls of tools
not shown, a window learned from the server's refusal, and who is told what when a
request does not fit."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from pydantic import BaseModel, Field

from groupmate.function_calls import (
    ChatTurn,
    FunctionResult,
    MessageContext,
    ToolRegistry,
    tool_function,
)
from groupmate.function_calls.handlers import builtin_tools
from groupmate.function_calls.internal_text import MESSAGE_TOO_LONG, MISCONFIGURED
from groupmate.function_calls.selection import FIND_TOOLS, ToolSelector
from groupmate.function_calls.selection_words import terms
from groupmate.testing import stub_llm as s
from tests.selection.measure import corpus_tools, measure, member


def offered(body: dict[str, Any]) -> list[str]:
    """The tools a request showed: native `tools`, or those named in prompt mode."""
    return [tool["function"]["name"] for tool in body.get("tools", [])]


def model_tools() -> list[Any]:
    return [tool for tool in builtin_tools() if tool.for_model]


# --- ranking -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "history", "first"),
    [
        ("remind me to call mom at 6pm", (), "reminder_set"),
        ("提醒我明天早上九点开会", (), "reminder_set"),
        ("which reminders are set?", (), "reminder_list"),
        ("summarize what we discussed", (), "summary"),
        ("总结一下今天群里聊了啥", (), "summary"),
        ("what did I miss?", (), "chat_catchup"),
        ("search for the latest python release", (), "web_search"),
        ("switch our time zone to London", (), "set_timezone"),
        # A follow-up is chosen for by the chat's last lines.
        ("and snooze it 10 minutes", ("groupmate: ⏰ Reminder #3: standup",), "reminder_snooze"),
        (
            "cancel it",
            ("groupmate: ⏰ Reminder #3 set: standup, tomorrow 09:30",),
            "reminder_delete",
        ),
        # A typing slip is one letter from the word meant.
        ("remnd me tomorow at 8 to go to the gym", (), "reminder_set"),
    ],
)
def test_the_right_tool_ranks_first(text: str, history: tuple[str, ...], first: str) -> None:
    ranked = ToolSelector().rank(model_tools(), text, history=history)
    assert ranked and ranked[0].tool.name == first, [c.tool.name for c in ranked[:4]]


@pytest.mark.parametrize(
    "text",
    [
        "hi!",
        "thanks!",
        "你好",
        "哈哈哈",
        "good night all",
        "ok cool",
        # One common word shared with a description is no request.
        "hi! how is your day going?",
        "lol same",
        "welcome to the group!",
    ],
)
def test_small_talk_is_offered_nothing(text: str) -> None:
    offer = ToolSelector().select(list(corpus_tools()), text, budget=10_000, cost=lambda t: 100)
    assert offer.tools == ()


def test_a_file_name_stands_for_a_file_and_a_phrase_for_what_it_means() -> None:
    """A file's name says a file (and its kind), not its words; "shared folder" is a
    place for files, not stock shares or a shared bill; "news" is not "new"."""
    assert list(terms("show me notes/meeting-2026-03-02.md")) == ["show", "@list", "md", "@file"]
    assert {"@stock", "shar", "@write"}.isdisjoint(terms("what's in the shared folder? any news"))
    tools = list(corpus_tools())
    for text, first in [
        ("send me the floorplan.png from the shared drive", "filesystem__read_media_file"),
        ("把 draft.docx 移到 archive 文件夹", "filesystem__move_file"),
    ]:
        assert ToolSelector().rank(tools, text)[0].tool.name == first
    shared = [c.tool.name for c in ToolSelector().rank(tools, "what's in the shared folder?")]
    assert "filesystem__list_directory" in shared[:3] and "settle_up" not in shared


def test_a_chinese_message_finds_an_english_tool_and_the_other_way_round() -> None:
    tools = list(corpus_tools())
    weather = ToolSelector().rank(tools, "外面冷不冷，要带伞吗")
    assert "weather_now" in [c.tool.name for c in weather[:3]]
    leave = ToolSelector().rank(tools, "how many days of annual leave do I have left?")
    assert "leave_balance" in [c.tool.name for c in leave[:3]]  # described in Chinese only


def test_the_chats_recent_tool_use_leans_the_next_message() -> None:
    selector, tools = ToolSelector(), model_tools()
    before = [c.tool.name for c in selector.rank(tools, "move it to 5pm", chat_id="g1")]
    selector.remember("g1", ["reminder_set"])
    after = selector.rank(tools, "move it to 5pm", chat_id="g1")
    assert after[0].tool.name in {"reminder_update", "reminder_set"}
    assert "reminder_update" in [c.tool.name for c in after[:3]]
    assert "used here lately" in next(c.why for c in after if c.tool.name == "reminder_set")
    # Another chat is not leaned by it.
    assert [c.tool.name for c in selector.rank(tools, "move it to 5pm", chat_id="g2")] == before


@pytest.mark.parametrize("text", ["what time is it in Tokyo right now?", "东京现在几点了？"])
def test_the_chat_reorders_what_a_message_names_but_never_overturns_it(text: str) -> None:
    """After the reminders were listed (the tool ran, the chat says "reminders"), the
    time in Tokyo is still the time server's; "move it to 5pm" is still a reminder's."""
    tools = tuple(t for t in corpus_tools() if "__" in t.name) + tuple(model_tools())
    chat = [
        "Ann: what reminders do we have here?",
        "groupmate: There are no active reminders in this chat.",
    ]
    selector = ToolSelector()
    selector.remember("g1", ["reminder_list"])
    ranked = selector.rank(tools, text, history=chat, chat_id="g1", universe=tools)
    assert ranked[0].tool.name == "time__get_current_time", [c.why for c in ranked[:4]]
    moved = selector.rank(tools, "move it to 5pm", history=chat, chat_id="g1", universe=tools)
    assert moved[0].tool.name == "reminder_update", [c.why for c in moved[:4]]


def test_the_offer_keeps_to_its_budget_and_the_ranking() -> None:
    tools = list(corpus_tools())
    sizes = {tool.name: 50 + 10 * len(tool.name) for tool in tools}
    offer = ToolSelector().select(
        tools, "remind me about the flight to Paris", budget=400, cost=lambda t: sizes[t.name]
    )
    assert sum(sizes[name] for name in (t.name for t in offer.tools)) <= 400
    assert offer.tools[0].name == "reminder_set" and offer.partial
    assert [c.score for c in offer.choices] == sorted(
        (c.score for c in offer.choices), reverse=True
    )


def test_the_index_is_built_once_per_tool_set() -> None:
    selector, tools = ToolSelector(), model_tools()
    first = selector.index(tools)
    assert selector.index(list(tools)) is first  # the same tools: the same index
    assert selector.index(tools[:-1]) is not first


def test_selection_is_deterministic() -> None:
    tools = list(corpus_tools())
    runs = {
        tuple(c.tool.name for c in ToolSelector().rank(tools, "把3号提醒改成每周四早上8点"))
        for _ in range(3)
    }
    assert len(runs) == 1


# --- through the LLM loop ------------------------------------------------------------


class CityArgs(BaseModel):
    city: str = Field(..., description="City name, e.g. Berlin")


@pytest.fixture
def many(registry: ToolRegistry) -> ToolRegistry:
    """The built-ins and a weather tool, as a member in a group sees them."""
    for tool in builtin_tools():
        registry.register(tool)

    @tool_function(description="Current weather for a city", registry=registry)
    async def weather(ctx: MessageContext, args: CityArgs) -> FunctionResult:
        return FunctionResult.for_model({"city": args.city, "temp_c": 21})

    return registry


@pytest.mark.parametrize("mode", ["native", "prompt"])
async def test_small_talk_goes_without_tools_and_a_request_with_the_tools_it_needs(
    stub: s.StubLLM, make_llm: Any, many: ToolRegistry, mode: str
) -> None:
    stub.script(s.text("Hello!"), s.text("Sunny."))
    llm = make_llm(many, tool_mode=mode)
    hello = await llm.run(member(), "hi there!")
    weather = await llm.run(member(), "what's the weather in Berlin?")
    assert (hello.text, weather.text) == ("Hello!", "Sunny.")
    small, asked = stub.requests
    system = small["messages"][0]["content"]
    assert "tools" not in small and "# Tools" not in system
    if mode == "native":
        assert offered(asked)[0] == "weather" and FIND_TOOLS in offered(asked)
        assert "reminder_set" not in offered(asked)
    else:
        assert '"name":"weather"' in asked["messages"][0]["content"].replace(" ", "")
        assert '"name":"reminder_set"' not in asked["messages"][0]["content"].replace(" ", "")


async def test_the_finder_adds_the_tools_the_model_asks_for(
    stub: s.StubLLM, make_llm: Any, many: ToolRegistry
) -> None:
    stub.script(
        s.calls((FIND_TOOLS, {"need": "the weather in a city"})),
        s.calls(("weather", {"city": "Oslo"})),
        s.text("Oslo: 21 °C."),
    )
    result = await make_llm(many, tool_mode="native").run(member(), "help me plan the Oslo trip")
    assert result.text == "Oslo: 21 °C."
    first, second, _ = stub.requests
    assert "weather" not in offered(first)
    assert offered(second)[-1] == "weather"  # added for the next call
    told = json.loads(second["messages"][-1]["content"])
    assert [t["name"] for t in told["added_tools"]] == ["weather"]
    assert [(c.name, c.outcome) for c in result.calls] == [(FIND_TOOLS, "ok"), ("weather", "ok")]


async def test_a_tool_the_sender_may_use_runs_though_it_was_not_shown(
    stub: s.StubLLM, make_llm: Any, many: ToolRegistry
) -> None:
    stub.script(s.calls(("weather", {"city": "Rome"})), s.text("Warm."))
    result = await make_llm(many, tool_mode="native").run(member(), "how are things in Rome?")
    assert result.text == "Warm." and [c.outcome for c in result.calls] == ["ok"]
    assert "weather" not in offered(stub.requests[0]) and "weather" in offered(stub.requests[1])


async def test_a_hidden_tool_is_neither_shown_nor_run_when_named(
    stub: s.StubLLM, make_llm: Any, many: ToolRegistry
) -> None:
    purged: list[str] = []

    @tool_function(description="Purge the weather notes", registry=many, admin_only=True)
    async def purge_weather_notes(ctx: MessageContext) -> FunctionResult:
        purged.append(ctx.sender_id)
        return FunctionResult.direct("purged")

    stub.fallback = s.calls(("purge_weather_notes", {}))
    result = await make_llm(many, tool_mode="native").run(member(), "purge the weather notes")
    assert "purge_weather_notes" not in offered(stub.requests[0])  # not shown to a member
    assert purged == [] and {c.outcome for c in result.calls} == {"hidden"}
    assert result.ending == "repairs_ran_out"


# --- the window ----------------------------------------------------------------------


def sized(body: dict[str, Any]) -> s.Reply:
    """An answer that says how large the request was (the stub refuses larger ones)."""
    return s.text(f"fits in {s.request_tokens(body)} tokens")


async def test_a_window_is_learned_from_the_servers_refusal_and_the_user_never_sees_it(
    stub: s.StubLLM, make_llm: Any, many: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    stub.window = 2048  # what the server was started with; the bot assumes 4096
    stub.fallback = sized
    llm = make_llm(many, tool_mode="native", context_tokens=4096, context_source="default")
    history = [s_turn(f"line {n}: " + "lorem ipsum dolor sit amet " * 6) for n in range(60)]
    with caplog.at_level(logging.WARNING, "groupmate.llm"):
        first = await llm.run(member(), "remind me to stretch at 5pm", history)
    assert first.text.startswith("fits in ") and first.error is None
    assert len(stub.refused) == 1  # once, then refitted and sent again
    assert llm.context_tokens == 2048 and "refused" in llm.window.source
    assert sum("refused a request as too long" in r.message for r in caplog.records) == 1
    second = await llm.run(member(), "remind me to stretch at 6pm", history)
    assert second.text.startswith("fits in ") and len(stub.refused) == 1


async def test_a_refusal_that_names_no_window_still_lowers_it(
    stub: s.StubLLM, make_llm: Any, many: ToolRegistry
) -> None:
    stub.script(s.error(400, "Please reduce the length of the messages."), s.text("ok"))
    llm = make_llm(many, tool_mode="native", context_tokens=8192)
    result = await llm.run(member(), "remind me to stretch at 5pm")
    assert result.text == "ok" and llm.context_tokens < 8192


async def test_only_a_message_too_long_itself_is_called_too_long(
    stub: s.StubLLM, make_llm: Any, many: ToolRegistry
) -> None:
    stub.fallback = s.text("answered")
    llm = make_llm(many, tool_mode="prompt", context_tokens=4096)
    # Every tool and a long history do not fit together: fewer tools and less history do.
    history = [s_turn("x " * 400) for _ in range(20)]
    ok = await llm.run(
        member(), "remind me to stretch at 5pm and search the web for stretches", history
    )
    assert ok.text == "answered"
    too_long = await llm.run(member(), "please read: " + "word " * 6000)
    assert too_long.text == MESSAGE_TOO_LONG.english and too_long.ending == "unavailable"


async def test_a_window_too_small_for_the_bot_is_the_operators_problem(
    stub: s.StubLLM, make_llm: Any, many: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    stub.fallback = s.text("never")
    llm = make_llm(many, tool_mode="native", context_tokens=1024, max_output_tokens=900)
    with caplog.at_level(logging.ERROR, "groupmate.llm"):
        result = await llm.run(member(), "hi")
        again = await llm.run(member(), "你好")
    assert result.text == MISCONFIGURED.english and again.text == MISCONFIGURED.chinese
    assert stub.requests == []  # nothing was sent that could not fit
    assert llm.window_problem is not None and "llm.max_output_tokens" in llm.window_problem
    assert sum(r.levelno == logging.ERROR for r in caplog.records) == 1  # logged once
    assert "stretch" not in llm.window_problem  # the operator's words, never the chat's


def s_turn(content: str) -> ChatTurn:
    return ChatTurn("user", content, "Bob")


# --- the corpus ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["native", "prompt"])
async def test_the_corpus_is_served_within_a_4k_window(mode: str) -> None:
    """The selection corpus as a member sends it, with the defaults (the 4,096 tokens
    assumed for a silent server): a right tool is offered for nearly every message that
    needs one, small talk is mostly offered nothing, and no request leaves less than
    half the window for the chat and the answer. The goal is 98 % (measured: 98.5 %
    native, 98.0 % prompt); the floor leaves room for a message or two of drift."""
    results = await measure(mode)
    needing = [r for r in results if r.entry.tools and r.for_member]
    talk = [r for r in results if not r.entry.tools]
    assert sum(r.hit for r in needing) / len(needing) >= 0.97
    assert sum(r.hit for r in talk) / len(talk) >= 0.85
    assert max(r.estimated for r in needing) <= 1500
