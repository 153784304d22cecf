"""The one way to choose the language of what a user reads, and to write it: English, or
Chinese for a chat that writes in Chinese. A message is Chinese when it has a CJK
character (`is_chinese`); a chat, when most of its messages are (`chat_language`). A
sentence the bot says is a `PlainSentence`, both ways, and picks one for the message it
answers. Every module asks here rather than matching CJK characters itself."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CJK",
    "Lang",
    "PlainSentence",
    "as_sentence",
    "chat_language",
    "is_chinese",
    "language_of",
]

# The CJK ideographs (Extension A and the Unified block): Chinese, as users write it.
CJK = re.compile(r"[\u3400-\u9fff]")

Lang = Literal["en", "zh"]


def is_chinese(text: str) -> bool:
    """`text` has a CJK character: its writer reads Chinese."""
    return CJK.search(text) is not None


def language_of(text: str) -> Lang:
    """The language to answer `text` in."""
    return "zh" if is_chinese(text) else "en"


# The marks that end a sentence, in English and Chinese: a text ending in one keeps it.
_SENTENCE_ENDS = ".!?…。\uff01\uff1f"  # the last two: the full-width ! and ?


def as_sentence(text: str) -> str:
    """`text` as a whole sentence: its own final mark kept ("Pick 1 to 3." is not given a
    second), else a full stop in its language's form (。 for Chinese)."""
    text = text.rstrip()
    if not text or text[-1] in _SENTENCE_ENDS:
        return text
    return text + ("。" if is_chinese(text) else ".")


def chat_language(texts: Sequence[str]) -> Lang:
    """Chinese when most of these messages are: a digest is written in the chat's own."""
    return "zh" if 2 * sum(is_chinese(text) for text in texts) > len(texts) else "en"


@dataclass(frozen=True, slots=True)
class PlainSentence:
    """One sentence for the user, in English and in Chinese."""

    english: str
    chinese: str

    def for_message(self, message: str) -> str:
        """The sentence in the language the user wrote `message` in."""
        return self.in_(language_of(message))

    def in_(self, lang: Lang) -> str:
        """The sentence in `lang`."""
        return self.chinese if lang == "zh" else self.english
