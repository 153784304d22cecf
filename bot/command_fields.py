"""A tool's argument fields as a command reads them: each field's kind from the tool's
JSON Schema (whole number, number, yes/no, one of an enum's values, a date or time,
a duration, text, or a list of one of these), one word read as that kind, and how the
usage line and a refusal name what the field takes, in English and Chinese.

A value is checked here against what the schema says in words a user reads (its range,
its choices, a list's length), so a word that doesn't fit is refused by this module's
sentence, never by the validator's wording (`bot.command_args` reads the words).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from typing import Any, Literal

from groupmate.function_calls.grammar import GrammarError, parse_duration, split_when
from groupmate.function_calls.grammar.chinese import number as chinese_number
from groupmate.function_calls.grammar.english_words import NUMBER_WORDS
from groupmate.function_calls.language import Lang, PlainSentence
from groupmate.storage.exceptions import GroupmateError

Kind = Literal["text", "integer", "number", "boolean", "choice", "datetime", "date", "time",
               "duration", "other"]  # fmt: skip
# The JSON Schema string formats a command reads in the reminder grammar's words.
_FORMATS: dict[str, Kind] = {
    "date-time": "datetime",
    "date": "date",
    "time": "time",
    "duration": "duration",
}
# Kinds that can stand before another field's words: one word, or a time whose words
# the grammar reads to their end ("tomorrow at 9 standup").
ONE_WORD: frozenset[Kind] = frozenset({"integer", "number", "boolean", "choice"})
LEADING_WHEN: frozenset[Kind] = frozenset({"datetime", "date", "time"})

_YES = frozenset({"yes", "y", "true", "on", "1", "是", "是的", "对", "开", "要", "好"})
_NO = frozenset({"no", "n", "false", "off", "0", "否", "不", "不是", "关", "不要"})
# The grammar's number words, but "a" and "an": alone they are no number ("/vote a").
_NUMBER_WORDS = {word: n for word, n in NUMBER_WORDS.items() if word not in ("a", "an")}
_CHINESE_NUMBER = re.compile(r"[零〇一二两三四五六七八九十]+")


class CommandWordsError(GroupmateError, ValueError):
    """The words after a tool's command don't make its arguments: a word that doesn't
    fit its field, or words that could fill the fields two ways. The message says which
    field and what it takes, or how to write the command, in the user's language."""


@dataclass(frozen=True, slots=True)
class CommandField:
    """One argument as a command fills it."""

    name: str
    kind: Kind
    required: bool
    many: bool = False  # a list of `kind`
    choices: tuple[Any, ...] = ()
    low: float | None = None  # inclusive bounds of a number (or a text's length)
    high: float | None = None
    above: float | None = None  # exclusive ones
    below: float | None = None
    min_items: int | None = None
    max_items: int | None = None

    def hint(self, lang: Lang) -> str:
        """What a value looks like, for the usage line: '1–3', 'red|blue', 'yes|no'."""
        if self.kind in ("integer", "number"):
            return self._bounds() or _KIND_WORD[self.kind].in_(lang)
        if self.kind == "boolean":
            return _YES_NO.in_(lang)
        if self.kind == "choice":
            return "|".join(str(choice) for choice in self.choices)
        if self.kind in _KIND_WORD:
            return _KIND_WORD[self.kind].in_(lang)
        return ""

    def expects(self, lang: Lang) -> str:
        """What the field takes, as the end of a sentence: 'a whole number from 1 to 3'."""
        zh = lang == "zh"
        if self.kind in ("integer", "number"):
            what = _KIND_WORD[self.kind].in_(lang)
            bounds = self._bounds()
            if self.low is not None and self.high is not None:
                low, high = _shown(self.low), _shown(self.high)
                bounds = f"{low} 到 {high}" if zh else f"from {low} to {high}"
            if zh:
                return f"{bounds} 的{what}" if bounds else what
            return f"a {what} {bounds}" if bounds else f"a {what}"
        if self.kind == "choice":
            listed = ("、" if zh else ", ").join(str(choice) for choice in self.choices)
            return f"其中之一：{listed}" if zh else f"one of {listed}"
        return _EXPECTS.get(self.kind, _TEXT).in_(lang)

    def _bounds(self) -> str:
        low = _shown(self.low) if self.low is not None else None
        high = _shown(self.high) if self.high is not None else None
        if low is not None and high is not None:
            return f"{low}–{high}"
        parts = []
        if low is not None:
            parts.append(f"≥{low}")
        if self.above is not None:
            parts.append(f">{_shown(self.above)}")
        if high is not None:
            parts.append(f"≤{high}")
        if self.below is not None:
            parts.append(f"<{_shown(self.below)}")
        return " ".join(parts)

    def read(self, word: str, now: datetime, lang: Lang) -> Any:
        """One value of this field from `word` (unquoted), as its schema takes it;
        raises CommandWordsError."""
        value = _READERS[self.kind](word.strip(), self, now)
        if value is None:
            raise self.misfit(word, lang)
        if self.kind in ("integer", "number") and not self._within(value):
            raise self.misfit(word, lang)
        if self.kind == "text" and not self._within(len(value)):
            length = _amount(self.low, self.high, lang)
            raise CommandWordsError(_TEXT_LENGTH.in_(lang).format(name=self.name, length=length))
        return value

    def read_leading(self, text: str, now: datetime, lang: Lang) -> tuple[Any, str]:
        """A time field's value from the start of `text` ("tomorrow at 9 standup"), and
        the words after it; raises CommandWordsError when no time leads them."""
        try:
            spec, content = split_when(text)
        except GrammarError:
            raise self.misfit(text, lang) from None
        # The grammar also finds a time at the end ("standup tomorrow at 9"): only a
        # leading one is this field's.
        if spec.empty or not text.endswith(content):
            raise self.misfit(text, lang)
        return self.read(text[: len(text) - len(content)], now, lang), content

    def _within(self, value: float) -> bool:
        return (
            (self.low is None or value >= self.low)
            and (self.high is None or value <= self.high)
            and (self.above is None or value > self.above)
            and (self.below is None or value < self.below)
        )

    def misfit(self, word: str, lang: Lang) -> CommandWordsError:
        return CommandWordsError(
            _MISFIT.in_(lang).format(word=word, name=self.name, what=self.expects(lang))
        )

    def count_misfit(self, lang: Lang) -> CommandWordsError:
        """The sentence for a list of too few or too many items."""
        count = _amount(self.min_items, self.max_items, lang)
        return CommandWordsError(_COUNT.in_(lang).format(name=self.name, count=count))


