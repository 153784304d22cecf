"""What the user is told at the end of a turn: the model's answer, unless it reads as
internal text or claims a write that never went through; and what becomes of an answer
that is not one: a copy of the bot's earlier line, or none at all after a tool found what
was asked (see FunctionCallLLM._converse)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from typing import Any

from groupmate.function_calls._shaping import BOT_NAME, ChatTurn, tool_parameters, transcript_line
from groupmate.function_calls.claims import owns_up
from groupmate.function_calls.internal_text import (
    COULD_NOT_DO,
    NO_ANSWER,
    internal_marker,
    nothing_done,
)
from groupmate.function_calls.turn import ToolCallRecord, Turn, TurnResult

log = logging.getLogger("groupmate.llm")


def parrots(turn: Turn, text: str) -> bool:
    """Whether `text` copies one of the bot's earlier answers in the chat, word for word,
    to a message asked for the first time, where this turn's tools did not say it again
    (half its words or more in their results: "You have one note: buy milk" after the
    notes were listed again). The same question asked again may get the same answer."""
    said = " ".join(text.split())
    if len(said) < _PARROT_MIN or transcript_line(ChatTurn("assistant", said)) not in turn.history:
        return False
    asked = _gist(turn.asked)
    if any(_gist(line.split(": ", 1)[-1]) == asked for line in turn.history):
        return False
    # The turn's own messages after the system prompt and the chat, but the model's:
    # its tools' results (and any nudge, which quotes nothing).
    results = " ".join(
        str(message.get("content") or "")
        for message in turn.messages[2:]
        if message.get("role") != "assistant"
    ).lower()
    words = _WORDS.findall(said.lower())
    return sum(word in results for word in words) * 2 < len(words)


def _gist(text: str) -> str:
    """A message's words, lower-cased, without mentions: what makes two askings one."""
    return " ".join(w for w in _WORDS.findall(text.lower()) if w != BOT_NAME)


# Shorter answers ("OK", "好的") repeat by nature, not by copying.
_PARROT_MIN = 12
_WORDS = re.compile(r"\w{3,}|[\u4e00-\u9fff]")


def failed_writes(records: list[ToolCallRecord]) -> ToolCallRecord | None:
    """The first write call the turn tried, when it tried one and none went through
    ("ok": it ran and changed what it said); None when it wrote, or tried no write. A
    tool that ran and declined ("refused") changed nothing either."""
    writes = [record for record in records if record.effect == "write"]
    if not writes or any(record.outcome == "ok" for record in writes):
        return None
    return writes[0]


def found_data(turn: Turn) -> str | None:
    """The data the turn's latest successful read call returned, as plain lines (an
    object's fields as "name: value"), or None when no read call found anything."""
    for invocation in reversed(turn.ran.values()):
        result, validated = invocation.result, invocation.validated
        if invocation.outcome != "ok" or result is None or validated is None:
            continue
        if validated.tool.effect != "read" or result.data in (None, "", [], {}):
            continue
        return _plain(result.data)[:_FOUND_CHARS]
    return None


def _plain(data: Any) -> str:
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return str(data).strip()
    if isinstance(data, dict):
        return "\n".join(f"{key}: {_plain_value(value)}" for key, value in data.items())
    if isinstance(data, list):
        return "\n".join(f"• {_plain_value(item)}" for item in data)
    return _plain_value(data)


def _plain_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


_FOUND_CHARS = 1500  # of a tool's data shown as it came


def no_answer(turn: Turn) -> TurnResult:
    """The model gave no answer of its own. What a tool of this turn found, when one
    did (a small model asked the time in Tokyo called the time server, then could not
    phrase its answer): the data as it came, plainly, rather than no answer."""
    if turn.replies:
        return turn.finish(ending="no_answer")
    failed = failed_writes(turn.records)
    if failed is not None:  # the one thing worth saying: nothing was done
        return turn.finish(turn.say(nothing_done(failed.outcome)), ending="no_answer")
    found = found_data(turn)
    if found is not None:
        return turn.finish(found, ending="no_answer")
    return turn.finish(turn.say(NO_ANSWER), ending="no_answer")


def final_answer(turn: Turn, text: str, tool_names: Iterable[str]) -> TurnResult:
    """The turn ends with the model's text: the one place it becomes the user's answer,
    so the one place internal text is kept from the user."""
    # After the tools' own replies, nothing more is needed: "couldn't do that" under
    # "⏰ Reminder #3 set" would contradict what was done.
    if not text:
        return no_answer(turn)
    marker = internal_marker(text, tool_names, tool_parameters(turn.tools))
    failed = failed_writes(turn.records)
    if failed is not None and (marker is not None or not owns_up(text)):
        # Every write the turn tried failed (a call refused for a time the user never
        # said, say), and the answer may read as done ("Done."): whatever the message's
        # words, a claim without a deed is not passed on. The tool's own words (a
        # refusal it answered the user with) stand, or the plain "nothing was done".
        log.info("chat %s: no write went through; the answer was withheld", turn.ctx.chat_id)
        plain = turn.say(nothing_done(failed.outcome))
        return turn.finish(None if turn.replies else plain, ending="withheld")
    if marker is None:
        return turn.finish(text)
    # The text itself stays out of the log: it may quote the chat.
    log.warning(
        "chat %s: the model's answer looked internal (%s, %d chars); withheld",
        turn.ctx.chat_id,
        marker,
        len(text),
    )
    return turn.finish(None if turn.replies else turn.say(COULD_NOT_DO), ending="withheld")
