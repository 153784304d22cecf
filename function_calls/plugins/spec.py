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

    model_config = ConfigDict(extra="forbid", frozen=True)

    module: str = Field(min_length=1, max_length=200)
    # Checked against the plugin's own settings model when it loads (a plugin is
    # imported only then), with the failing paths named.
    settings: dict[str, Any] = Field(default_factory=dict)
    # "both" leaves each tool's own scope; "group" or "private" narrows all of them.
    scope: Scope = "both"
    admin_only: bool = False
    tools: ToolFilter = ToolFilter()
    disabled: bool = False

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

    model_config = ConfigDict(extra="forbid", frozen=True)

    reminders: bool = True
    search: bool = True
    links: bool = True
    summary: bool = True
    timezone: bool = True
    budget: bool = True
    memory: bool = True  # /find, chat_search, /forget
