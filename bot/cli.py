"""The `groupmate` command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
from collections.abc import Sequence

import function_calls.handlers  # noqa: F401  (registers the built-in tools)
from bot.adapters.console import run_console
from function_calls import FunctionCallLLM, MessageContext


def _build_llm() -> FunctionCallLLM | None:
    if not (os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
        return None
    mode = os.environ.get("GROUPMATE_TOOL_MODE", "auto")
    if mode not in ("native", "prompt", "auto"):
        raise SystemExit(f"GROUPMATE_TOOL_MODE must be native, prompt or auto, not {mode!r}")
    return FunctionCallLLM(
        model=os.environ.get("GROUPMATE_MODEL", "gpt-4o-mini"),
        base_url=os.environ.get("OPENAI_BASE_URL"),
        tool_mode=mode,  # type: ignore[arg-type]
    )


async def _chat() -> None:
    ctx = MessageContext(
        chat_id="console",
        chat_type="private",
        sender_id="console-user",
        sender_name=os.environ.get("USER", "you"),
        is_admin=True,
        timezone=os.environ.get("GROUPMATE_TIMEZONE", "UTC"),
    )
    llm = _build_llm()
    try:
        await run_console(llm, ctx)
    finally:
        if llm is not None:
            await llm.aclose()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="groupmate", description="Group-chat assistant bot.")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("chat", help="chat with the bot in this terminal")
    options = parser.parse_args(argv)
    logging.basicConfig(level=os.environ.get("GROUPMATE_LOG_LEVEL", "WARNING"))
    if options.command == "chat":
        try:
            asyncio.run(_chat())
        except KeyboardInterrupt:
            return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
