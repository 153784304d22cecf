"""Web search: providers behind one protocol, and the `WebSearch` service that tries them
in order, caches answers and limits each chat."""

from function_calls.search._types import (
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
from function_calls.search.providers import (
    BraveSearch,
    HttpSearch,
    ModelSearch,
    SearxngSearch,
    TavilySearch,
)
from function_calls.search.service import Found, WebSearch

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
