"""Reading an offline digest in tests: the lines under "Most replied to and reacted to",
and the counts on the line that quotes a message."""

from __future__ import annotations

ENGAGED = "💬 Most replied to and reacted to:"


def engaged(digest: str) -> list[str]:
    """The digest's lines under ENGAGED ([] when it has none)."""
    lines = digest.splitlines()
    if ENGAGED not in lines:
        return []
    found = []
    for line in lines[lines.index(ENGAGED) + 1 :]:
        if not line.startswith("• "):
            break
        found.append(line)
    return found


def line_of(lines: list[str], text: str) -> str:
    """The one line that quotes `text`."""
    (found,) = [line for line in lines if f"“{text}”" in line]
    return found


def counts(lines: list[str], text: str) -> str | None:
    """The counts on the line quoting `text` ("(👍 2)"); None when no line quotes it."""
    found = [line for line in lines if f"“{text}”" in line]
    assert len(found) <= 1
    return found[0].rsplit("” ", 1)[1] if found else None