def _amount(low: float | None, high: float | None, lang: Lang) -> str:
    """'2 to 10', 'at least 2', 'at most 40' (one is no lower bound of a count)."""
    words = _COUNT_WORDS[lang == "zh"]
    low = None if low is not None and low <= 1 and high is not None else low
    if low is not None and high is not None:
        return words[0].format(low=_shown(low), high=_shown(high))
    if low is not None:
        return words[1].format(low=_shown(low))
    return words[2].format(high=_shown(high or 0))


def _shown(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


_KIND_WORD: dict[Kind, PlainSentence] = {
    "integer": PlainSentence("whole number", "整数"),
    "number": PlainSentence("number", "数字"),
    "datetime": PlainSentence("date and time", "日期和时间"),
    "date": PlainSentence("date", "日期"),
    "time": PlainSentence("time", "时间"),
    "duration": PlainSentence("duration", "时长"),
}
_YES_NO = PlainSentence("yes|no", "是|否")
_TEXT = PlainSentence("text", "文字")
_EXPECTS: dict[Kind, PlainSentence] = {
    "boolean": PlainSentence("yes or no", "是或否"),
    "datetime": PlainSentence(
        "a date and time, e.g. tomorrow at 9 or 2026-12-24 18:00",
        "日期和时间，例如 明天上午9点 或 2026-12-24 18:00",
    ),
    "date": PlainSentence("a date, e.g. friday or 2026-12-24", "日期，例如 周五 或 2026-12-24"),
    "time": PlainSentence("a time of day, e.g. 18:30 or 9am", "时间，例如 18:30 或 下午3点"),
    "duration": PlainSentence("a duration, e.g. 10m or 2h", "时长，例如 10分钟 或 2小时"),
    "other": PlainSentence("a value a command can't give", "命令给不了的值"),
}
_MISFIT = PlainSentence(
    "“{word}” doesn't fit {name}: it takes {what}.", "“{word}”不适合 {name}：需要{what}。"
)
_COUNT = PlainSentence(
    "{name} takes {count} items, separated by commas: a, b",
    "{name} 需要{count}项，用逗号分开：a, b",
)
# Between, at least, at most (English; Chinese).
_COUNT_WORDS = {
    False: ("{low} to {high}", "at least {low}", "at most {high}"),
    True: (" {low} 到 {high} ", "至少 {low} ", "最多 {high} "),
}
_TEXT_LENGTH = PlainSentence(
    "{name} takes text of {length} characters.", "{name} 需要{length}个字的文字。"
)


def _integer(word: str, field: CommandField, now: datetime) -> int | None:
    if re.fullmatch(r"[+-]?\d+", word):
        return int(word)  # \d and int() take any script's digits (full-width too)
    if word.lower() in _NUMBER_WORDS:
        return _NUMBER_WORDS[word.lower()]
    if _CHINESE_NUMBER.fullmatch(word):
        try:
            return chinese_number(word)
        except KeyError:  # "十十": not a number the grammar reads
            return None
    return None


def _number(word: str, field: CommandField, now: datetime) -> float | int | None:
    whole = _integer(word, field, now)
    if whole is not None:
        return whole
    try:
        value = float(word)
    except ValueError:
        return None
    return value if math.isfinite(value) else None  # "nan", "inf": no number a user means


def _boolean(word: str, field: CommandField, now: datetime) -> bool | None:
    lowered = word.lower()
    return True if lowered in _YES else False if lowered in _NO else None


def _choice(word: str, field: CommandField, now: datetime) -> Any:
    for choice in field.choices:
        if str(choice).casefold() == word.casefold():
            return choice
    return None


def _when(word: str, now: datetime) -> datetime | None:
    """The instant the words name ("tomorrow at 9", "in 2 hours", "明天上午9点"), in the
    chat's zone; None for words that name none, or a repeating time."""
    try:
        spec, content = split_when(word)
        if spec.empty or content or spec.repeat is not None:
            return None
        resolved = spec.resolve(now)
    except GrammarError:
        return None
    if resolved.in_minutes is not None:
        return now + timedelta(minutes=resolved.in_minutes)
    assert resolved.time is not None
    return datetime.strptime(resolved.time, "%Y-%m-%d %H:%M").replace(tzinfo=now.tzinfo)


def _datetime(word: str, field: CommandField, now: datetime) -> str | None:
    try:
        return datetime.fromisoformat(word).isoformat()
    except ValueError:
        pass
    found = _when(word, now)
    return found.isoformat() if found is not None else None


def _date(word: str, field: CommandField, now: datetime) -> str | None:
    try:
        return date.fromisoformat(word).isoformat()
    except ValueError:
        pass
    try:
        spec, _ = split_when(word)
    except GrammarError:
        return None
    if spec.clock is not None or spec.part is not None or (spec.delay and spec.delay.minutes):
        return None  # a time of day is no date's
    found = _when(word, now)
    return found.date().isoformat() if found is not None else None


def _time(word: str, field: CommandField, now: datetime) -> str | None:
    try:
        return time.fromisoformat(word).isoformat(timespec="minutes")
    except ValueError:
        pass
    try:
        spec, content = split_when(word)
        if content or spec.clock is None or spec.day or spec.repeat or spec.delay:
            return None
        wall, _ = spec.wall_time()
    except GrammarError:
        return None
    return f"{wall:%H:%M}"


def _duration(word: str, field: CommandField, now: datetime) -> str | None:
    minutes = parse_duration(word)
    return None if minutes is None or minutes < 1 else f"PT{minutes}M"


def _text(word: str, field: CommandField, now: datetime) -> str | None:
    return word or None


def _other(word: str, field: CommandField, now: datetime) -> None:
    return None


_READERS: dict[Kind, Callable[[str, CommandField, datetime], Any]] = {
    "text": _text,
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
    "choice": _choice,
    "datetime": _datetime,
    "date": _date,
    "time": _time,
    "duration": _duration,
    "other": _other,
}


def command_fields(parameters: dict[str, Any]) -> list[CommandField]:
    """The fields of a tool's parameters schema, in its order."""
    defs = parameters.get("$defs", {})
    required = set(parameters.get("required", ()))
    fields = []
    for name, raw in parameters.get("properties", {}).items():
        if isinstance(raw, dict):
            fields.append(_field(str(name), _resolved(raw, defs), name in required, defs))
    return fields


def _resolved(schema: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """The schema itself, through a `$ref` and a nullable `anyOf` (X | None)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        found = defs.get(ref.removeprefix("#/$defs/"))
        if isinstance(found, dict):
            return _resolved({**found, **{k: v for k, v in schema.items() if k != "$ref"}}, defs)
    branches = [b for b in schema.get("anyOf", ()) if isinstance(b, dict)]
    real = [b for b in branches if b.get("type") != "null"]
    if len(real) == 1:
        return _resolved(real[0], defs)
    return schema


def _field(name: str, schema: dict[str, Any], required: bool, defs: dict[str, Any]) -> CommandField:
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        item = _field(name, _resolved(schema["items"], defs), required, defs)
        if item.many:  # a list of lists: not a command's
            return CommandField(name, "other", required)
        # Its items' kind and limits, and the list's own count.
        return replace(
            item, many=True, min_items=schema.get("minItems"), max_items=schema.get("maxItems")
        )
    kind = _kind(schema)
    if kind == "text":
        return CommandField(
            name, kind, required, low=schema.get("minLength"), high=schema.get("maxLength")
        )
    return CommandField(
        name,
        kind,
        required,
        choices=tuple(schema.get("enum", ())) if kind == "choice" else (),
        low=schema.get("minimum"),
        high=schema.get("maximum"),
        above=schema.get("exclusiveMinimum"),
        below=schema.get("exclusiveMaximum"),
    )


def _kind(schema: dict[str, Any]) -> Kind:
    if "enum" in schema:
        return "choice"
    if "const" in schema:
        return "other"
    kind = schema.get("type")
    if kind == "string":
        return _FORMATS.get(str(schema.get("format", "")), "text")
    return _TYPES.get(str(kind), "other")


_TYPES: dict[str, Kind] = {"integer": "integer", "number": "number", "boolean": "boolean"}
