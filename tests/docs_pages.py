"""The documentation's pages for the tests that check what they say: README.md and every
page under docs/, and their fenced code blocks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

_FENCE = re.compile(r"^```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^```", re.S | re.M)


@dataclass(frozen=True, slots=True)
class Block:
    page: str  # relative to the repository: README.md, docs/guide/reminders.md
    lang: str
    body: str

    @property
    def first_line(self) -> str:
        return self.body.splitlines()[0] if self.body.strip() else ""


def pages() -> list[Path]:
    """README.md and the docs' pages, in a stable order."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def page(name: str) -> str:
    """One page's text, by its path under docs/ (or "README.md")."""
    return (ROOT / name if name == "README.md" else DOCS / name).read_text(encoding="utf-8")


def all_text() -> str:
    """Everything the documentation says, for a test that checks a fact is told somewhere
    (which page tells it may move)."""
    return "\n".join(path.read_text(encoding="utf-8") for path in pages())


def blocks(path: Path, lang: str | None = None) -> list[Block]:
    """The page's fenced blocks, in order (of one language with `lang`)."""
    name = str(path.relative_to(ROOT))
    found = [
        Block(name, match["lang"], match["body"])
        for match in _FENCE.finditer(path.read_text(encoding="utf-8"))
    ]
    return [block for block in found if lang is None or block.lang == lang]
