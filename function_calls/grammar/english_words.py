"""The English lexicon of the `<when>` grammar: the tokenizer and the words it knows.

Weekday and month names, number words, units, and the words that only ever mean time,
each with what it means; :mod:`function_calls.grammar.english` reads clauses from them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groupmate.function_calls.grammar.spec import DayPart

_TOKEN = re.compile(
    r"""
    (?P<iso>\d{4}([-/])\d{1,2}\2\d{1,2}(?:t\d{1,2}:\d{2})?)(?![\w:])
    |(?P<dotted>(?:0?[1-9]|[12]\d|3[01])\.(?:0?[1-9]|1[0-2])\.(?:\d{4}(?!\d))?)(?![\d.])
    |(?P<clock>\d{1,2}[:.]\d{2}(?:\s*(?:a\.?m\.?|p\.?m\.?)(?![a-z]))?)(?![\d:])
    |(?P<hourmer>\d{1,2}\s*(?:a\.?m\.?|p\.?m\.?)(?![a-z]))
    |(?P<ordinal>\d{1,2}(?:st|nd|rd|th))(?![a-z])
    |(?P<dur>\d+(?:\.\d+)?(?:hours?|hrs?|h|minutes?|mins?|m|days?|d|weeks?|wks?|w)
        (?:\d+(?:minutes?|mins?|m)?)?)(?![a-z])
    |(?P<slash>\d{1,2}/\d{1,2}(?:/\d{2,4})?)(?![\d/])
    |(?P<number>\d+(?:\.\d+)?)
    |(?P<mention>@[\w.\-]+)
    |(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)*)
    |(?P<punct>[,;:\-–—!.?/&+])
    |(?P<other>\S)
    """,
    re.IGNORECASE | re.VERBOSE,
)

WEEKDAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5, "sunday": 6, "sun": 6,
}  # fmt: skip
PLURAL_WEEKDAYS = {f"{name}s": day for name, day in WEEKDAYS.items() if len(name) > 5}
MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4,
    "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11,
    "nov": 11, "december": 12, "dec": 12,
}  # fmt: skip
NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50,
    "sixty": 60, "ninety": 90,
}  # fmt: skip
MINUTE_UNITS = {"minute", "minutes", "min", "mins", "m"}
HOUR_UNITS = {"hour", "hours", "hr", "hrs", "h"}
DAY_UNITS = {"day", "days", "d"}
WEEK_UNITS = {"week", "weeks", "wk", "wks", "w"}
UNITS = {"minute": MINUTE_UNITS, "hour": HOUR_UNITS, "day": DAY_UNITS, "week": WEEK_UNITS}
UNIT_MINUTES = {"minute": 1, "hour": 60, "day": 1440, "week": 10080}
TOO_SHORT_UNITS = {"second", "seconds", "sec", "secs", "s"}
UNSUPPORTED_UNITS = {"month", "months", "year", "years"}
TOMORROW = {"tomorrow", "tmrw", "tmr", "tomorow", "tommorow", "tommorrow", "2moro"}
PARTS: dict[str, DayPart] = {
    "morning": "morning", "afternoon": "afternoon", "evening": "evening", "night": "night",
    "tonight": "evening", "noon": "noon",
}  # fmt: skip
# Words that only ever mean time: at a clause boundary they are an error, never content.
TIME_WORDS = {
    "tonight", "today", "tomorrow", "yesterday", "noon", "midday", "midnight", "am", "pm",
    "o'clock", "oclock", "every", "each", "everyday", *TOMORROW, *WEEKDAYS,
}  # fmt: skip
LEADS_INTO_TIME = {"at", "on", "in", "next", "this", "coming", "until", "till", "from",
                    "starting", "by", "before", "after"}  # fmt: skip
VAGUE = {"week", "weekend", "month", "year", "later", "soon", "sometime", "morning",
          "afternoon", "evening", "night", "hour", "minute"}  # fmt: skip
JOINERS = {"and", "or", "&", "+", ",", "/"}
EXCEPTIONS = {"except", "excluding", "exclusive", "apart", "unless"}
SPAN_UNITS = {"day", "week", "month", "year", "time"}
# A when at the end of the text is not one if these words tie it to the content.
TIES = {"for", "before", "by", "until", "till", "from", "since", "after", "of", "than"}
CONTENT_LEADS = re.compile(r"^(?:[\s,;:\-–—]+|(?:to|that|about)\b\s*)+", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str  # lower case
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    tokens = []
    for match in _TOKEN.finditer(text):
        kind = match.lastgroup or "other"
        tokens.append(Token(kind, match.group().lower(), match.start(), match.end()))
    return tokens


def number_value(token: Token | None) -> int | None:
    if token is None:
        return None
    if token.kind == "number" and token.text.isdigit():
        return int(token.text)
    return NUMBER_WORDS.get(token.text) if token.kind == "word" else None


def ordinal_value(token: Token | None) -> int | None:
    if token is None:
        return None
    if token.kind == "ordinal":
        return int(token.text[:-2])
    if token.kind == "number" and token.text.isdigit():
        return int(token.text)
    return None
