"""Reading links users send: a fetch that never reaches inside the network, and the
page's main text."""

from function_calls.links.addresses import AllowList, forbidden
from function_calls.links.extract import Article, read_article
from function_calls.links.fetch import (
    FetchLimits,
    LinkError,
    LinkRefused,
    LinkUnreadable,
    Page,
    PageFetcher,
    Resolver,
)
from function_calls.links.found import find_links

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
