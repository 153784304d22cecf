"""Web search: providers behind one protocol, and the `WebSearch` service that tries them
in order, caches answers and limits each chat."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    from groupmate.function_calls.search._types import (
        SearchAnswer,
        SearchAuthError,
        SearchError,
        SearchLimitError,
        SearchProvider,
        SearchRateLimitError,
        SearchTimeoutError,
        SearchUnavailableError,
        SearchUnreadableError,
        Source,
    )
    from groupmate.function_calls.search.providers import (
        BraveSearch,
        HttpSearch,
        ModelSearch,
        SearxngSearch,
        TavilySearch,
    )
    from groupmate.function_calls.search.service import Found, WebSearch

__all__ = [
    "BraveSearch",
    "Found",
    "HttpSearch",
    "ModelSearch",
    "SearchAnswer",
    "SearchAuthError",
    "SearchError",
    "SearchLimitError",
    "SearchProvider",
    "SearchRateLimitError",
    "SearchTimeoutError",
    "SearchUnavailableError",
    "SearchUnreadableError",
    "SearxngSearch",
    "Source",
    "TavilySearch",
    "WebSearch",
]

# Not for type checkers: they read the imports above, and a typo stays an error.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "groupmate.function_calls.search._types": (
                "SearchAnswer",
                "SearchAuthError",
                "SearchError",
                "SearchLimitError",
                "SearchProvider",
                "SearchRateLimitError",
                "SearchTimeoutError",
                "SearchUnavailableError",
                "SearchUnreadableError",
                "Source",
            ),
            "groupmate.function_calls.search.providers": (
                "BraveSearch",
                "HttpSearch",
                "ModelSearch",
                "SearxngSearch",
                "TavilySearch",
            ),
            "groupmate.function_calls.search.service": ("Found", "WebSearch"),
        },
    )
