"""Repeats within a day and repeat limits when the model calls the tools, end to end (the
stub LLM through the real SDK, native and prompt mode): its structured fields are stored
as sent, and a call that drops the limit the user's message names is refused and
repaired, never stored without it."""

from __future__ import annotations

import json

from groupmate.testing.stub_llm import text
from tests.test_reminder_tools_llm import Chat, chat  # noqa: F401  (the fixture)

ASKED = "@groupmate remind us every day at 9 until friday to take pills"


async def test_the_models_fields_set_a_limited_repeat_within_a_day(chat: Chat) -> None:  # noqa: F811
    arguments = {
        "type": "weekdays",
        "every_minutes": 90,
        "time": "09:00",
        "to": "18:00",
        "count": 4,
        "content": "stand up",
    }
    answer = await chat.model_calls("reminder_set", arguments)
    assert answer.startswith("⏰ Reminder #1 set for ")
    assert "every 90 minutes from 09:00 to 18:00 on weekdays" in answer
    (stored,) = await chat.reminders()
    sent = {key: stored[key] for key in ("type", "every_minutes", "time", "to", "count")}
    assert sent == {key: arguments[key] for key in sent}


async def test_a_call_that_drops_the_asked_limit_is_repaired_before_it_is_set(
    chat: Chat,  # noqa: F811
) -> None:
    chat.stub.script(
        chat.call("reminder_set", {"when": "every day at 9", "content": "take pills"}),
        chat.call("reminder_set", {"when": "every day at 9 until friday", "content": "take pills"}),
        text("done"),
    )
    replies = await chat.api.say(ASKED)
    repair = json.dumps(chat.stub.requests[1]["messages"])
    assert "the message asks for" in repair and "until Fri" in repair
    assert "e.g. when='every day at 9 until friday'" in repair  # the user's words to copy
    assert any("until Fri" in reply["text"] for reply in replies)
    (stored,) = await chat.reminders()
    assert stored["until"] is not None and stored["rule"].startswith("every day at 09:00 until Fri")
