"""A page's title and main text: readability for HTML (navigation, footers, comments,
scripts and styles left out; its article split into paragraphs here), paragraphs for
plain text."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from groupmate.function_calls.links.fetch import LinkUnreadable, Page

_BLANK_LINES = re.compile(r"\n\s*\n")
LEAD_CHARS = 900


@dataclass(frozen=True, slots=True)
class Article:
    url: str
    title: str
    paragraphs: list[str]
    truncated: bool

    @property
    def site(self) -> str:
        return urlsplit(self.url).hostname or self.url

    def lead(self, limit: int = LEAD_CHARS) -> str:
        """The first paragraphs, whole, up to about `limit` characters."""
        kept: list[str] = []
        size = 0
        for paragraph in self.paragraphs:
            if kept and size + len(paragraph) > limit:
                break
            kept.append(paragraph if len(paragraph) <= limit else paragraph[:limit] + "…")
            size += len(paragraph)
        return "\n\n".join(kept)


def read_article(page: Page) -> Article:
    """Raises LinkUnreadable when the page has no readable text."""
    if page.kind == "text":
        blocks = [" ".join(b.split()) for b in _BLANK_LINES.split(page.text)]
        paragraphs = [b for b in blocks if b]
        title = paragraphs[0][:120] if paragraphs else ""
    else:
        # Imported on the first page read (in a worker thread), not with the tools:
        # readability and lxml take a sixth of a second that every start and `check`
        # would pay.
        from groupmate.function_calls.links import html_text

        tree = html_text.parse(page.text)
        title = title_tag(page.text[:200_000]) or html_text.named(tree)
        paragraphs = html_text.main_text(tree) if tree is not None else []
    if not paragraphs:
        raise LinkUnreadable("I found no readable text on that page")
    return Article(
        page.url, title or urlsplit(page.url).hostname or page.url, paragraphs, page.truncated
    )


def title_tag(markup: str) -> str:
    """The first <title>'s text, found with plain searches: a regex over a page of
    unclosed <title tags takes quadratic time, and holds the GIL while it does."""
    lower = markup.lower()
    start = lower.find("<title")
    if start < 0:
        return ""
    opened = lower.find(">", start)
    closed = lower.find("</title", opened)
    if opened < 0 or closed < 0:
        return ""
    return " ".join(html.unescape(markup[opened + 1 : closed]).split())[:200]
