"""The token reader under the English `<when>` grammar: where the parser is in the
tokens, and amounts of time ("90 minutes", "2 hours and 30 minutes", "1h30"), which
delays and repeats within a day both read."""

from __future__ import annotations

import re

from groupmate.function_calls.grammar.english_words import (
    DAY_UNITS,
    HOUR_UNITS,
    MINUTE_UNITS,
    NUMBER_WORDS,
    TOO_SHORT_UNITS,
    UNIT_MINUTES,
    UNITS,
    UNSUPPORTED_UNITS,
    WEEK_UNITS,
    Token,
    number_value,
)
from groupmate.function_calls.grammar.spec import Clock, GrammarError, WhenSpec


class TokenReader:
    """A position in `tokens[start:]` and the WhenSpec read so far."""

    def __init__(self, text: str, tokens: list[Token], start: int = 0) -> None:
        self.text = text
        self.tokens = tokens
        self.i = start
        self.spec = WhenSpec()
        # The token after a rule of days ("every day"): "5 times" right there may be per
        # day or in all, and is asked about.
        self.days_end: int | None = None

    # --- token helpers -------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token | None:
        index = self.i + ahead
        return self.tokens[index] if index < len(self.tokens) else None

    def word(self, ahead: int = 0) -> str:
        token = self.peek(ahead)
        return token.text if token is not None else ""

    def span(self, start: int) -> str:
        if start >= self.i:
            return ""
        return self.text[self.tokens[start].start : self.tokens[self.i - 1].end]

    # --- amounts: "90 minutes", "2 hours and 30 minutes", "an hour and a half" ------

    def amounts(self) -> tuple[int | None, int]:
        """One or more "<amount> <unit>" joined by "and"; (minutes, days)."""
        minutes = days = 0
        found = False
        while True:
            at = self.i
            amount = self.amount()
            if amount is None:
                self.i = at
                break
            value, unit = amount[0], self.unit(amount[1])
            if unit in ("minute", "hour"):
                minutes += round(value * UNIT_MINUTES[unit])
            else:
                whole = value * (7 if unit == "week" else 1)
                if whole != int(whole):
                    minutes += round(whole * 1440)
                else:
                    days += int(whole)
            found = True
            if self.word() == "and" and self.word(1) == "a" and self.word(2) == "half":
                self.i += 3  # "an hour and a half"
                minutes += UNIT_MINUTES[unit] // 2
                break
            if self.word() == "and" and self.amount_follows():
                self.i += 1
                continue
            break
        return (minutes, days) if found else (None, 0)

    def amount_follows(self) -> bool:
        token = self.peek(1)
        return token is not None and (token.kind == "dur" or number_value(token) is not None)

    def amount(self) -> tuple[float, str] | None:
        token = self.peek()
        if token is None:
            return None
        if token.kind == "dur":
            self.i += 1
            match = re.fullmatch(r"(\d+(?:\.\d+)?)([a-z]+)(?:(\d+)[a-z]*)?", token.text)
            assert match is not None
            value, unit, extra = float(match[1]), match[2], match[3]
            if extra is not None:  # "1h30"
                if unit not in HOUR_UNITS:
                    raise GrammarError(f"I couldn't read the delay “{token.text}”.")
                return value * 60 + int(extra), "m"
            return value, self.unit(unit)
        if token.text == "half" and self.word(1) in ("an", "a"):
            unit = self.unit(self.word(2))
            self.i += 3
            return 0.5, unit
        if token.kind == "number":
            value = float(token.text)
        elif token.text in NUMBER_WORDS:
            value = float(NUMBER_WORDS[token.text])
        else:
            return None
        unit_token = self.peek(1)
        if unit_token is None or unit_token.kind != "word":
            return None
        text = unit_token.text
        if text not in MINUTE_UNITS | HOUR_UNITS | DAY_UNITS | WEEK_UNITS:
            if text in TOO_SHORT_UNITS:
                raise GrammarError("The shortest delay is one minute.")
            if text in UNSUPPORTED_UNITS:
                raise GrammarError(f"Give the date instead of “{token.text} {text}”.")
            return None
        self.i += 2
        return value, text

    @staticmethod
    def unit(text: str) -> str:
        """The canonical unit ("minute", "hour", "day", "week") of a unit word."""
        for name, units in UNITS.items():
            if text in units:
                return name
        raise GrammarError(f"I couldn't read the unit “{text}”; use minutes, hours or days.")

    # --- clock readings: "9", "9:30", "9pm", "half past 9", "noon" -----------------

    def clock_reading(self, after_at: bool) -> Clock | None:
        token = self.peek()
        if token is None:
            return None
        word = token.text
        if word in ("noon", "midday"):
            self.i += 1
            return Clock(12, 0, exact=True, text="noon")
        if word == "midnight":
            self.i += 1
            return Clock(0, 0, exact=True, text="midnight")
        if word in ("half", "quarter") and self.word(1) in ("past", "after", "to"):
            hour = number_value(self.peek(2))
            if hour is None:
                return None
            self.i += 3
            minute = 30 if word == "half" else 15
            if self.word(-2) == "to":
                hour, minute = hour - 1, 60 - minute
            return self.meridiem(Clock(hour, minute, text=self.span(self.i - 3)))
        if token.kind == "clock":
            self.i += 1
            match = re.fullmatch(r"(\d{1,2})[:.](\d{2})\s*([ap])?.*", word)
            assert match is not None
            hour, minute = int(match[1]), int(match[2])
            if match[3]:
                return Clock(hour, minute, "am" if match[3] == "a" else "pm", text=word)
            exact = len(match[1]) == 2 or hour == 0
            return self.meridiem(Clock(hour, minute, exact=exact, text=word))
        if token.kind == "hourmer":
            self.i += 1
            hour = int(re.match(r"\d+", word)[0])  # type: ignore[index]
            return Clock(hour, 0, "am" if "a" in word else "pm", text=word)
        hour = None if token.text in ("a", "an") else number_value(token)
        if hour is None or (token.kind == "word" and not after_at):
            return None
        following = self.word(1)
        if not after_at and following not in ("am", "pm", "o'clock", "oclock"):
            return None  # a bare number is no time: "2 tickets"
        if token.kind == "number" and len(word) > 2:
            raise GrammarError(f"“{word}” is not a time of day; write it like 18:00.")
        self.i += 1
        return self.meridiem(Clock(hour, 0, text=word))

    def meridiem(self, clock: Clock) -> Clock:
        """A separate "am"/"pm"/"o'clock" after the number."""
        word = self.word()
        if word in ("o'clock", "oclock"):
            self.i += 1
            word = self.word()
        if word in ("am", "pm", "a.m.", "p.m."):
            self.i += 1
            return Clock(clock.hour, clock.minute, word[0] + "m", text=f"{clock.text} {word}")  # type: ignore[arg-type]
        return clock
