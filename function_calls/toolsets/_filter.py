"""A config's allow and deny lists of a tool set's tools. Apart from the sets so that
reading a config imports no tool machinery."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class ToolFilter(BaseModel):
    """`allow`: only these (all when unset); `deny`: never these. Entries are the names
    the set's source spells (a server's own tool names or operationIds, before any
    prefix), and may use shell wildcards such as `get_*`.

    A plain list in the config is an allow list.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _list_is_allow(cls, value: Any) -> Any:
        if isinstance(value, list | tuple):
            return {"allow": value}
        return value

    def admits(self, name: str) -> bool:
        if any(fnmatchcase(name, pattern) for pattern in self.deny):
            return False
        return self.allow is None or any(fnmatchcase(name, pattern) for pattern in self.allow)

    def admits_all(self) -> bool:
        return self.allow is None and not self.deny
