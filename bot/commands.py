"""Slash commands that work without an LLM, through the same registry path as tool calls.

Each command builds the tool's raw arguments and goes through `Tool.validate` (both
stages) and `Tool.invoke`, exactly like a call the model made.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import dateparser

from function_calls import (
    FunctionResult,
    InvalidArgumentsError,
    MessageContext,
    ToolError,
    ToolRegistry,
)

COMMAND_HELP = (
    "Commands: /remind <when> <what> (e.g. /remind in 10 minutes tea, /remind tomorrow "
    "9:00 call Bob, /remind every monday 9:00 send the report), /reminders, /cancel <id>, "
    "/summary [N], /search <query>, /tz <zone>, /help"
)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_RECURRING = re.compile(
    r"^every\s+(?:(?P<daily>day)|(?P<weekdays>weekday)|(?P<weekday>"
    + "|".join(_WEEKDAYS)
    + r")|month\s+on\s+the\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?)\s+(?:at\s+)?"
    r"(?P<time>\d{1,2}(?::\d{2})?\s*(?:am|pm)?)\s+(?P<content>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_RELATIVE = re.compile(
    r"^in\s+(?P<amount>\d+)\s*(?P<unit>minutes?|mins?|m|hours?|hrs?|h|days?|d)\s+(?P<content>.+)$",
    re.IGNORECASE | re.DOTALL,
)
_UNIT_MINUTES = {"m": 1, "h": 60, "d": 1440}
# The last word of a one-time <when>: a clock time, an ISO date or a day word.
_ENDS_WHEN = re.compile(
    r"^(\d{1,2}:\d{2}|\d{1,2}(:\d{2})?(am|pm)|\d{4}-\d{2}-\d{2}|today|tonight|tomorrow|noon"
    r"|midnight|" + "|".join(_WEEKDAYS) + r")$",
    re.IGNORECASE,
)
_MAX_WHEN_WORDS = 6
_COMMAND_TIMEOUT = 30.0


class CommandError(Exception):
    """The command could not be understood; the message says how to write it."""


def _clock_time(text: str) -> str:
    parsed = dateparser.parse(text, languages=["en"])
    if parsed is None:
        raise CommandError(f"I don't understand the time {text!r}; write it like 9:00 or 18:30")
    return f"{parsed:%H:%M}"


def _one_time(when_and_what: str, ctx: MessageContext) -> dict[str, Any]:
    words = when_and_what.split()
    settings: Any = {
        "TIMEZONE": ctx.timezone,
        "RETURN_AS_TIMEZONE_AWARE": True,
        "PREFER_DATES_FROM": "future",
        "RELATIVE_BASE": ctx.now().replace(tzinfo=None),
    }
    for size in range(min(_MAX_WHEN_WORDS, len(words) - 1), 0, -1):
        if not _ENDS_WHEN.match(words[size - 1]):
            continue  # "tomorrow 9:00 2 coffees": the "2" belongs to the reminder text
        parsed = dateparser.parse(" ".join(words[:size]), languages=["en"], settings=settings)
        if parsed is not None:
            local = parsed.astimezone(ctx.zone)
            content = " ".join(words[size:])
            return {"type": "once", "time": f"{local:%Y-%m-%d %H:%M}", "content": content}
    raise CommandError(
        "I couldn't find when. Try: /remind in 10 minutes tea, /remind tomorrow 9:00 call "
        "Bob, /remind 2026-12-01 18:30 dinner, /remind every weekday 8:30 stand-up"
    )


def parse_remind(text: str, ctx: MessageContext) -> dict[str, Any]:
    """`<when> <what>` as ReminderArgs' raw arguments."""
    text = text.strip()
    if not text:
        raise CommandError("Usage: /remind <when> <what>, e.g. /remind in 10 minutes tea")
    relative = _RELATIVE.match(text)
    if relative:
        minutes = int(relative["amount"]) * _UNIT_MINUTES[relative["unit"][0].lower()]
        return {"type": "once", "in_minutes": minutes, "content": relative["content"].strip()}
    recurring = _RECURRING.match(text)
    if recurring:
        raw: dict[str, Any] = {
            "time": _clock_time(recurring["time"]),
            "content": recurring["content"].strip(),
        }
        if recurring["daily"]:
            raw["type"] = "daily"
        elif recurring["weekdays"]:
            raw["type"] = "weekdays"
        elif recurring["weekday"]:
            raw.update(type="weekly", weekday=_WEEKDAYS.index(recurring["weekday"].lower()))
        else:
            raw.update(type="monthly", day=int(recurring["day"]))
        return raw
    return _one_time(text, ctx)


