"""How far a link's fetch may go. Apart from the fetch so that reading a config (link
reading's and search's settings) imports no HTTP client."""

from __future__ import annotations

from dataclasses import dataclass, field

from groupmate.function_calls.links.addresses import AllowList


@dataclass(frozen=True, slots=True)
class FetchLimits:
    max_bytes: int = 2_000_000
    connect_timeout: float = 5.0
    timeout: float = 20.0  # the whole fetch: every redirect and the body
    max_redirects: int = 5
    allow: AllowList = field(default_factory=AllowList)
