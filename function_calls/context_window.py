"""Fitting a request into the model's context window: the system prompt, the tool list
and the latest message are kept; the oldest history goes first, then long tool results
are cut, oldest first (the LLM loop then offers fewer tools). Token counts are the
documented estimate of `function_calls.usage` (it leans high, so a fitted request fits).

Also how a server says a request was too long for it (`refused_window`): OpenAI, vLLM
and DeepSeek ("maximum context length is N tokens"), llama.cpp's server ("exceeds the
available context size", with `n_ctx`) and llama-cpp-python's ("exceed context window
of N"). The loop learns the window from it and sends the request again, refitted."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from groupmate.function_calls.usage import estimate_tokens
from groupmate.storage.exceptions import GroupmateError

_CUT_RESULT_CHARS = 600
_CUT_NOTE = " … [cut to fit the context window]"


class ContextOverflowError(GroupmateError):
    """Even trimmed, the request does not fit (the caller words it for the user)."""

    def __init__(self, needed: int, limit: int) -> None:
        super().__init__(f"the request needs about {needed} tokens; {limit} fit")
        self.needed = needed
        self.limit = limit


# How servers word "too long for the window" (kept specific: other 400s are not it).
_TOO_LONG = re.compile(
    r"context[_ ]length[_ ]exceeded|maximum context length|exceeds? the available context"
    r"|exceed_context_size|exceed context window|context window of \d+|prompt is too long"
    r"|too many tokens|input is too long|reduce the length of the messages",
    re.IGNORECASE,
)
_WINDOW_SAID = re.compile(
    r"maximum context length is (\d+)|context window of (\d+)|context (?:size|length) "
    r"(?:is|of) (\d+)|n_ctx\W{1,4}(\d+)",
    re.IGNORECASE,
)


def refused_window(message: str, body: object) -> int | None:
    """When an error response says the request was too long for the model's window:
    the window it names, or 0 when it names none; None for any other error."""
    said = f"{message} {json.dumps(body, ensure_ascii=False, default=str)}"
    if not _TOO_LONG.search(said):
        return None
    for part in (body, body.get("error") if isinstance(body, dict) else None):
        if isinstance(part, dict) and isinstance(part.get("n_ctx"), int) and part["n_ctx"] > 0:
            return int(part["n_ctx"])  # llama.cpp's server
    found = _WINDOW_SAID.search(said)
    if found:
        return int(next(group for group in found.groups() if group))
    return 0


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
        raise ContextOverflowError(total, limit)
    return dropped


def request_tokens(messages: Sequence[dict[str, Any]], tools_size: int = 0) -> int:
    """The estimate `fit` counts for a request of `messages` and tools of `tools_size`."""
    return tools_size + sum(_message_tokens(message) for message in messages)


@functools.lru_cache(maxsize=4096)  # a chat's lines are counted again at each message
def text_tokens(text: str) -> int:
    """The estimate `fit` counts for a message of `text`."""
    return _tokens(text)
