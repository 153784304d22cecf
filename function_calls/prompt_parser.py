"""Extract tool calls from the plain-text reply of a model running in prompt mode.

Two conventions are understood, whatever format the prompt asked for (models mix them up):

* ``hermes``: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` blocks;
* ``json``: a reply like ``{"tool_calls": [{"name": ..., "parameters": {...}}]}``.

Parsing is deliberately forgiving (fences, single quotes, trailing commas, Python literals,
OpenAI-shaped objects) but never guesses at broken JSON: a broken call inside explicit tags
becomes a :class:`MalformedCall` so the bot can ask the model to repair it, and anything that is
not clearly a call stays user-visible text. :func:`parse_tool_calls` never raises.

This module finds where calls are in a reply (tags, markers, bare values, reasoning);
:mod:`function_calls.tolerant_json` decodes each value, and
:mod:`function_calls.reply_text` tidies the text left around them.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from groupmate.function_calls.reply_text import CALL, CallMarker, assemble_text
from groupmate.function_calls.tolerant_json import (
    EXHAUSTED,
    MAX_DEPTH,
    TOO_DEEP,
    MalformedCall,
    ParsedCall,
    is_clear_call,
    load_json,
    normalize_calls,
    scan_value_end,
    truncate_raw,
)

__all__ = ["ParsedReply", "parse_tool_calls"]

log = logging.getLogger("groupmate.prompt_parser")


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """A model reply split into user-visible text, calls and malformed call attempts."""

    text: str
    calls: tuple[ParsedCall, ...]
    malformed: tuple[MalformedCall, ...]


# Bracket-scanner steps allowed per reply. Every "{" in free text may start a call, so
# bracket soup would otherwise cost quadratic time; past the budget the rest stays text.
_SCAN_BUDGET: Final = 200_000

# Chat-template control tokens that sometimes leak into the decoded text.
_SPECIAL_TOKENS_RE: Final = re.compile(
    r"<\|(?:python_tag|eom_id|eot_id|im_end|end_of_text|endoftext)\|>|\[TOOL_CALLS\]"
    r"|<[|｜]end[▁_ ]of[▁_ ]sentence[|｜]>"
)
# DeepSeek's raw tool-call markers, left in the text by a server that does not parse them:
# V3 "<｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{…}\n```<｜tool▁call▁end｜>",
# V3.1 "<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>", both wrapped in
# "<｜tool▁calls▁begin｜>…<｜tool▁calls▁end｜>". Full-width bars and "▁" as the model emits
# them; ASCII look-alikes as some servers re-encode them.
_DS = r"<[|｜]tool[▁_ ]{}[|｜]>"
_DS_CALL_RE: Final = re.compile(
    _DS.format("call[▁_ ]begin")
    + r"\s*(?:function\s*"
    + _DS.format("sep")
    + r"\s*)?(?P<name>[A-Za-z0-9_.-]{1,64})\s*(?:"
    + _DS.format("sep")
    + r")?(?P<args>.*?)(?:"
    + _DS.format("call[▁_ ]end")
    + r"|(?="
    + _DS.format("call[▁_ ]begin")
    + r")|\Z)",
    re.DOTALL,
)
_DS_WRAPPER_RE: Final = re.compile(_DS.format("(?:calls|outputs?)[▁_ ](?:begin|end)"))
_FENCED_RE: Final = re.compile(r"\A\s*```[\w+-]*\s*(.*?)\s*```\s*\Z", re.DOTALL)
_THINK_CLOSE_RE: Final = re.compile(r"</think(?:ing)?\s*>", re.IGNORECASE)
_THINK_TAG_RE: Final = re.compile(r"</?think(?:ing)?\s*>", re.IGNORECASE)
# <tool_code> is the deepseek format's call tag, <tool_output> its result tag.
_OPEN_TAG_RE: Final = re.compile(r"<tool_(?:call|code)\s*>", re.IGNORECASE)
_CLOSE_TAG_RE: Final = re.compile(r"</tool_(?:call|code)\s*>", re.IGNORECASE)
_RESPONSE_OPEN: Final = ("<tool_response", "<tool_output")
_RESPONSE_CLOSE_RE: Final = re.compile(r"</tool_(?:response|output)\s*>", re.IGNORECASE)
# Where something other than plain text may start: reasoning tags, call tags, (hallucinated)
# tool responses, stray closing tags, an object, or an array of objects.
_TOKEN_RE: Final = re.compile(
    r"</?think(?:ing)?\s*>|</?tool_(?:call|code|response|output)\s*>|\{|\[(?=\s*\{)",
    re.IGNORECASE,
)
# Whitespace and markdown fence markers that may wrap the JSON inside a <tool_call> block.
_TAG_NOISE_RE: Final = re.compile(r"(?:\s+|```[\w+-]*)+")
_TRAILING_FENCE_RE: Final = re.compile(r"\s*```\s*\Z")
_COMMENT_RE: Final = re.compile(r"//|/\*|#")

_FUNCTIONS_PREFIX_RE: Final = re.compile(r"functions\.([A-Za-z0-9_-]{1,64}):\s*")
# "functions.reminder_set:" left alone on a line, its arguments never written.
_DANGLING_PREFIX_RE: Final = re.compile(r"(?m)^\s*functions\.[A-Za-z0-9_-]{1,64}:\s*$")


def parse_tool_calls(
    text: str, tool_parameters: Mapping[str, frozenset[str]] | None = None
) -> ParsedReply:
    """Split a model reply into visible text, tool calls and malformed call attempts.

    ``tool_parameters`` maps known tool names to their top-level argument names; it lets
    bare JSON like ``{"name": "get_time"}`` count as a call and resolves stray ``name`` keys.
    """
    known: Mapping[str, frozenset[str]] = tool_parameters or {}
    try:
        return _parse(text, known)
    except Exception:  # pragma: no cover - last resort: a parser bug must not break the bot
        log.exception("prompt-mode parser failed; treating the reply as plain text")
        fallback = text if isinstance(text, str) else ""
        return ParsedReply(text=fallback.strip(), calls=(), malformed=())


# --------------------------------------------------------------------------- scanning


def _parse(text: str, known: Mapping[str, frozenset[str]]) -> ParsedReply:
    body = _deepseek_markers_as_tags(_SPECIAL_TOKENS_RE.sub("", text))
    budget = [_SCAN_BUDGET]
    segments: list[str | CallMarker] = []
    results: list[ParsedCall | MalformedCall] = []
    text_start = pos = 0
    # Reasoning tags count only here, between calls: the scanner steps over decoded calls
    # whole, so "<think>" inside an argument string (a reminder's text) stays an argument.
    seen_reasoning = False
    while (match := _TOKEN_RE.search(body, pos)) is not None:
        token = match.group(0)
        if _THINK_TAG_RE.fullmatch(token):
            segments.append(body[text_start : match.start()])
            if not token.startswith("</"):
                # Reasoning up to its closing tag; unclosed (e.g. the reply was cut off),
                # everything after it is thought. Calls written while thinking are not calls.
                closing = _THINK_CLOSE_RE.search(body, match.end())
                text_start = pos = len(body) if closing is None else closing.end()
            else:
                if not seen_reasoning:
                    # DeepSeek-R1 style templates put the opening tag into the prompt, so
                    # the reply starts inside the reasoning and only the closing tag shows.
                    segments.clear()
                    results.clear()
                text_start = pos = match.end()
            seen_reasoning = True
        elif token.startswith("</"):
            # A closing tag without an opening one is markup, not text.
            segments.append(body[text_start : match.start()])
            text_start = pos = match.end()
        elif token.lower().startswith(_RESPONSE_OPEN):
            # A made-up tool result is never shown. But small models also wrap their own
            # call in it: a call of an offered tool inside counts as that call.
            segments.append(body[text_start : match.start()])
            closing = _RESPONSE_CLOSE_RE.search(body, match.end())
            wrapped = []
            if closing is not None and not results:
                wrapped = _wrapped_call(body[match.end() : closing.start()], known, budget)
            if wrapped:
                results.extend(wrapped)
                segments.append(CALL)
            text_start = pos = len(body) if closing is None else closing.end()
        elif token.startswith("<"):
            segments.append(body[text_start : match.start()])
            block_results, end = _parse_tag_block(body, match.start(), match.end(), known, budget)
            results.extend(block_results)
            segments.append(CALL)
            text_start = pos = end
        elif budget[0] <= 0:
            pos = match.end()
        else:
            prefixed = _functions_prefix(body, match.start(), known)
            if prefixed is not None:
                # llama-cpp-python's chatml-function-calling style in the text:
                # "functions.reminder_set:\n{...arguments...}".
                name, prefix_start = prefixed
                stop = scan_value_end(body, match.start(), budget)
                value = (
                    None if stop is None or stop < 0 else load_json(body[match.start() : stop])[0]
                )
                if stop is not None and isinstance(value, dict):
                    segments.append(body[text_start:prefix_start])
                    results.append(ParsedCall(name, value))
                    segments.append(CALL)
                    text_start = pos = stop
                    continue
            bare_results, end = _parse_bare(body, match.start(), known, budget)
            if bare_results is None:
                pos = end
                continue
            segments.append(body[text_start : match.start()])
            results.extend(bare_results)
            segments.append(CALL)
            text_start = pos = end
    segments.append(body[text_start:])
    return ParsedReply(
        text=_DANGLING_PREFIX_RE.sub("", assemble_text(segments)).strip(),
        calls=tuple(r for r in results if isinstance(r, ParsedCall)),
        malformed=tuple(r for r in results if isinstance(r, MalformedCall)),
    )


def _deepseek_markers_as_tags(text: str) -> str:
    """DeepSeek's raw call markers rewritten as <tool_call> blocks, which the scanner then
    reads like any other (a fence around the arguments dropped; broken JSON stays broken,
    to be reported)."""
    if "tool" not in text or _DS_CALL_RE.search(text) is None:
        return text

    def block(found: re.Match[str]) -> str:
        arguments = found["args"].strip()
        fenced = _FENCED_RE.match(arguments)
        if fenced is not None:
            arguments = fenced.group(1)
        name = json.dumps(found["name"])
        return f'<tool_call>{{"name": {name}, "arguments": {arguments or "{}"}}}</tool_call>'

    return _DS_WRAPPER_RE.sub("", _DS_CALL_RE.sub(block, text))


def _functions_prefix(
    body: str, start: int, known: Mapping[str, frozenset[str]]
) -> tuple[str, int] | None:
    """("reminder_set", where the prefix starts) when "functions.reminder_set:" for an
    offered tool stands right before `start`."""
    found = _FUNCTIONS_PREFIX_RE.search(body, max(0, start - 120), start)
    if found is None or found.end() != start or found.group(1) not in known:
        return None
    return found.group(1), found.start()


def _wrapped_call(
    inner: str, known: Mapping[str, frozenset[str]], budget: list[int]
) -> list[ParsedCall | MalformedCall]:
    """The call inside a closed <tool_response> block that is the reply's first call
    attempt: an offered tool's name with explicit `arguments` (a made-up result does not
    look like that)."""
    start = inner.find("{")
    if start < 0:
        return []
    value, error = load_json(inner[start:].strip())
    if error is not None or not isinstance(value, dict) or value.get("name") not in known:
        return []
    if not isinstance(value.get("arguments", value.get("parameters")), dict | str):
        return []
    found, _ = _parse_bare(inner, start, known, budget)
    return [r for r in found or () if isinstance(r, ParsedCall)]


def _parse_bare(
    body: str, start: int, known: Mapping[str, frozenset[str]], budget: list[int]
) -> tuple[list[ParsedCall | MalformedCall] | None, int]:
    """Try a JSON value in free text; ``(None, resume_at)`` when it is not clearly a call."""
    end = scan_value_end(body, start, budget)
    if end is None or end < 0:
        return None, start + 1
    value, error = load_json(body[start:end])
    if error is not None:
        # Broken bare JSON stays text, but inner objects may still be well-formed calls.
        return None, start + 1
    if not is_clear_call(value, known):
        # Valid JSON that is not a call is data shown to the user; its inner objects too.
        return None, end
    return normalize_calls(value, body[start:end], known), end


def _parse_tag_block(
    body: str,
    tag_start: int,
    content_start: int,
    known: Mapping[str, frozenset[str]],
    budget: list[int],
) -> tuple[list[ParsedCall | MalformedCall], int]:
    """Parse one ``<tool_call>`` block; return its results and where the block ends.

    A block may hold several JSON values, may be fenced, and may lack its closing tag.
    """
    # Decoded values are normalized once the block's extent is known, so that a lone
    # value's MalformedCall can quote the whole block, tags included.
    found: list[tuple[Any, str] | MalformedCall] = []
    pos = content_start
    size = len(body)
    while True:
        noise = _TAG_NOISE_RE.match(body, pos)
        if noise is not None:
            pos = noise.end()
        if pos >= size:
            end = size  # unclosed final block
            break
        closing = _CLOSE_TAG_RE.match(body, pos)
        if closing is not None:
            end = closing.end()
            break
        if _OPEN_TAG_RE.match(body, pos) is not None:
            end = pos  # unclosed block followed by the next one
            break
        if body[pos] in "{[":
            error: str | None = None
            value_end = scan_value_end(body, pos, budget)
            if value_end is not None and value_end >= 0:
                value, error = load_json(body[pos:value_end])
                if error is None:
                    found.append((value, body[pos:value_end]))
                    pos = value_end
                    continue
            content_end, end = _block_extent(body, pos)
            if value_end is None:
                # Unbalanced to the scanner (e.g. a brace in a JSON5 comment): let the
                # decoders judge the whole content; their message also beats "unbalanced".
                content = _TRAILING_FENCE_RE.sub("", body[pos:content_end]).strip()
                # Only comments can hide a bracket from the scanner in otherwise valid input;
                # without them the slow tolerant decoders would fail anyway.
                value, error = load_json(content, tolerant=_COMMENT_RE.search(content) is not None)
                if error is None:
                    found.append((value, content))
                    break
            if value_end == TOO_DEEP:
                problem = f"JSON nested deeper than {MAX_DEPTH} levels"
            elif value_end == EXHAUSTED:
                problem = "the reply is too large or irregular to parse"
            else:
                problem = f"invalid JSON: {error}"
        else:
            if found:
                # Prose after an unclosed block that already held a call is ordinary text.
                end = pos
                break
            _, end = _block_extent(body, pos)
            problem = "expected a JSON object inside <tool_call>"
        found.append(MalformedCall(truncate_raw(body[tag_start:end]), problem))
        break
    block = body[tag_start:end]
    if not found:
        return [MalformedCall(truncate_raw(block), "empty <tool_call> block")], end
    results: list[ParsedCall | MalformedCall] = []
    for item in found:
        if isinstance(item, MalformedCall):
            results.append(item)
        else:
            value, source = item
            results.extend(normalize_calls(value, block if len(found) == 1 else source, known))
    return results, end


def _block_extent(body: str, pos: int) -> tuple[int, int]:
    """For a broken block: ``(content_end, block_end)`` judged by the tags alone.

    The next opening tag ends it, and so does the end of reasoning: a call drafted while
    thinking and left unclosed must not swallow the real answer after the reasoning.
    """
    closing = _CLOSE_TAG_RE.search(body, pos)
    starts = (_OPEN_TAG_RE.search(body, pos), _THINK_CLOSE_RE.search(body, pos))
    stop = min((match.start() for match in starts if match is not None), default=len(body))
    if closing is not None and closing.start() < stop:
        return closing.start(), closing.end()
    return stop, stop
