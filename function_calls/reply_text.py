"""The visible text of a prompt-mode reply once its calls are cut out: the pieces around
the calls joined, and what the cutting left behind (separators, empty fences, blank
lines) tidied. :mod:`function_calls.prompt_parser` finds the calls and calls this.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["CALL", "CallMarker", "assemble_text"]

# What may sit between two removed calls without being worth keeping as text.
_SEPARATOR_RE: Final = re.compile(r"[\s,;]*")
_FENCE_LINE_RE: Final = re.compile(r"[ \t]*```")
_EMPTY_INLINE_FENCE_RE: Final = re.compile(r"[ \t]*```[\w+-]*[ \t]*```(?!`)")
_BLANK_LINES_RE: Final = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


class CallMarker:
    """Placeholder in the segment list where a call (or call attempt) was cut out."""


CALL: Final = CallMarker()


def assemble_text(segments: list[str | CallMarker]) -> str:
    """Join the text around removed calls and tidy what the removal left behind."""
    pieces: list[str] = []
    after_call = False
    for index, segment in enumerate(segments):
        if isinstance(segment, CallMarker):
            after_call = True
            continue
        before_call = index + 1 < len(segments) and isinstance(segments[index + 1], CallMarker)
        if after_call and before_call and _SEPARATOR_RE.fullmatch(segment):
            continue  # the ", " or newline between two calls
        if after_call and pieces and pieces[-1] and segment:
            # Where an inline call was cut out, leave exactly one space between the words.
            left, right = pieces[-1][-1], segment[0]
            if not left.isspace() and not right.isspace():
                segment = " " + segment
            elif left in " \t" and right in " \t":
                segment = segment.lstrip(" \t")
        pieces.append(segment)
        after_call = False
    # Reasoning tags never get here (the scanner consumes them); one inside JSON data the
    # model shows is part of that data.
    text = _drop_empty_fences("".join(pieces))
    return _BLANK_LINES_RE.sub("\n\n", text).strip()


def _drop_empty_fences(text: str) -> str:
    """Remove markdown code fences left empty by cutting out the calls they wrapped."""
    if "```" not in text:
        return text
    kept: list[str] = []
    open_at: int | None = None
    for line in text.split("\n"):
        if open_at is None and "```" in line:
            # An inline fence around a call that was cut out: "Checking ```json ``` now".
            emptied = _EMPTY_INLINE_FENCE_RE.sub("", line)
            if emptied != line and not emptied.strip():
                continue
            line = emptied
        if _FENCE_LINE_RE.match(line) is None:
            kept.append(line)
        elif open_at is None:
            open_at = len(kept)
            kept.append(line)
        else:
            if all(not inner.strip() for inner in kept[open_at + 1 :]):
                del kept[open_at:]
            else:
                kept.append(line)
            open_at = None
    if open_at is not None and all(not inner.strip() for inner in kept[open_at + 1 :]):
        del kept[open_at:]  # an opening fence whose content was cut out and never closed
    return "\n".join(kept)
