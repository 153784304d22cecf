"""Slash commands that tools declare (`@tool_function(command="weather")`): `/weather
Berlin` runs the tool through the invoker like any other command, without the model.

How the words after the command become the tool's raw arguments:
- nothing: no arguments (the tool's defaults);
- `key=value` pairs (`/dice sides=20 count=2`, values may be "quoted"): those fields,
  each value read as the type the tool's schema gives it (integer, number, boolean);
- anything else: the whole text goes to the tool's one text field (its only required
  string field, or its only string field).
The arguments are then checked by both validation stages like a model's call; a command
whose words fit neither form says how to write it.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from groupmate.function_calls import Tool
from groupmate.storage.exceptions import GroupmateError

log = logging.getLogger(__name__)


class CommandWordsError(GroupmateError, ValueError):
    """The words after a tool's command fit neither of its forms."""


@dataclass(frozen=True, slots=True)
class ToolCommand:
    """A tool reachable as `/name`."""

    name: str
    tool: Tool

    @property
    def usage(self) -> str:
        """'/weather <city>' or '/dice [sides=…] [count=…]', for /help and mistakes."""
        text = _text_field(self.tool)
        if text is not None:
            return f"/{self.name} <{text}>"
        fields = list(_properties(self.tool))
        required = set(self.tool.parameters.get("required", ()))
        parts = [f"{n}=…" if n in required else f"[{n}=…]" for n in fields]
        return " ".join([f"/{self.name}", *parts])

    def arguments(self, words: str) -> dict[str, Any]:
        """The tool's raw arguments for the words after the command; raises
        CommandWordsError when they fit neither form."""
        words = words.strip()
        if not words:
            if self.tool.parameters.get("required"):  # "/weather" alone: say how
                raise CommandWordsError(f"Usage: {self.usage}")
            return {}
        pairs = _pairs(words)
        properties = _properties(self.tool)
        if pairs is not None and all(key in properties for key in pairs):
            return {key: _typed(value, properties[key]) for key, value in pairs.items()}
        text = _text_field(self.tool)
        if text is None:
            raise CommandWordsError(f"Usage: {self.usage}")
        return {text: words}


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


def _properties(tool: Tool) -> dict[str, dict[str, Any]]:
    properties = tool.parameters.get("properties", {})
    return {str(k): v for k, v in properties.items() if isinstance(v, dict)}


def _types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a property takes (through a nullable anyOf)."""
    kinds = schema.get("type")
    if isinstance(kinds, str):
        return {kinds}
    if isinstance(kinds, list):
        return {str(kind) for kind in kinds}
    found: set[str] = set()
    for branch in schema.get("anyOf", ()):
        if isinstance(branch, dict):
            found |= _types(branch)
    return found


def _text_field(tool: Tool) -> str | None:
    """The field free text goes to: the only required string, else the only string."""
    properties = _properties(tool)
    strings = [name for name, schema in properties.items() if "string" in _types(schema)]
    required = [n for n in strings if n in set(tool.parameters.get("required", ()))]
    if len(required) == 1:
        return required[0]
    return strings[0] if len(strings) == 1 else None


def _pairs(words: str) -> dict[str, str] | None:
    """{'sides': '20'} for 'sides=20'; None unless every word is a key=value pair."""
    try:
        parts = shlex.split(words)
    except ValueError:  # an unclosed quote: free text, not pairs
        return None
    pairs: dict[str, str] = {}
    for part in parts:
        key, equals, value = part.partition("=")
        if not equals or not key.isidentifier() or key in pairs:
            return None
        pairs[key] = value
    return pairs


def _typed(value: str, schema: dict[str, Any]) -> Any:
    """The value as the schema's type; left a string when it is not one (stage 1 then
    says what was expected)."""
    kinds = _types(schema)
    if "integer" in kinds:
        try:
            return int(value)
        except ValueError:
            pass
    if "number" in kinds:
        try:
            return float(value)
        except ValueError:
            pass
    if "boolean" in kinds and value.lower() in ("true", "false", "yes", "no", "on", "off"):
        return value.lower() in ("true", "yes", "on")
    return value
