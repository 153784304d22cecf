"""The config's `plugins:` list and `builtins:` switches."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from groupmate.function_calls.toolsets import ToolFilter
from groupmate.function_calls.vocabulary import Scope

ENTRY_POINT_GROUP = "groupmate.plugins"


class PluginSpec(BaseModel):
    """One plugin to load: a module (`pkg.tools`) or the name of an entry point of group
    `groupmate.plugins`, with its settings and the same options as an MCP server's. A
    plain string is the module."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    module: str = Field(min_length=1, max_length=200)
    """The plugin's module (`groupmate_dice.tools`) or the name of its entry point in the
    group `groupmate.plugins`. Required; a plain string in the list is this."""
    # Checked against the plugin's own settings model when it loads (a plugin is
    # imported only then), with the failing paths named.
    settings: dict[str, Any] = Field(default_factory=dict)
    """The plugin's own settings, checked against its settings model when it loads;
    its documentation lists them."""
    scope: Scope = "both"
    """`group` or `private` offers all its tools in those chats only; `both` leaves each
    tool's own scope."""
    admin_only: bool = False
    """Offer its tools to chat admins (and in private chats) only."""
    tools: ToolFilter = ToolFilter()
    """Which of its tools to offer: `allow` and `deny` lists of names or globs; a plain
    list is the allow list."""
    disabled: bool = False
    """Keep it listed but not loaded."""

    @model_validator(mode="before")
    @classmethod
    def _plain_module(cls, value: Any) -> Any:
        return {"module": value} if isinstance(value, str) else value

    @field_validator("module")
    @classmethod
    def _dotted(cls, value: str) -> str:
        value = value.strip()
        parts = value.replace(":", ".").split(".")
        if not all(part.replace("-", "_").isidentifier() for part in parts):
            raise ValueError(f"{value!r} is not a module name (pkg.module) or an entry point")
        return value


class BuiltinsConfig(BaseModel):
    """Which built-in tool families are on (all, by default). help and /tools always are."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    reminders: bool = True
    """Reminders and scheduled actions: /remind, /reminders, /snooze and their tools."""
    search: bool = True
    """Web search (needs a provider in `search`)."""
    links: bool = True
    """Reading the links users send (/read)."""
    summary: bool = True
    """Summaries and catch-up of what was said in the chat."""
    timezone: bool = True
    """Setting a chat's time zone (/tz)."""
    budget: bool = True
    """Showing and changing a chat's token budget (/budget)."""
    memory: bool = True
    """Searching and forgetting the chat log: /find, chat_search, /forget."""
