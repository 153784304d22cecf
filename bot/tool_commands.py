"""Slash commands that tools declare (`@tool_function(command="weather")`): `/weather
Berlin` runs the tool through the invoker like any other command, without the model.

The words after the command become the tool's raw arguments as its schema says
(`bot.command_args`: bare words, lists, `key=value`), then both validation stages check
them like a model's call; words that don't make them say how to write the command. A
tool that reads its command's words itself (a `CommandText` parameter) gets them as
they are, and no arguments.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from groupmate.bot.command_args import CommandWords
from groupmate.function_calls import Tool
from groupmate.function_calls.language import Lang

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ToolCommand:
    """A tool reachable as `/name`."""

    name: str
    tool: Tool
    words: CommandWords = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "words", CommandWords(self.name, self.tool.parameters))

    def usage(self, lang: Lang = "en") -> str:
        """'/vote <option: 1–3>', for /help and mistakes (see `CommandLayout.usage`)."""
        if self.tool.text_param is not None:
            return f"/{self.name} …"
        return self.words.usage(lang)

    def arguments(self, words: str, *, now: datetime, lang: Lang = "en") -> dict[str, Any]:
        """The tool's raw arguments for the words after the command; raises
        CommandWordsError, in `lang`, when they don't make them."""
        if self.tool.text_param is not None:
            return {}  # the handler reads the words itself (CommandText)
        return self.words.arguments(words, now=now, lang=lang)


def tool_commands(tools: Iterable[Tool], taken: Iterable[str]) -> dict[str, ToolCommand]:
    """The commands the tools declare, by name; one whose name is a built-in command's
    or another tool's is left out (and logged)."""
    found: dict[str, ToolCommand] = {}
    reserved = set(taken)
    for tool in tools:
        name = tool.command
        if name is None:
            continue
        if name in reserved or name in found:
            log.warning("tool %s: command /%s is taken; left out", tool.name, name)
            continue
        found[name] = ToolCommand(name, tool)
    return found
