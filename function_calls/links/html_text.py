"""An HTML page's main text: the article readability finds in it (navigation, footers,
comments, scripts and styles left out), split into paragraphs here. Imported by
`extract` on the first page read, not at start."""

from __future__ import annotations

import logging
import re
from typing import Any

import lxml.etree
import lxml.html
from readability import Document
from readability.readability import Unparseable

# Bytes, as readability parses them itself: lxml refuses a str that declares an encoding
# (an XHTML page's <?xml ... encoding=...?>).
_PARSER = lxml.html.HTMLParser(encoding="utf-8")
# Elements that start a paragraph of their own; the rest (links, emphasis, cells) run on.
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "caption", "dd", "div", "dl", "dt",
    "figcaption", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li",
    "main", "nav", "ol", "p", "pre", "section", "table", "tr", "ul",
})  # fmt: skip
# What readability keeps inside an article that is not its text: who wrote it, and when.
_BYLINE = re.compile(r"byline|author|dateline", re.I)
_BYLINE_CHARS = 200

# readability logs each page it finds no article in at ERROR, with a traceback: for the
# bot that is a page without readable text, which the user is told.
logging.getLogger("readability").setLevel(logging.CRITICAL)


def parse(markup: str) -> lxml.html.HtmlElement | None:
    try:
        return lxml.html.document_fromstring(markup.encode("utf-8", "replace"), parser=_PARSER)
    except lxml.etree.ParserError:  # no element at all: blank, or comments only
        return None


def named(tree: lxml.html.HtmlElement | None) -> str:
    """A page's name without a <title>: the one it gives itself for sharing, else its
    first heading."""
    if tree is None:
        return ""
    named = tree.xpath("//meta[@property='og:title' or @name='twitter:title']/@content")
    for text in [*named, *(h1.text_content() for h1 in tree.iter("h1"))]:
        if text.strip():
            return " ".join(text.split())[:200]
    return ""


class _Readability(Document):  # type: ignore[misc]  # readability has no types
    """readability's, keeping every table of the article: its clean-up drops a table of
    a few short cells as too little text, and a table is often the page's point."""

    def get_preserved_elements(self, node: lxml.html.HtmlElement) -> dict[Any, bool]:
        kept: dict[Any, bool] = super().get_preserved_elements(node)
        kept.update(dict.fromkeys(node.iter("table"), True))
        return kept


def main_text(tree: lxml.html.HtmlElement) -> list[str]:
    """The article readability finds in the page, as paragraphs: one for each block
    element, line break and table row (its cells joined by " | ")."""
    try:
        # A <div> of the article, or the whole <body> where readability found none in it.
        article = lxml.html.fromstring(_Readability(tree).summary(html_partial=True))
    except (Unparseable, lxml.etree.ParserError):
        return []
    # Comments and processing instructions go, their text before and after stays.
    lxml.etree.strip_tags(article, lxml.etree.Comment, lxml.etree.ProcessingInstruction)
    for element in list(article.iter()):
        named = f"{element.get('class', '')} {element.get('id', '')}"
        # Short: a wrapper of the whole story may carry its author's name in a class.
        if _BYLINE.search(named) and len(element.text_content()) < _BYLINE_CHARS:
            element.drop_tree()
    paragraphs: list[str] = []
    line: list[str] = []

    def end_line() -> None:
        text = " ".join("".join(line).split())
        if text:
            paragraphs.append(text)
        line.clear()

    # Walked without recursion: a page can nest deeper than Python's stack.
    for event, element in lxml.etree.iterwalk(article, events=("start", "end")):
        if event == "start":
            if element.tag in _BLOCKS or element.tag == "br":
                end_line()
            elif element.tag in ("td", "th") and element.getprevious() is not None:
                line.append(" | ")
            line.append(element.text or "")
        else:
            if element.tag in _BLOCKS:
                end_line()
            line.append(element.tail or "")
    end_line()
    return paragraphs
