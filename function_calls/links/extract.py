"""A page's title and main text: trafilatura for HTML (navigation, footers, comments,
scripts and styles left out), paragraphs for plain text."""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from groupmate.function_calls.links.fetch import LinkUnreadable, Page

_BLANK_LINES = re.compile(r"\n\s*\n")
LEAD_CHARS = 900

# trafilatura reports every page it finds little text in at WARNING.
logging.getLogger("trafilatura").setLevel(logging.ERROR)


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
        # Imported on the first page read (in a worker thread), not with the tools: it
        # and lxml take a sixth of a second, which every start and `check` would pay.
        import trafilatura

        text = trafilatura.extract(
            page.text,
            url=page.url,
            output_format="txt",
            include_comments=False,
            include_tables=True,
            include_images=False,
        )
        paragraphs = [line.strip() for line in (text or "").splitlines() if line.strip()]
        title = _title(page)
    if not paragraphs:
        raise LinkUnreadable("I found no readable text on that page")
    return Article(
        page.url, title or urlsplit(page.url).hostname or page.url, paragraphs, page.truncated
    )


def _title(page: Page) -> str:
    title = _title_tag(page.text[:200_000])
    if title:
        return title
    import trafilatura

    metadata = trafilatura.extract_metadata(page.text)
    return (metadata.title or "")[:200] if metadata is not None else ""


def _title_tag(markup: str) -> str:
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
