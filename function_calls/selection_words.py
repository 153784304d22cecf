"""The words tool selection reads: how a text becomes terms, in English and Chinese.

English is split into words, lower-cased and lightly stemmed ("reminders", "reminding"
and "reminded" are all "remind"). Chinese has no spaces: a run of Han characters becomes
its two-character pieces (and a lone character itself), so "提醒我明天开会" matches a
tool that says "提醒". Both languages also yield *concepts* (`@remind`, `@search`…) from
a lexicon of the words people use for the same thing in either language: a Chinese
message then finds a tool described only in English, and an English one finds a plugin
described only in Chinese.

The lexicon is the product's own logic, measured by the selection corpus
(tests/selection/corpus.yaml): a word belongs in a concept when people use it to ask
for what the concept's tools do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from groupmate.function_calls.selection_lexicon import (
    CHINESE_STOP,
    FILE_EXTENSIONS,
    FOLLOW_UP_ENDS,
    FOLLOW_UP_STARTS,
    LEXICON,
    STOP_WORDS,
    WEAK,
    word_set,
)

_WORD = re.compile(r"[a-z]+|[0-9]+|[\u3400-\u4dbf\u4e00-\u9fff]+")
_SPLIT_CASE = re.compile(r"(?<=[a-z])(?=[A-Z])")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
# A file's name or path ("notes/meeting-2026-03-02.md", "draft.docx"): it stands for its
# extension alone (a file, and which kind); its words name the file, not the request.
_FILE_NAME = re.compile(
    r"(?<![\w/.:-])[\w~./-]*[\w-]\.(" + "|".join(FILE_EXTENSIONS) + r")(?![\w/.-])",
    re.IGNORECASE,
)


# Words whose stem would be another word ("news" is not "new").
_UNSTEMMED = frozenset({"news"})


def _stem(word: str) -> str:
    """A light English stem: enough that the forms of one word meet ("snoozes",
    "snoozed", "snoozing" and "snooze" are all "snooz")."""
    if len(word) <= 3 or word.isdigit() or word in _UNSTEMMED:
        return word
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", "e"), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + keep
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2]:
                word = word[:-1]  # "stopped" -> "stop"
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


@dataclass(frozen=True, slots=True)
class _Lexicon:
    english: dict[str, tuple[str, ...]]  # stem -> concepts
    phrases: tuple[tuple[str, str], ...]  # " on call " -> concept
    chinese: tuple[tuple[str, str], ...]  # word -> concept, longest first
    typos: dict[str, str]  # a stem with one letter left out -> the stem


def _build_lexicon() -> _Lexicon:
    english: dict[str, list[str]] = {}
    phrases: list[tuple[str, str]] = []
    chinese: list[tuple[str, str]] = []
    for concept, words in LEXICON.items():
        for word in words:
            if _HAN.search(word):
                chinese.append((word, concept))
            elif " " in word:
                phrases.append((f" {word} ", concept))
            else:
                english.setdefault(_stem(word), []).append(concept)
    # Longer Chinese words first: a piece inside a longer word is that word's.
    chinese.sort(key=lambda pair: -len(pair[0]))
    typos: dict[str, str] = {}
    ambiguous: set[str] = set()
    for stem in english:
        if len(stem) < _MIN_TYPO:
            continue
        for index in range(1, len(stem)):  # a word's first letter is rarely the slip
            left_out = stem[:index] + stem[index + 1 :]
            if typos.get(left_out, stem) != stem:
                ambiguous.add(left_out)
            typos[left_out] = stem
    for key in ambiguous:
        del typos[key]
    return _Lexicon(
        {k: tuple(v) for k, v in english.items()}, tuple(phrases), tuple(chinese), typos
    )


_MIN_TYPO = 5  # shorter words are too alike to correct
_LEX = _build_lexicon()
# Words (and Chinese pieces) whose every concept is weak: as weak as their concepts.
_WEAK_TERMS = frozenset(
    [stem for stem, concepts in _LEX.english.items() if set(concepts) <= WEAK]
    + [word for word, concept in _LEX.chinese if concept in WEAK and len(word) == 2]
) - {word for word, concept in _LEX.chinese if concept not in WEAK}


def _corrected(stem: str) -> str:
    """A word of the lexicon that `stem` is one typing slip from ("remnd", "tomorow"),
    or `stem` itself."""
    if stem in _LEX.english or len(stem) < _MIN_TYPO:
        return stem
    found = _LEX.typos.get(stem)  # a letter left out
    if found is None:
        shorter = {stem[:i] + stem[i + 1 :] for i in range(1, len(stem))}
        near = {_LEX.typos.get(variant) for variant in shorter}  # a letter changed
        near |= shorter & _LEX.english.keys()  # a letter added
        near.discard(None)
        found = near.pop() if len(near) == 1 else None
    return found or stem


def _chinese_terms(run: str) -> Iterator[str]:
    """A run of Han characters: the concepts of the lexicon's words in it, and its
    two-character pieces that no such word covers."""
    covered = [False] * len(run)
    for word, concept in _LEX.chinese:
        start = run.find(word)
        while start != -1:
            yield f"@{concept}"
            for index in range(start, start + len(word)):
                covered[index] = True
            start = run.find(word, start + 1)
    if len(run) == 1 and not covered[0]:
        yield run
    for index in range(len(run) - 1):
        piece = run[index : index + 2]
        if not (covered[index] and covered[index + 1]) and piece not in CHINESE_STOP:
            yield piece


def terms(text: str) -> Iterator[str]:
    """The terms of `text`: stemmed English words, Chinese pieces, and their concepts
    ("@remind"). A term may come more than once (term frequency counts)."""
    text = _FILE_NAME.sub(r" \1 ", text)
    spaced = _SPLIT_CASE.sub(" ", text).replace("_", " ").lower()
    runs = _WORD.findall(spaced)
    words = f" {' '.join(run for run in runs if not _HAN.match(run))} "
    # A phrase's words mean what the phrase means, not what each means alone ("shared
    # folder" is a file's place, not stock shares or a shared expense).
    phrased: set[str] = set()
    for phrase, concept in _LEX.phrases:
        if phrase in words:
            yield f"@{concept}"
            phrased.update(phrase.split())
    for run in runs:
        if _HAN.match(run):
            yield from _chinese_terms(run)
            continue
        if run in STOP_WORDS or run.isdigit() or len(run) == 1:
            continue  # a number says which reminder or how long, never which tool
        if run in phrased:
            continue
        stem = _corrected(_stem(run))
        yield stem
        for concept in _LEX.english.get(stem, ()):
            yield f"@{concept}"


def is_weak(term: str) -> bool:
    """A term that alone does not make a tool relevant: a weak concept ("@list"), or a
    word that only ever means one ("show", "今天")."""
    return term[1:] in WEAK if term.startswith("@") else term in _WEAK_TERMS


def normalized(text: str) -> str:
    """`text` as examples are compared: lower case, words and Han characters only."""
    return " ".join(_WORD.findall(text.lower()))


def is_follow_up(text: str) -> bool:
    """A short message that asks the previous request again ("and in Paris?",
    "那周末呢"): it names too little for the tools to be chosen by its words."""
    said = text.strip().lower().rstrip("?？!。. \uff01")  # and a full-width "!"
    if len(said) > 40 or len(said.split()) > 6:
        return False
    return said.startswith(FOLLOW_UP_STARTS) or said.endswith(FOLLOW_UP_ENDS)


def has_chinese(text: str) -> bool:
    """Whether `text` has Chinese in it."""
    return _HAN.search(text) is not None


def is_piece(term: str) -> bool:
    """A two-character piece of Chinese text (not a word, not a concept)."""
    return bool(_HAN.match(term))


_READ_VERBS = word_set(
    "get read list show search find open describe view check status info query lookup"
)
_WRITE_VERBS = word_set(
    "set create add delete remove write edit move update insert append make run send "
    "cancel book submit apply log reset commit checkout rename post "
)
_QUESTION = re.compile(
    r"[?？]\s*$|^(what|which|who|when|where|how|is|are|do|does|did|can|any)\b"
    r"|什么|多少|哪|谁|几|吗|呢|是否|有没有"
)


def verb_kind(name: str) -> str:
    """ "read" or "write" by the verbs in a tool's name (git__git_log: neither)."""
    words = set(re.split(r"[_\-]+", name.lower()))
    if words & _WRITE_VERBS:
        return "write"
    return "read" if words & _READ_VERBS else ""


def is_question(text: str) -> bool:
    """Whether `text` asks to be told something rather than to have something done."""
    return bool(_QUESTION.search(text.strip().lower()))
