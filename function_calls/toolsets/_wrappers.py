"""Wrappers that narrow the set they wrap: `FilteredToolset` (drops), `PreparedToolset`
(a function that may drop, never add) and `RefusingToolset` (hides, with a reason)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import ToolDefinitionError
from groupmate.function_calls.tools import Tool
from groupmate.function_calls.toolsets._abstract import (
    AbstractToolset,
    HiddenTool,
    ListingMemo,
    PrepareTools,
    Refusal,
    ToolListing,
    ToolPredicate,
)

Made = dict[str, tuple[Tool, Tool | None]]
"""A wrapper's tools made from the wrapped set's, by name: (the tool it was made from,
what was made; None: dropped)."""


def made_once(made: Made, tool: Tool, make: Callable[[Tool], Tool | None]) -> Tool | None:
    """`make(tool)`, made once per source tool: every context (and `None`) gets the same
    object, which indexes keyed by identity rely on. A server's re-listed tool is a new
    object, so it is made anew."""
    found = made.get(tool.name)
    if found is not None and found[0] is tool:
        return found[1]
    result = make(tool)
    made[tool.name] = (tool, result)
    return result


@dataclass(frozen=True, slots=True, eq=False)
class WrapperToolset(AbstractToolset):
    """A set that answers for the set it wraps (subclasses narrow the answer)."""

    wrapped: AbstractToolset

    @property
    def label(self) -> str:
        return self.wrapped.label

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        return self.wrapped.listing(ctx)


@dataclass(frozen=True, slots=True, eq=False)
class FilteredToolset(WrapperToolset):
    """The tools `keep` admits for each context; the others are not there for it at all,
    as if the wrapped set did not hold them."""

    keep: ToolPredicate
    _everyone: ListingMemo = field(default_factory=ListingMemo, init=False, repr=False)

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        inner = self.wrapped.listing(ctx)
        if ctx is None:  # `keep` of no context is the config's: the same for the same tools
            return self._everyone.get((inner,), lambda: self._kept(inner, None))
        return self._kept(inner, ctx)

    def _kept(self, inner: ToolListing, ctx: MessageContext | None) -> ToolListing:
        keep = self.keep
        return ToolListing(
            {name: tool for name, tool in inner.offered.items() if keep(ctx, tool)},
            {name: held for name, held in inner.hidden.items() if keep(ctx, held.tool)},
        )


@dataclass(frozen=True, slots=True, eq=False)
class PreparedToolset(WrapperToolset):
    """The offered tools `prepare` returns for each context, in its order. It may drop
    tools or reorder them; a tool it was not given (a new one, or a changed copy that
    could widen where one is offered) is refused with ToolDefinitionError."""

    prepare: PrepareTools

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        inner = self.wrapped.listing(ctx)
        kept: dict[str, Tool] = {}
        for tool in self.prepare(ctx, list(inner.offered.values())):
            if inner.offered.get(tool.name) is not tool:
                raise ToolDefinitionError(
                    f"{self.label}: a prepare function may drop tools, never add one; it "
                    f"returned {tool.name!r}, which it was not given"
                )
            kept[tool.name] = tool
        return ToolListing(kept, inner.hidden)


@dataclass(frozen=True, slots=True, eq=False)
class RefusingToolset(WrapperToolset):
    """Hides each offered tool `refuse` gives a reason for, with that reason (the tools
    policy and a chat's switches are one). Without a context it hides nothing."""

    refuse: Refusal

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        inner = self.wrapped.listing(ctx)
        if ctx is None:
            return inner
        offered: dict[str, Tool] = {}
        hidden = dict(inner.hidden)
        for name, tool in inner.offered.items():
            reason = self.refuse(ctx, tool)
            if reason is None:
                offered[name] = tool
            else:
                hidden[name] = HiddenTool(tool, reason)
        return ToolListing(offered, hidden)
