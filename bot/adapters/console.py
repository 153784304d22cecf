"""A minimal terminal chat with the bot, until the full chat runtime lands."""

from __future__ import annotations

import asyncio
import sys
from typing import TextIO

from function_calls import ChatTurn, FunctionCallLLM, MessageContext

_HISTORY_TURNS = 20
NO_LLM_NOTICE = (
    "No language model is configured. Set OPENAI_API_KEY (and optionally OPENAI_BASE_URL "
    "and GROUPMATE_MODEL) to chat in plain language."
)


async def run_console(
    llm: FunctionCallLLM | None,
    ctx: MessageContext,
    *,
    stdin: TextIO = sys.stdin,
    stdout: TextIO = sys.stdout,
) -> None:
    """Read lines until EOF or /quit; answer each through the LLM."""
    history: list[ChatTurn] = []
    print("groupmate console. Type /quit to leave.", file=stdout, flush=True)
    if llm is None:
        print(NO_LLM_NOTICE, file=stdout, flush=True)
    while True:
        print("you> ", end="", file=stdout, flush=True)
        line = await asyncio.to_thread(stdin.readline)
        if not line or line.strip() == "/quit":
            print("", file=stdout, flush=True)
            return
        text = line.strip()
        if not text:
            continue
        if llm is None:
            print(f"bot> {NO_LLM_NOTICE}", file=stdout, flush=True)
            continue
        result = await llm.run(ctx, text, history)
        print(f"bot> {result.text}", file=stdout, flush=True)
        history.extend(
            [ChatTurn("user", text, ctx.sender_name), ChatTurn("assistant", result.text)]
        )
        del history[:-_HISTORY_TURNS]
