"""The abstract tool set, and what a set answers for one context: its `ToolListing`."""

from __future__ import annotations

import operator
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import HiddenReason, UnknownToolError
from groupmate.function_calls.tools import Tool
from groupmate.function_calls.vocabulary import Scope

if TYPE_CHECKING:
    from groupmate.function_calls.toolsets._narrowed import ToolFilter
    from groupmate.function_calls.toolsets._prefixed import PrefixedToolset
    from groupmate.function_calls.toolsets._wrappers import (
        FilteredToolset,
        PreparedToolset,
        RefusingToolset,
    )

ToolPredicate = Callable[[MessageContext | None, Tool], bool]
"""Whether a set keeps a tool for a context (None: for listings, whoever asks; asked
once per change of the tools, so the same tool gets the same answer)."""
PrepareTools = Callable[[MessageContext | None, Sequence[Tool]], Sequence[Tool]]
"""The tools a set offers for a context, from those it would: it may drop some (or
reorder them), never add one."""
Refusal = Callable[[MessageContext, Tool], HiddenReason | None]
"""Why a tool is not offered in a context (None: it is)."""


@dataclass(frozen=True, slots=True)
class HiddenTool:
    """A tool a set holds but does not offer in one context, and why: a call of it is
    refused as hidden (the reason is the model's and the log's), not as unknown."""

    tool: Tool
    reason: HiddenReason


@dataclass(frozen=True, slots=True)
class ToolListing:
    """What a set holds for one context: the tools it offers, in the order the model is
    shown them, and those it holds but hides. Without a context nothing is hidden: every
    tool it may offer anyone is offered."""

    offered: Mapping[str, Tool]
    hidden: Mapping[str, HiddenTool]

    def reason(self, name: str) -> HiddenReason | None:
        """Why the tool `name` is hidden (None: offered, or not held at all)."""
        held = self.hidden.get(name)
        return held.reason if held is not None else None


class ListingMemo:
    """A set's listing for no context, kept while what it was made from stays the same
    objects (its parts' listings, its tuple of tools). A listing is never changed once
    made, so the same sources give the same listing, and the same listing object says
    that nothing under it changed: the whole composition is looked at in a pass of
    identity checks, and whoever indexes the tools (selection) keys on the object."""

    __slots__ = ("_listing", "_shapes", "_sources")

    def __init__(self) -> None:
        self._sources: tuple[object, ...] = ()
        self._listing: ToolListing | None = None
        # A leaf's listing per kind of sender (see `own`).
        self._shapes: dict[tuple[bool, str, str], tuple[object, object, ToolListing]] = {}

    def get(self, sources: tuple[object, ...], make: Callable[[], ToolListing]) -> ToolListing:
        listing, kept = self._listing, self._sources
        same = len(sources) == len(kept) and all(map(operator.is_, sources, kept))
        if listing is not None and same:
            return listing
        listing = make()
        # (Two threads may both make one: either is right, and the last is kept.)
        self._sources, self._listing = sources, listing
        return listing

    def own(self, tools: tuple[Tool, ...], ctx: MessageContext | None) -> ToolListing:
        """A leaf set's `own_listing` of `tools` (a tuple replaced, never changed, when
        its tools change): kept for no context, and for each kind of sender. A tool's own
        declaration hides it by the sender's rights, the chat's type, the call's source
        and the services (`Tool.hidden_because`), never by who or where exactly: one
        walk of a thousand MCP tools serves every member's message in every group."""
        if ctx is None:
            return self.get((tools,), lambda: own_listing(tools, None))
        shape = (ctx.is_admin, ctx.chat_type, ctx.source)
        kept = self._shapes.get(shape)
        if kept is not None and kept[0] is tools and kept[1] is ctx.deps:
            return kept[2]
        listing = own_listing(tools, ctx)
        if len(self._shapes) >= _SHAPES:
            self._shapes.clear()
        self._shapes[shape] = (tools, ctx.deps, listing)
        return listing


_SHAPES = 32  # kinds of sender kept: (admin or not) x (chat type) x (source)


