"""The documentation's pages and their code blocks, for the tests that check them:
tests/test_docs_code.py runs every block, and the platform, plugin and policy tests read
the config their page shows."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

# A fenced block, also indented under a list item: its fence's indent, language and body
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.S | re.M
)


@dataclass(frozen=True, slots=True)
class Block:
    page: str  # the page's path from the repository's root: docs/guide/reminders.md
    lang: str
    code: str

    @property
    def first_line(self) -> str:
        lines = self.code.strip().splitlines()
        return lines[0].strip() if lines else ""


def pages() -> list[Path]:
    """README.md and every page of the site."""
    return [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]


def page(name: str) -> str:
    """A page's text by its path under docs/: `page("platforms/slack.md")`."""
    return (DOCS / name).read_text()


def blocks(path: Path) -> list[Block]:
    name = path.relative_to(ROOT).as_posix()
    return [
        Block(name, found["lang"], textwrap.dedent(found["body"]))
        for found in _FENCE.finditer(path.read_text())
    ]


def code(name: str, lang: str) -> list[str]:
    """The blocks of one language on a page (a path under docs/, or README.md)."""
    path = ROOT / name if name == "README.md" else DOCS / name
    return [block.code for block in blocks(path) if block.lang == lang]
