"""Token usage of LLM requests, as the endpoint reports it (or estimated when it does
not), added up per turn: the figures budgets and the eval count."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from groupmate.function_calls.language import CJK

# Without a `usage` from the endpoint, about four characters of English (or one or two
# CJK characters) make a token; this overestimates CJK a little, never underestimates it.
_CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Prompt tokens the server reused from its prefix cache, where it says so.
    cached_tokens: int = 0
    requests: int = 0
    # Requests that reported no usage: their tokens are an estimate.
    estimated_requests: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.requests + other.requests,
            self.estimated_requests + other.estimated_requests,
        )


def estimate_tokens(text: str) -> int:
    """A documented upper-leaning estimate: CJK characters count one token each, the
    rest four characters per token."""
    cjk = len(CJK.findall(text))  # in C: this runs over every request's whole prompt
    return cjk + (len(text) - cjk + _CHARS_PER_TOKEN - 1) // _CHARS_PER_TOKEN


def usage_of(completion: Any, request: dict[str, Any], tools_tokens: int, reply_text: str) -> Usage:
    """The usage a Chat Completions response reports; else an estimate from the request
    body's messages, its tools' estimate, and the reply."""
    reported = getattr(completion, "usage", None)
    prompt = getattr(reported, "prompt_tokens", None)
    completion_tokens = getattr(reported, "completion_tokens", None)
    if isinstance(prompt, int) and isinstance(completion_tokens, int):
        details = getattr(reported, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None)
        return Usage(prompt, completion_tokens, cached if isinstance(cached, int) else 0, 1)
    body = json.dumps(request.get("messages", []), ensure_ascii=False)
    return Usage(estimate_tokens(body) + tools_tokens, estimate_tokens(reply_text), 0, 1, 1)
