"""Reading links users send: a fetch that never reaches inside the network, and the
page's main text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    from groupmate.function_calls.links.addresses import AllowList, forbidden
    from groupmate.function_calls.links.extract import Article, read_article
    from groupmate.function_calls.links.fetch import (
        LinkError,
        LinkRefused,
        LinkUnreadable,
        Page,
        PageFetcher,
        Resolver,
    )
    from groupmate.function_calls.links.found import find_links
    from groupmate.function_calls.links.limits import FetchLimits

__all__ = [
    "AllowList",
    "Article",
    "FetchLimits",
    "LinkError",
    "LinkRefused",
    "LinkUnreadable",
    "Page",
    "PageFetcher",
    "Resolver",
    "find_links",
    "forbidden",
    "read_article",
]

# Not for type checkers: they read the imports above, and a typo stays an error.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "groupmate.function_calls.links.addresses": ("AllowList", "forbidden"),
            "groupmate.function_calls.links.extract": ("Article", "read_article"),
            "groupmate.function_calls.links.fetch": (
                "LinkError",
                "LinkRefused",
                "LinkUnreadable",
                "Page",
                "PageFetcher",
                "Resolver",
            ),
            "groupmate.function_calls.links.found": ("find_links",),
            "groupmate.function_calls.links.limits": ("FetchLimits",),
        },
    )
