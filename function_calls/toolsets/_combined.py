"""`CombinedToolset`: the union of several sets, in order."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.tools import Tool
from groupmate.function_calls.toolsets._abstract import (
    AbstractToolset,
    HiddenTool,
    ListingMemo,
    ToolListing,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True, eq=False)
class CombinedToolset(AbstractToolset):
    """The tools of `toolsets`, in order. The first set to hold a name keeps it, whether
    it offers that tool in the context or hides it (a tool hidden from this sender must
    not let a later set's tool of the same name through); a later set's tool of a taken
    name is left out, and logged once."""

    toolsets: Sequence[AbstractToolset]
    _clashes: set[tuple[str, str]] = field(default_factory=set, init=False, repr=False)
    _everyone: ListingMemo = field(default_factory=ListingMemo, init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "toolsets", tuple(self.toolsets))  # fixed once composed

    @property
    def label(self) -> str:
        return f"{', '.join(toolset.label for toolset in self.toolsets)}"

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        parts = tuple(toolset.listing(ctx) for toolset in self.toolsets)
        if ctx is None:
            return self._everyone.get(parts, lambda: self._united(parts))
        return self._united(parts)

    def _united(self, parts: tuple[ToolListing, ...]) -> ToolListing:
        offered: dict[str, Tool] = {}
        hidden: dict[str, HiddenTool] = {}
        for toolset, part in zip(self.toolsets, parts, strict=True):
            for name, tool in part.offered.items():
                if not self._taken(toolset, name, offered, hidden):
                    offered[name] = tool
            for name, held in part.hidden.items():
                if not self._taken(toolset, name, offered, hidden):
                    hidden[name] = held
        return ToolListing(offered, hidden)

    def _taken(
        self,
        toolset: AbstractToolset,
        name: str,
        offered: dict[str, Tool],
        hidden: dict[str, HiddenTool],
    ) -> bool:
        if name not in offered and name not in hidden:
            return False
        if (toolset.label, name) not in self._clashes:
            self._clashes.add((toolset.label, name))
            log.warning("%s: tool %s is left out; the name is taken", toolset.label, name)
        return True
