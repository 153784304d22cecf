"""The `groupmate` command line."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Sequence

import function_calls.handlers  # noqa: F401  (registers the built-in tools)
from bot.adapters.console import ConsoleChat, run_console
from function_calls import FunctionCallLLM
from storage import (
    DEFAULT_URL,
    Database,
    ReminderService,
    StorageError,
    check_timezone,
    current_revision,
    head_revision,
    upgrade,
)


def _storage_url(options: argparse.Namespace) -> str:
    return options.url or os.environ.get("GROUPMATE_STORAGE_URL") or DEFAULT_URL


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


async def _chat(options: argparse.Namespace) -> None:
    chat = ConsoleChat(
        chat_id="console",
        sender_id="console-user",
        sender_name=os.environ.get("USER", "you"),
    )
    timezone = check_timezone(os.environ.get("GROUPMATE_TIMEZONE", "UTC"))
    llm = _build_llm()
    try:
        async with ReminderService.open(
            _storage_url(options), sender=chat.deliver, default_timezone=timezone
        ) as reminders:
            await run_console(llm, chat, reminders)
    finally:
        if llm is not None:
            await llm.aclose()


def _db(options: argparse.Namespace) -> int:
    database = Database(_storage_url(options))
    try:
        if options.action == "upgrade":
            upgrade(database)
        revision = current_revision(database)
    finally:
        database.close()
    state = "up to date" if revision == head_revision() else f"behind {head_revision()}"
    print(f"{database.safe_url}: schema revision {revision or 'none'} ({state})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="groupmate", description="Group-chat assistant bot.")
    commands = parser.add_subparsers(dest="command", required=True)
    chat = commands.add_parser("chat", help="chat with the bot in this terminal")
    db = commands.add_parser("db", help="database schema migrations")
    db.add_argument("action", choices=["upgrade", "current"])
    for command in (chat, db):
        command.add_argument(
            "--url", help=f"database URL (default: $GROUPMATE_STORAGE_URL or {DEFAULT_URL})"
        )
    options = parser.parse_args(argv)
    logging.basicConfig(level=os.environ.get("GROUPMATE_LOG_LEVEL", "WARNING"))
    try:
        if options.command == "db":
            return _db(options)
        asyncio.run(_chat(options))
    except KeyboardInterrupt:
        return 130
    except StorageError as exc:
        print(f"groupmate: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
