"""A config's options on a set of tools (a plugin's, a server's): `tools` allow and deny
lists, `scope` and `admin_only`. They only ever add restrictions."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.filters import ToolFilter as ToolFilter  # re-exported
from groupmate.function_calls.tools import Tool
from groupmate.function_calls.toolsets._abstract import HiddenTool, ListingMemo, ToolListing
from groupmate.function_calls.toolsets._wrappers import Made, WrapperToolset, made_once
from groupmate.function_calls.vocabulary import Scope


def narrowed_scope(declared: Scope, narrowing: Scope) -> Scope | None:
    """Where a tool declared for `declared` chats is offered once a config narrows it to
    `narrowing`: the chats both allow (both∩group = group, private∩private = private);
    None when they share none (private∩group): the tool is then offered nowhere."""
    if narrowing == "both" or declared == narrowing:
        return declared
    if declared == "both":
        return narrowing
    return None


@dataclass(frozen=True, slots=True, eq=False)
class NarrowedToolset(WrapperToolset):
    """The wrapped set under a config's options. A tool `tools` does not admit is not
    there at all, nor is one whose own scope and `scope` share no chat. Each other tool
    carries the narrowed values (its scope the intersection, `admin_only` added), so
    that every listing shows where it is really offered; in a chat those exclude, it is
    hidden with the reason a call is refused with ("scope", "admin_only")."""

    scope: Scope = "both"
    admin_only: bool = False
    tools: ToolFilter = field(default_factory=ToolFilter)
    _made: Made = field(default_factory=dict, init=False, repr=False)
    _everyone: ListingMemo = field(default_factory=ListingMemo, init=False, repr=False)

    def _narrow(self, tool: Tool) -> Tool | None:
        if not self.tools.admits(tool.spelled):
            return None
        scope = narrowed_scope(tool.scope, self.scope)
        if scope is None:
            return None
        admin_only = tool.admin_only or self.admin_only
        if scope == tool.scope and admin_only == tool.admin_only:
            return tool
        return dataclasses.replace(tool, scope=scope, admin_only=admin_only)

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        inner = self.wrapped.listing(ctx)
        if ctx is None:
            return self._everyone.get((inner,), lambda: self._narrowed_all(inner, None))
        return self._narrowed_all(inner, ctx)

    def _narrowed_all(self, inner: ToolListing, ctx: MessageContext | None) -> ToolListing:
        offered: dict[str, Tool] = {}
        hidden: dict[str, HiddenTool] = {}
        for name, tool in inner.offered.items():
            narrowed = made_once(self._made, tool, self._narrow)
            if narrowed is None:
                continue
            # The wrapped set offered it: only the narrowed scope or rights can hide it.
            reason = None if ctx is None else narrowed.hidden_because(ctx)
            if reason is None:
                offered[name] = narrowed
            else:
                hidden[name] = HiddenTool(narrowed, reason)
        for name, held in inner.hidden.items():
            narrowed = made_once(self._made, held.tool, self._narrow)
            if narrowed is not None:
                hidden[name] = HiddenTool(narrowed, held.reason)
        return ToolListing(offered, hidden)