CommandRunner = Callable[[MessageContext, str], Awaitable[str]]


class Commands:
    """Parses `/command args` and runs the matching tool."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._table: dict[str, CommandRunner] = {
            "remind": self._remind,
            "reminders": self._simple("reminder_list"),
            "cancel": self._cancel,
            "summary": self._summary,
            "search": self._search,
            "tz": self._tz,
            "help": self._help,
            "start": self._help,
        }

    @staticmethod
    def split(text: str) -> tuple[str, str] | None:
        """('remind', 'in 5 min tea') for '/remind in 5 min tea'; None for other text."""
        if not text.startswith("/"):
            return None
        head, _, rest = text[1:].partition(" ")
        name = head.split("@", 1)[0].lower()  # Telegram style: /remind@groupmate
        return (name, rest.strip()) if name else None

    @staticmethod
    def target(text: str) -> str | None:
        """'otherbot' for '/help@otherbot', None when the command names no bot."""
        head = text[1:].split(" ", 1)[0]
        return head.split("@", 1)[1] if "@" in head else None

    def knows(self, name: str) -> bool:
        return name in self._table

    async def run(self, ctx: MessageContext, name: str, rest: str) -> str:
        try:
            return await self._table[name](ctx, rest)
        except CommandError as exc:
            return str(exc)

    async def call(self, ctx: MessageContext, tool_name: str, raw: dict[str, Any]) -> str:
        """The registry path: visibility, both validation stages, the handler."""
        if tool_name not in self._registry:
            raise CommandError(f"/{tool_name} is not available on this bot.")
        tool = self._registry.get(tool_name)
        if not tool.visible_to(ctx):
            raise CommandError("That command is not available in this chat.")
        try:
            arguments = tool.validate(raw, ctx)
        except InvalidArgumentsError as exc:
            problems = "; ".join(f"{i.path}: {i.problem}" for i in exc.issues)
            raise CommandError(f"That didn't work: {problems}.") from None
        try:
            async with asyncio.timeout(tool.timeout or _COMMAND_TIMEOUT):
                result = await tool.invoke(ctx, arguments)
        except ToolError as exc:
            raise CommandError(f"That didn't work: {exc}.") from None
        except TimeoutError:
            raise CommandError("That took too long; please try again later.") from None
        return _text(result)

    def _simple(self, tool_name: str) -> CommandRunner:
        async def run(ctx: MessageContext, rest: str) -> str:
            return await self.call(ctx, tool_name, {})

        return run

    async def _remind(self, ctx: MessageContext, rest: str) -> str:
        return await self.call(ctx, "reminder_set", parse_remind(rest, ctx))

    async def _cancel(self, ctx: MessageContext, rest: str) -> str:
        if not rest:
            raise CommandError("Usage: /cancel <id>, with the id shown by /reminders")
        return await self.call(ctx, "reminder_delete", {"id": rest.split()[0]})

    async def _summary(self, ctx: MessageContext, rest: str) -> str:
        if rest and not (rest.isascii() and rest.isdigit()):
            raise CommandError("Usage: /summary [N], e.g. /summary 200")
        return await self.call(ctx, "summary", {"last_n": int(rest)} if rest else {})

    async def _search(self, ctx: MessageContext, rest: str) -> str:
        if "search" not in ctx.services:
            raise CommandError("Web search is not configured on this bot.")
        if not rest:
            raise CommandError("Usage: /search <query>")
        return await self.call(ctx, "web_search", {"query": rest})

    async def _tz(self, ctx: MessageContext, rest: str) -> str:
        if not rest:
            return f"This chat's time zone is {ctx.timezone}. Change it with /tz <zone>."
        return await self.call(ctx, "set_timezone", {"timezone": rest.split()[0]})

    async def _help(self, ctx: MessageContext, rest: str) -> str:
        tools = await self.call(ctx, "help", {}) if "help" in self._registry else ""
        return f"{tools}\n\n{COMMAND_HELP}".strip()


def _text(result: FunctionResult) -> str:
    if result.reply is not None:
        return result.reply
    return str(result.data)
