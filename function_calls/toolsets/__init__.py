"""Sets of tools that compose, in the shape of pydantic-ai's toolsets.

`AbstractToolset.listing(ctx)` says which tools a set offers the sender of a context
and why it hides the others (`get_tools(ctx)` is the offered part; `ctx=None`: every
tool it may offer anyone). `FunctionToolset` holds fixed tools (`ToolRegistry` is its
other name), `CombinedToolset` unites sets in order, and the wrappers only narrow:
`filtered`, `prefixed`, `prepared`, `narrowed` (a config's allow/deny lists, scope and
admin_only) and `refusing` (the tools policy and a chat's switches).

The built-ins, each plugin, each MCP and each OpenAPI server are sets; a bot composes
them once, and its `ToolInvoker` adds the policy and the switches: `invoker.registry`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    from groupmate.function_calls.filters import ToolFilter
    from groupmate.function_calls.toolsets._abstract import (
        AbstractToolset,
        HiddenTool,
        ListingMemo,
        PrepareTools,
        Refusal,
        ToolListing,
        ToolPredicate,
        own_listing,
    )
    from groupmate.function_calls.toolsets._combined import CombinedToolset
    from groupmate.function_calls.toolsets._function import FunctionToolset
    from groupmate.function_calls.toolsets._names import MAX_TOOL_NAME, exposed_name
    from groupmate.function_calls.toolsets._narrowed import NarrowedToolset, narrowed_scope
    from groupmate.function_calls.toolsets._prefixed import PrefixedToolset
    from groupmate.function_calls.toolsets._wrappers import (
        FilteredToolset,
        PreparedToolset,
        RefusingToolset,
        WrapperToolset,
    )

__all__ = [
    "MAX_TOOL_NAME",
    "AbstractToolset",
    "CombinedToolset",
    "FilteredToolset",
    "FunctionToolset",
    "HiddenTool",
    "ListingMemo",
    "NarrowedToolset",
    "PrefixedToolset",
    "PrepareTools",
    "PreparedToolset",
    "Refusal",
    "RefusingToolset",
    "ToolFilter",
    "ToolListing",
    "ToolPredicate",
    "WrapperToolset",
    "exposed_name",
    "narrowed_scope",
    "own_listing",
]

# Not for type checkers: they read the imports above, and a typo stays an error.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "groupmate.function_calls.toolsets._abstract": (
                "AbstractToolset",
                "HiddenTool",
                "ListingMemo",
                "PrepareTools",
                "Refusal",
                "ToolListing",
                "ToolPredicate",
                "own_listing",
            ),
            "groupmate.function_calls.toolsets._combined": ("CombinedToolset",),
            "groupmate.function_calls.toolsets._function": ("FunctionToolset",),
            "groupmate.function_calls.filters": ("ToolFilter",),
            "groupmate.function_calls.toolsets._narrowed": (
                "NarrowedToolset",
                "narrowed_scope",
            ),
            "groupmate.function_calls.toolsets._names": ("MAX_TOOL_NAME", "exposed_name"),
            "groupmate.function_calls.toolsets._prefixed": ("PrefixedToolset",),
            "groupmate.function_calls.toolsets._wrappers": (
                "FilteredToolset",
                "PreparedToolset",
                "RefusingToolset",
                "WrapperToolset",
            ),
        },
    )
