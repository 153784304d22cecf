"""No success claimed for a write that did not happen: when the model's turn tried to
change something and every such call failed, an answer that may read as done ("Done.")
is not passed on, however the user's message was worded; the user is told plainly that
nothing was set, in their language, without the tool's or the validation's words."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls import FunctionResult, FunctionToolset
from groupmate.function_calls.tool_building import build_tool
from groupmate.testing.stub_llm import StubLLM, calls, text
from tests import bots

NOW = datetime(2026, 11, 24, 13, 5, tzinfo=UTC)  # Tue 14:05 in Berlin
# The model invents a time the user never said: the words check refuses the call.
INVENTED = ("reminder_set", {"when": "every day at 17:30", "content": "the report"})
INVENTED_ZH = ("reminder_set", {"when": "每天下午5点半", "content": "交报告"})
NOTHING_EN = "Nothing was set or changed: your message didn't say exactly what to do."
NOTHING_ZH = "没有设置或修改任何东西：你的消息没有说清楚具体要做什么。"


def make_bot(tmp_path: Path, stub: StubLLM) -> Bot:
    bot = {"timezone": "Europe/Berlin", "rate_limits": {"user_per_minute": 100, "burst": 100}}
    return bots.make_bot(tmp_path, stub, llm={"tool_mode": "native"}, bot=bot, clock=lambda: NOW)


async def answers(bot: Bot, words: str) -> list[str]:
    message = IncomingMessage(
        chat_id="g1", chat_type="group", sender_id="u-alice", sender_name="Alice", text=words
    )
    return [reply.text for reply in await bot.handle(message)]


async def nothing_stored(bot: Bot) -> bool:
    assert bot.reminders is not None
    reminders, _ = await bot.reminders.list_for_chat("g1")
    return reminders == []


NUDGE = "@groupmate the report is due soon, could you nudge us about it daily"
NUDGE_ZH = "@groupmate 报告快到期了，能不能每天催一下大家"


# Not worded as a reminder request: the offers' guard (bot.offers) never looked at them.
@pytest.mark.parametrize(
    ("asked", "call", "claim", "honest"),
    [
        pytest.param(NUDGE, INVENTED, "Done.", NOTHING_EN, id="done"),
        pytest.param(NUDGE, INVENTED, "I'll nudge you every day.", NOTHING_EN, id="nudge"),
        pytest.param(NUDGE_ZH, INVENTED_ZH, "好的，搞定了!", NOTHING_ZH, id="chinese"),
    ],
)
async def test_an_answer_that_reads_as_done_after_a_refused_write_is_not_passed_on(
    tmp_path: Path, stub: StubLLM, asked: str, call: tuple[str, Any], claim: str, honest: str
) -> None:
    stub.script(calls(call), text(claim))
    async with make_bot(tmp_path, stub) as bot:
        (answer,) = await answers(bot, asked)
        assert answer.startswith(honest)
        assert "reminder_set" not in answer and "when" not in answer.split("(")[0]
        assert await nothing_stored(bot)
        assert len(stub.requests) == 2  # the model was told why, and answered


async def test_an_answer_that_owns_up_or_asks_back_is_passed_on(
    tmp_path: Path, stub: StubLLM
) -> None:
    asked = NUDGE
    stub.script(
        calls(INVENTED),
        text("What time of day should I nudge you?"),
        calls(INVENTED),
        text("I couldn't set that up: you didn't say a time."),
    )
    async with make_bot(tmp_path, stub) as bot:
        assert await answers(bot, asked) == ["What time of day should I nudge you?"]
        assert await answers(bot, asked) == ["I couldn't set that up: you didn't say a time."]
        assert await nothing_stored(bot)


async def test_a_write_that_went_through_keeps_the_models_answer(
    tmp_path: Path, stub: StubLLM
) -> None:
    # The first call is refused, the second (the user's own words) is set: "Done." is true.
    said = ("reminder_set", {"when": "every day at 9", "content": "the report"})
    stub.script(calls(INVENTED), calls(said), text("Done."))
    async with make_bot(tmp_path, stub) as bot:
        (answer,) = await answers(bot, "@groupmate nudge us about the report every day at 9")
        assert answer.startswith("⏰ Reminder #1 set")


async def test_no_answer_after_a_refused_write_says_nothing_was_set(
    tmp_path: Path, stub: StubLLM
) -> None:
    stub.script(calls(INVENTED), text(""), text(""))  # silent, even when nudged
    async with make_bot(tmp_path, stub) as bot:
        (answer,) = await answers(bot, NUDGE)
        assert answer.startswith(NOTHING_EN)
        assert await nothing_stored(bot)


async def test_a_write_that_ran_out_of_time_is_not_said_to_have_failed(
    tmp_path: Path, stub: StubLLM
) -> None:
    """A call that times out may still finish (its transaction commits after): the user
    is told to check, never "nothing was set", which would have them send it twice."""
    finished = asyncio.Event()

    async def slow_save() -> FunctionResult:
        await asyncio.sleep(0.5)
        finished.set()
        return FunctionResult.direct("Saved.")

    slow = build_tool(
        slow_save, name="note_save", description="Save a note.", timeout=0.1, effect="write"
    )
    data: dict[str, Any] = {
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "llm": {"base_url": stub.base_url, "api_key": "sk-test", "tool_mode": "native"},
    }
    stub.script(calls(("note_save", {})), text("Done."))
    bot = Bot(parse_config(data, environ={}), registry=FunctionToolset([slow]))
    async with bot:
        (reply,) = await answers(bot, "@groupmate save a note")
    assert reply.startswith("That took too long to confirm, so it may or may not have gone")
    assert "Nothing was set" not in reply and "Done." not in reply