def own_listing(tools: Iterable[Tool], ctx: MessageContext | None) -> ToolListing:
    """A leaf set's listing: each tool offered unless its own declaration (its scope,
    rights, services, whether it is remote or for the model) hides it in `ctx`."""
    if ctx is None:
        return ToolListing({tool.name: tool for tool in tools}, {})
    offered: dict[str, Tool] = {}
    hidden: dict[str, HiddenTool] = {}
    for tool in tools:
        reason = tool.hidden_because(ctx)
        if reason is None:
            offered[tool.name] = tool
        else:
            hidden[tool.name] = HiddenTool(tool, reason)
    return ToolListing(offered, hidden)


class AbstractToolset(ABC):
    """A set of tools: the built-ins, a plugin's, an MCP or OpenAPI server's, the bot's
    whole composition. `listing(ctx)` says which it offers in a context and why not the
    others; wrappers (`filtered`, `prefixed`, `prepared`, `narrowed`, `refusing`) only
    ever narrow what they wrap. Each tool carries its own handler, so a set is only ever
    asked what it holds; the `ToolInvoker` runs the calls.

    A set reads like a registry too (`names()`, `get`, `in`, iteration, `len`): over the
    tools it may offer anyone, as listings and indexes want them. Derived sets give the
    same `Tool` objects for every context: an index built over `get_tools(None)` finds
    the tools of `get_tools(ctx)` by identity.
    """

    __slots__ = ()

    @abstractmethod
    def listing(self, ctx: MessageContext | None) -> ToolListing:
        """The tools for the sender of `ctx` (None: every tool it may offer anyone)."""

    @property
    def label(self) -> str:
        """What the log calls this set ("MCP server 'time'", "plugin 'dice'")."""
        return type(self).__name__

    def get_tools(self, ctx: MessageContext | None) -> Mapping[str, Tool]:
        """The tools offered to the sender of `ctx`, by name, in order."""
        return self.listing(ctx).offered

    def names(self) -> list[str]:
        return list(self.get_tools(None))

    def get(self, name: str) -> Tool:
        """The tool `name` (as offered to anyone); UnknownToolError if none."""
        tools = self.get_tools(None)
        try:
            return tools[name]
        except KeyError:
            raise UnknownToolError(name, list(tools)) from None

    def __contains__(self, name: object) -> bool:
        return name in self.get_tools(None)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self.get_tools(None).values()))

    def __len__(self) -> int:
        return len(self.get_tools(None))

    # --- wrappers: each narrows what it wraps, never widens it ------------------------

    def filtered(self, keep: ToolPredicate) -> FilteredToolset:
        """Only the tools `keep` admits for the context; the others are not there at
        all for it (a call of one is unknown). `narrowed` and `refusing` hide instead,
        with a reason."""
        from groupmate.function_calls.toolsets._wrappers import FilteredToolset

        return FilteredToolset(self, keep)

    def prefixed(self, prefix: str) -> PrefixedToolset:
        """The same tools under `exposed_name(prefix, name)`."""
        from groupmate.function_calls.toolsets._prefixed import PrefixedToolset

        return PrefixedToolset(self, prefix)

    def prepared(self, prepare: PrepareTools) -> PreparedToolset:
        """The tools `prepare` keeps of those offered for each context; it may drop
        tools, never add one (ToolDefinitionError if it tries)."""
        from groupmate.function_calls.toolsets._wrappers import PreparedToolset

        return PreparedToolset(self, prepare)

    def narrowed(
        self, *, scope: Scope = "both", admin_only: bool = False, tools: ToolFilter | None = None
    ) -> AbstractToolset:
        """A config's options on this set (see `NarrowedToolset`); the set itself when
        they narrow nothing."""
        from groupmate.function_calls.toolsets._narrowed import NarrowedToolset, ToolFilter

        tools = tools if tools is not None else ToolFilter()
        if scope == "both" and not admin_only and tools.admits_all():
            return self
        return NarrowedToolset(self, scope, admin_only, tools)

    def refusing(self, refuse: Refusal) -> RefusingToolset:
        """The tools `refuse` gives a reason for are hidden, with that reason."""
        from groupmate.function_calls.toolsets._wrappers import RefusingToolset

        return RefusingToolset(self, refuse)
