"""A minimal terminal chat with the bot, until the full chat runtime lands."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from typing import TextIO

from function_calls import ChatTurn, FunctionCallLLM, MessageContext
from storage import OutgoingMessage, ReminderService, StorageError

_HISTORY_TURNS = 20
NO_LLM_NOTICE = (
    "No language model is configured. Set OPENAI_API_KEY (and optionally OPENAI_BASE_URL "
    "and GROUPMATE_MODEL) to chat in plain language."
)


@dataclass
class ConsoleChat:
    """One private chat in this terminal; reminders print into it as they fire."""

    chat_id: str
    sender_id: str
    sender_name: str
    stdout: TextIO = field(default=sys.stdout)

    async def deliver(self, message: OutgoingMessage) -> None:
        print(f"\nbot> {message.text}\nyou> ", end="", file=self.stdout, flush=True)

    async def context(self, reminders: ReminderService) -> MessageContext:
        try:
            timezone = await reminders.timezone_of(self.chat_id)
        except StorageError:
            timezone = reminders.default_timezone  # the tools report the outage themselves
        return MessageContext(
            chat_id=self.chat_id,
            chat_type="private",
            sender_id=self.sender_id,
            sender_name=self.sender_name,
            is_admin=True,
            timezone=timezone,
            services={"reminders": reminders},
        )


async def run_console(
    llm: FunctionCallLLM | None,
    chat: ConsoleChat,
    reminders: ReminderService,
    *,
    stdin: TextIO = sys.stdin,
) -> None:
    """Read lines until EOF or /quit; answer each through the LLM."""
    stdout = chat.stdout
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
        ctx = await chat.context(reminders)
        result = await llm.run(ctx, text, history)
        print(f"bot> {result.text}", file=stdout, flush=True)
        history.extend(
            [ChatTurn("user", text, ctx.sender_name), ChatTurn("assistant", result.text)]
        )
        del history[:-_HISTORY_TURNS]
