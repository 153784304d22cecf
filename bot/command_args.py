"""The words after a tool's command as the tool's raw arguments, read from its schema,
and the usage line the same schema gives.

- `key=value` words at the end name their fields (`/weather Berlin days=3`); a list
  field takes `key=a,b`, `key=["a","b"]` or its key again (`options=a options=b`).
- The other words, bare, go to the fields that take them (`CommandLayout`): the one
  required field, whatever it is (`/vote 2`, `/weather New York`); with none required,
  the one field, or else the one text field; with several required, one word (or one
  "quoted" phrase) each in the schema's order, the last field taking the rest
  (`/poll "Lunch?" pizza, sushi`).
- A list field takes `a, b`, `a | b`, `a，b` or words apart (`/pick 1 3`); quotes keep a
  comma inside an item. Each value is read as its field's kind (`bot.command_fields`).

Nothing is guessed: words that could fill the fields two ways (two list fields, a text
field before another without quotes) are refused with the usage; a value that doesn't
fit its field says which field and what it takes, in the user's language.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from groupmate.bot.command_fields import (
    LEADING_WHEN,
    ONE_WORD,
    CommandField,
    CommandWordsError,
    command_fields,
)
from groupmate.function_calls.confirmations import TOKEN_FIELD
from groupmate.function_calls.language import Lang, PlainSentence

# Opening quote -> its closing one. An apostrophe is no quote: "it's" is a word.
_QUOTES = {'"': '"', "“": "”", "「": "」", "『": "』"}
_LIST_SEPARATORS = ("|", ",，、")  # a bar first: "a, b | c" is two items with a comma
_PAIR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=(.*)", re.DOTALL)
_USAGE = PlainSentence("Usage: {usage}", "用法：{usage}")


def split_outside_quotes(text: str, separators: str | None = None) -> list[str]:
    """The pieces of `text` between separators (None: whitespace) that are outside
    quotes, stripped, the quotes kept; empty pieces too (`list_items` needs to know a
    separator was there). Not shlex: it reads an apostrophe as a quote ("it's") and
    knows neither “…” nor 「…」, nor a separator other than spaces."""
    pieces: list[str] = []
    current: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        close = _QUOTES.get(char)
        end = text.find(close, index + 1) if close is not None else -1
        if end > index:  # a quoted run: separators inside it are the item's
            current.append(text[index : end + 1])
            index = end + 1
            continue
        if char.isspace() if separators is None else char in separators:
            pieces.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    pieces.append("".join(current))
    return [piece.strip() for piece in pieces]


def words_of(text: str) -> list[str]:
    """The words of `text`, a quoted phrase as one (its quotes kept)."""
    return [piece for piece in split_outside_quotes(text) if piece]


def unquoted(piece: str) -> str:
    """The piece without the quotes around all of it."""
    close = _QUOTES.get(piece[:1])
    if len(piece) >= 2 and close == piece[-1] and close not in piece[1:-1]:
        return piece[1:-1]
    return piece


def list_items(text: str) -> list[str]:
    """'a, b' / 'a | b' / 'a，b' / 'a b' as items, quotes keeping a separator inside."""
    for separators in _LIST_SEPARATORS:
        pieces = split_outside_quotes(text, separators)
        if len(pieces) > 1:  # a separator outside quotes: items apart by it
            return [unquoted(piece) for piece in pieces if piece]
    return [unquoted(piece) for piece in words_of(text)]


@dataclass(frozen=True, slots=True)
class CommandLayout:
    """Which fields a command's bare words fill (`bare`, in order) and which only their
    `key=value` form does (`named`)."""

    bare: tuple[CommandField, ...]
    named: tuple[CommandField, ...]

    @classmethod
    def of(cls, fields: list[CommandField]) -> CommandLayout:
        required = [f for f in fields if f.required]
        if len(required) == 1:
            bare = required
        elif required:
            # One word each, the last taking the rest: a list only last, a text before
            # another field only quoted (it has to be: its words have no end otherwise).
            lists = [f for f in required if f.many]
            ordered = not lists or (len(lists) == 1 and required[-1].many)
            kinds = ONE_WORD | LEADING_WHEN | {"text"}
            one_word = all(f.kind in kinds and not f.many for f in required[:-1])
            bare = required if ordered and one_word else []
        elif len(fields) == 1:
            bare = fields
        else:
            texts = [f for f in fields if f.kind == "text" and not f.many]
            bare = texts if len(texts) == 1 else []
        return cls(tuple(bare), tuple(f for f in fields if f not in bare))

    def usage(self, name: str, lang: Lang) -> str:
        """'/vote <option: 1–3>', '/poll "<question>" <options: a, b, …>', optional
        fields in [brackets], those only named as [key=…]."""
        parts = [f"/{name}"]
        for index, field in enumerate(self.bare):
            colon = "：" if lang == "zh" else ": "
            hint = _list_hint(field, lang) if field.many else field.hint(lang)
            shown = f"{field.name}{colon}{hint}" if hint else field.name
            quoted = field.kind == "text" and not field.many and index < len(self.bare) - 1
            part = f"<{shown}>" if field.required else f"[{shown}]"
            parts.append(f'"{part}"' if quoted else part)
        for field in self.named:
            hint = _list_hint(field, lang) if field.many else field.hint(lang)
            shown = f"{field.name}={hint or '…'}"
            parts.append(f"<{shown}>" if field.required else f"[{shown}]")
        return " ".join(parts)


def _list_hint(field: CommandField, lang: Lang) -> str:
    """'a, b, …' for words, '1, 2, …' for numbers, '1–5, …' and 'red|blue, …'."""
    if field.kind in ("integer", "number") and field.low is None and field.high is None:
        return "1, 2, …"
    if field.kind in ("text", "other"):
        return "a, b, …"
    return f"{field.hint(lang)}, …"


class CommandWords:
    """A tool's command: its fields, their layout and the usage line they give."""

    def __init__(self, name: str, parameters: dict[str, Any]) -> None:
        self.name = name
        self.fields = command_fields(parameters)
        # A held call's token is the bot's to give, after the sender's "yes": the usage
        # never offers it (written anyway, the tool refuses it, and the audit has that).
        self.layout = CommandLayout.of([f for f in self.fields if f.name != TOKEN_FIELD])

    def usage(self, lang: Lang = "en") -> str:
        return self.layout.usage(self.name, lang)

    def refusal(self, lang: Lang) -> CommandWordsError:
        return CommandWordsError(_USAGE.in_(lang).format(usage=self.usage(lang)))

    def arguments(self, words: str, *, now: datetime, lang: Lang = "en") -> dict[str, Any]:
        """The tool's raw arguments for the words after the command; raises
        CommandWordsError when they don't make them."""
        words = words.strip()
        by_name = {field.name: field for field in self.fields}
        pieces = words_of(words)
        # The key=value words at the end, back to the first that is not one.
        start = len(pieces)
        while start and (pair := _PAIR.fullmatch(pieces[start - 1])) and pair[1] in by_name:
            start -= 1
        raw: dict[str, Any] = {}
        for piece in pieces[start:]:
            key, value = piece.split("=", 1)
            field = by_name[key]
            if key in raw and not field.many:
                raise self.refusal(lang)  # one value twice: which one?
            if field.many:  # the key again adds to the list: options=a options=b
                raw[key] = [*raw.get(key, ()), *self._many(field, value, now, lang)]
            else:
                raw[key] = _read_named(field, value, now, lang)
        bare_words = _before(words, pieces, start)
        if bare_words:
            raw.update(self._bare(bare_words, [f for f in self.layout.bare if f.name not in raw],
                                  now, lang))  # fmt: skip
        missing = [f.name for f in self.fields if f.required and f.name not in raw]
        if missing:
            raise self.refusal(lang)
        for field in self.fields:
            count = len(raw[field.name]) if field.many and field.name in raw else None
            if count is not None and not _count_fits(field, count):
                raise field.count_misfit(lang)
        return raw

    def _bare(
        self, words: str, fields: list[CommandField], now: datetime, lang: Lang
    ) -> dict[str, Any]:
        """The bare words, read into the fields that take them."""
        if not fields:
            raise self.refusal(lang)
        raw: dict[str, Any] = {}
        rest = words
        for field in fields[:-1]:
            pieces = words_of(rest)
            if len(pieces) < 2:
                raise self.refusal(lang)
            first = pieces[0]
            if field.kind in LEADING_WHEN and unquoted(first) == first:
                raw[field.name], rest = field.read_leading(rest, now, lang)
                continue
            if field.kind == "text" and unquoted(first) == first:
                raise self.refusal(lang)  # where would its words end?
            raw[field.name] = field.read(unquoted(first), now, lang)
            rest = rest[len(first) :].strip()
        last = fields[-1]
        if not rest:  # "/meet tomorrow at 9": the time, and nothing for the last field
            raise self.refusal(lang)
        if last.many:
            raw[last.name] = self._many(last, rest, now, lang)
        elif last.kind == "text" and last is self.layout.bare[-1]:
            raw[last.name] = last.read(rest, now, lang)  # untouched: /find reads "a b"
        elif last.kind == "text":
            raw[last.name] = last.read(unquoted(rest), now, lang)  # quoted in the usage
        else:
            raw[last.name] = last.read(unquoted(rest), now, lang)
        return raw

    @staticmethod
    def _many(field: CommandField, text: str, now: datetime, lang: Lang) -> list[Any]:
        if text.startswith("["):  # key=["a","b"]: JSON, as a program writes it
            try:
                found = json.loads(text)
            except ValueError:
                found = None
            if isinstance(found, list):
                return [field.read(str(item), now, lang) for item in found]
        return [field.read(item, now, lang) for item in list_items(text)]


def _read_named(field: CommandField, value: str, now: datetime, lang: Lang) -> Any:
    if field.kind == "other":
        try:
            return json.loads(value)  # an object's field, written as JSON
        except ValueError:
            return value
    return field.read(unquoted(value), now, lang)


def _before(words: str, pieces: list[str], start: int) -> str:
    """The words before piece `start` (all of them when it is past the end)."""
    if start >= len(pieces):
        return words
    position = 0
    for piece in pieces[:start]:
        position = words.index(piece, position) + len(piece)
    end = words.index(pieces[start], position)
    return words[:end].strip()


def _count_fits(field: CommandField, count: int) -> bool:
    return (field.min_items is None or count >= field.min_items) and (
        field.max_items is None or count <= field.max_items
    )
