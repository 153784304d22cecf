"""What one chat line carries, read by rule rather than by a model: a decision, a date,
a question, a mention of someone. English and Chinese. Used by the offline digest and by
catch-up's "for you" part; deterministic, so that both are the same on every run."""

from __future__ import annotations

import re
from typing import Literal

from groupmate.function_calls.language import is_chinese

# Agreement and plans: "we agreed…", "let's…", "deadline", "决定", "截止", "说好"…
_DECISION = re.compile(
    r"\bwe(?:'ve| have)? (?:all )?(?:agreed|decided|settled|chose|picked)\b|\bagreed\b|"
    r"\bdecided\b|\bdecision\b|\blet'?s\b|\blet us\b|\bdeadline\b|\bdue (?:on|by|date)\b|"
    r"\b(?:we(?:'ll| will) )?go(?:ing)? with\b|\bfinal (?:call|answer|decision|plan)\b|"
    r"\bsettled\b|\bconfirmed\b|\bit'?s a plan\b|"
    r"决定|定了|定下|说定|说好|约好|商定|确定了|已确定|敲定|同意|一致|就这么(?:办|定)|"
    r"截止|最晚|期限|那就|我们.{0,12}吧",
    re.IGNORECASE,
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_ZH_NUMBER = r"(?:\d{1,2}|[一二三四五六七八九十]{1,3})"
# A day named: weekdays, tomorrow, next week, a date; "today" and "tonight" are left out
# (nearly every line of a day's chat is about today).
_DATE = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:tomorrow|tmrw)\b|"
    r"\bnext (?:week|month|mon|tue|wed|thu|fri|sat|sun)|\bthis (?:weekend|friday)\b|"
    rf"\b{_MONTH} \d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)? {_MONTH}(?!\w)|"
    r"\b\d{4}-\d{2}-\d{2}\b|(?<![\d/])\d{1,2}/\d{1,2}(?![\d/])|\bEOD\b|"
    r"\bend of (?:the )?(?:day|week|month)\b|"
    r"(?:周|星期|礼拜)[一二三四五六日天末]|明天|明晚|后天|下周|下星期|下个?月|月底|"
    rf"{_ZH_NUMBER}月{_ZH_NUMBER}[日号]|{_ZH_NUMBER}号",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"[?？]|(?:吗|呢|么|没有)[\s。！!～~]*$")  # noqa: RUF001
_WORD_CHARS = re.compile(r"^[\w .'-]+$")

LineKind = Literal["decision", "date"]


def line_kind(text: str) -> LineKind | None:
    """ "decision" for a line that settles something, "date" for one that names a day,
    None for the rest. A decision that names a day is a decision."""
    if _DECISION.search(text):
        return "decision"
    if _DATE.search(text):
        return "date"
    return None


def is_question(text: str) -> bool:
    return _QUESTION.search(text.strip()) is not None


def mentions(text: str, user_id: str, name: str) -> bool:
    """Whether `text` names this person: "@name", "@id", or the name itself (a first
    name of three letters or more counts too: "Alice," for "Alice Chen")."""
    lowered = text.casefold()
    handles = {user_id.casefold(), name.casefold()} - {""}
    # "@Ann" is Ann, "@Anna" is not: the handle ends where a word would.
    if any(re.search(rf"@{re.escape(h)}(?![\w-])", lowered) for h in handles):
        return True
    names = {name.strip()}
    first = name.split()[0] if name.split() else ""
    if len(first) >= 3:
        names.add(first)
    # A bare name as written, capital and all: "Will Chen" is not every "I will".
    return any(_names(text, candidate) for candidate in names if candidate)


def _names(text: str, name: str) -> bool:
    if len(name) < 2:
        return False  # a one-letter name would match everywhere
    if is_chinese(name):
        return name in text
    if not _WORD_CHARS.match(name):
        return False
    if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) is not None:
        return True
    # Called by name first thing, in any case: "alice, ping me".
    return re.match(rf"\s*{re.escape(name)}\s*[,:，：]", text, re.IGNORECASE) is not None
