"""Context that never overflows: a 300-message history against a 4k-context model (the
stub refuses a prompt over 4096 tokens, counted as four characters each, like a real
server would answer HTTP 400)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.context_window import ContextOverflowError, fit
from groupmate.function_calls.internal_text import MESSAGE_TOO_LONG
from groupmate.testing.stub_llm import Reply, StubLLM, error, text
from tests import bots

CONTEXT = 4096


def four_k_model(body: dict[str, Any]) -> Reply:
    # Counted on the text as the server reads it: a JSON escape ("\\u6bcf") is one
    # character to its tokenizer, not six (the tools' Chinese examples).
    sent = json.dumps(body["messages"], ensure_ascii=False)
    size = len(sent + json.dumps(body.get("tools", []), ensure_ascii=False)) // 4
    if size + body.get("max_tokens", 0) > CONTEXT:
        return error(400, f"This model's maximum context length is {CONTEXT} tokens")
    return text(f"fits in {size} tokens")


def make_bot(tmp_path: Path, stub: StubLLM) -> Bot:
    llm = {"context_tokens": CONTEXT, "max_output_tokens": 512}
    history = {"max_messages": 300, "max_chars": 200_000}
    return bots.make_bot(tmp_path, stub, llm=llm, bot={"history": history})


def said(text: str, number: int, sender: str = "Bob") -> IncomingMessage:
    return bots.chat_message(
        text, sender_id=f"u-{sender.lower()}", sender_name=sender, message_id=f"m{number}"
    )


async def test_a_300_message_history_is_trimmed_oldest_first_to_fit(
    tmp_path: Path, stub: StubLLM
) -> None:
    stub.fallback = four_k_model
    async with make_bot(tmp_path, stub) as bot:
        for number in range(300):
            await bot.handle(said(f"message {number}: " + "lorem ipsum dolor " * 4, number))
        (reply,) = await bot.handle(said("@groupmate what did we discuss?", 300, "Alice"))
    assert reply.text.startswith("fits in ")
    (request,) = stub.requests
    system, latest = request["messages"]
    assert system["role"] == "system"
    transcript = latest["content"].splitlines()
    assert transcript[-3:-1] == ["what did we discuss?", ""]
    kept = [line for line in transcript if line.startswith("Bob: message ")]
    assert kept[-1].startswith("Bob: message 299:")  # the newest history is kept
    # The oldest went first, as much as fits stays: in 4k tokens beside the tool list
    # (larger since chat_search and chat_catchup joined it), only a few lines.
    assert 5 < len(kept) < 300
    assert kept == [
        f"Bob: message {n}: " + ("lorem ipsum dolor " * 4).strip()
        for n in range(300 - len(kept), 300)
    ]


async def test_a_message_too_long_by_itself_gets_a_clear_reply(
    tmp_path: Path, stub: StubLLM
) -> None:
    stub.fallback = four_k_model
    async with make_bot(tmp_path, stub) as bot:
        (reply,) = await bot.handle(said("@groupmate " + "word " * 5000, 1, "Alice"))
    assert reply.text == MESSAGE_TOO_LONG.english  # the message itself, so the sender is told
    assert stub.requests == []  # never sent: no HTTP 400 from the endpoint


def test_long_tool_results_are_cut_oldest_first_after_the_history_is_gone() -> None:
    history = ["Bob: old"]

    def render(lines: Sequence[str]) -> str:
        return "\n".join([*lines, "latest"])

    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": render(history)},
        {"role": "assistant", "content": "", "tool_calls": []},
        {"role": "tool", "content": "a" * 4000},
        {"role": "tool", "content": "b" * 4000},
    ]
    assert fit(messages, None, history=history, render=render, limit=1400) == 1
    assert history == []
    assert [m["content"][:6] for m in messages] == ["rules", "latest", "", "aaaaaa", "bbbbbb"]
    assert len(messages[3]["content"]) < 700 and len(messages[4]["content"]) == 4000
    with pytest.raises(ContextOverflowError):
        fit(messages, None, history=history, render=render, limit=100)
