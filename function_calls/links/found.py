"""Links in a chat message, as the user wrote them."""

from __future__ import annotations

import re

# Up to whitespace, quotes, angle brackets or CJK punctuation; trailing sentence
# punctuation is not part of the link ("see https://a.example/x.").
_LINK = re.compile(r"https?://[^\s<>\"'“”‘’（）【】「」《》，。！？；、]+", re.IGNORECASE)  # noqa: RUF001
_TRAILING = ".,;:!?)]}'\""


def find_links(text: str) -> list[str]:
    """The http(s) links in `text`, in order, each once."""
    found = []
    for match in _LINK.finditer(text):
        link = match.group(0)
        while link and link[-1] in _TRAILING:
            if link[-1] == ")" and link.count("(") >= link.count(")"):
                break  # a Wikipedia-style link that ends in its own parenthesis
            link = link[:-1]
        found.append(link)
    return list(dict.fromkeys(found))
