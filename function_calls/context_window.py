"""Fitting a request into the model's context window (`llm.context_tokens`): the system
prompt, the tool list and the latest message are always kept; the oldest history goes
first, then long tool results are cut, oldest first. Token counts are the documented
estimate of `function_calls.usage` (it leans high, so a fitted request fits)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from function_calls.usage import estimate_tokens

_CUT_RESULT_CHARS = 600
_CUT_NOTE = " … [cut to fit the context window]"


class ContextOverflowError(Exception):
    """Even trimmed, the request does not fit; the message is fit for the user."""


def _tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return estimate_tokens(text) + 4  # a few tokens of framing per message


@functools.lru_cache(maxsize=64)
def _system_tokens(content: str) -> int:
    # The system prompt is the same for many requests; dumping it each time to count it
    # cost more than the rest of the fitting.
    return _tokens({"role": "system", "content": content})


def _message_tokens(message: dict[str, Any]) -> int:
    if message.keys() == {"role", "content"} and message["role"] == "system":
        return _system_tokens(message["content"])
    return _tokens(message)


def tools_tokens(tools: list[dict[str, Any]]) -> int:
    """The estimate `fit` counts for a tool list (a caller may keep it with the list)."""
    return _tokens(tools)


def fit(
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None,
    *,
    history: list[str],
    render: Callable[[Sequence[str]], str],
    limit: int,
    tools_size: int | None = None,
) -> int:
    """Trim a request in place to `limit` tokens; returns how many history lines were
    dropped (from the front of `history`, which is shortened to match).

    `messages` is [system, latest, *tool rounds]; the latest message's content is
    `render(history)`: the earlier chat as a transcript, then the new message.
    `tools_size` is `tools_tokens(tools)` when the caller has it already.
    """
    fixed = (tools_size if tools_size is not None else tools_tokens(tools)) if tools else 0
    sizes = [_message_tokens(message) for message in messages]
    total = fixed + sum(sizes)
    dropped = 0
    while total > limit and history:
        # Estimated line by line, then measured again as rendered (the sum of the
        # lines' estimates is close to, not exactly, the whole's).
        cut = 0
        while total > limit and cut < len(history):
            total -= estimate_tokens(history[cut]) + 1  # the line and its newline
            cut += 1
        del history[:cut]
        dropped += cut
        messages[1] = {**messages[1], "content": render(history)}
        sizes[1] = _tokens(messages[1])
        total = fixed + sum(sizes)
    for index in range(2, len(messages)):
        if total <= limit:
            break
        content = messages[index].get("content")
        if isinstance(content, str) and len(content) > _CUT_RESULT_CHARS:
            messages[index] = {
                **messages[index],
                "content": content[:_CUT_RESULT_CHARS] + _CUT_NOTE,
            }
            new_size = _tokens(messages[index])
            total -= sizes[index] - new_size
            sizes[index] = new_size
    if total > limit:
        raise ContextOverflowError(
            "That is too long for the language model's context window, even without the "
            "earlier chat. Please send a shorter message."
        )
    return dropped
