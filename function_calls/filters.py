"""The one kind of allow and deny list a config has: of a tool set's tools (`tools:` of a
plugin or server), of the chats a policy rule applies in (`chats:`), and of the groups
the bot answers in (`bot.groups`). Apart from the tool sets so that reading a config
imports no tool machinery."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Filter(BaseModel):
    """`allow`: only these (all when unset); `deny`: never these, whatever `allow` says.
    Entries are names (a tool's as its source spells it: a server's own tool names or
    operationIds, before any prefix; a chat id such as `tg:-100123`) and may use shell
    wildcards such as `get_*` or `tg:-100*`.

    A plain list in the config is an allow list.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    allow: list[str] | None = None
    """Only these names or ids, with shell wildcards (`get_*`, `tg:-100*`). Unset: all."""
    deny: list[str] = Field(default_factory=list)
    """Never these, whatever `allow` says."""

    @model_validator(mode="before")
    @classmethod
    def _list_is_allow(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return {"allow": list(value)}
        return value

    def admits(self, name: str) -> bool:
        if any(fnmatchcase(name, pattern) for pattern in self.deny):
            return False
        return self.allow is None or any(fnmatchcase(name, pattern) for pattern in self.allow)

    def admits_all(self) -> bool:
        return self.allow is None and not self.deny


# A tool set's filter, as `tools:` of a plugin, MCP or OpenAPI server spells it.
ToolFilter = Filter
