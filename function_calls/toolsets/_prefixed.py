"""`PrefixedToolset`: a set's tools under `<prefix><name>`, within the API's naming rule."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.tools import Tool
from groupmate.function_calls.toolsets._abstract import HiddenTool, ListingMemo, ToolListing
from groupmate.function_calls.toolsets._names import MAX_TOOL_NAME as MAX_TOOL_NAME  # re-exported
from groupmate.function_calls.toolsets._names import exposed_name
from groupmate.function_calls.toolsets._wrappers import Made, WrapperToolset, made_once

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, eq=False)
class PrefixedToolset(WrapperToolset):
    """The wrapped set's tools renamed `exposed_name(prefix, spelling)`: from the name
    as its source spelled it, so that a long or odd name maps as if the prefix had
    always been part of it. Two names that map to one: the first keeps it (logged)."""

    prefix: str
    _made: Made = field(default_factory=dict, init=False, repr=False)
    _clashes: set[str] = field(default_factory=set, init=False, repr=False)
    _everyone: ListingMemo = field(default_factory=ListingMemo, init=False, repr=False)

    def _rename(self, tool: Tool) -> Tool:
        spelled = f"{self.prefix}{tool.spelled}"
        name = exposed_name(self.prefix, tool.spelled)
        source_name = "" if spelled == name else spelled
        if name == tool.name and source_name == tool.source_name:
            return tool
        return dataclasses.replace(tool, name=name, source_name=source_name)

    def _renamed(self, tool: Tool) -> Tool:
        renamed = made_once(self._made, tool, self._rename)
        assert renamed is not None  # renaming never drops
        return renamed

    def _taken(self, name: str, *maps: Mapping[str, object]) -> bool:
        if not any(name in held for held in maps):
            return False
        if name not in self._clashes:
            self._clashes.add(name)
            log.warning("%s: two tools map to %s; the first keeps it", self.label, name)
        return True

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        inner = self.wrapped.listing(ctx)
        if ctx is None:
            return self._everyone.get((inner,), lambda: self._renamed_all(inner))
        return self._renamed_all(inner)

    def _renamed_all(self, inner: ToolListing) -> ToolListing:
        offered: dict[str, Tool] = {}
        hidden: dict[str, HiddenTool] = {}
        for tool in inner.offered.values():
            renamed = self._renamed(tool)
            if not self._taken(renamed.name, offered):
                offered[renamed.name] = renamed
        for held in inner.hidden.values():
            renamed = self._renamed(held.tool)
            if not self._taken(renamed.name, offered, hidden):
                hidden[renamed.name] = HiddenTool(renamed, held.reason)
        return ToolListing(offered, hidden)
