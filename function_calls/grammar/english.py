"""The English `<when>` grammar: one rule per kind of clause, over the tokens and words
of :mod:`function_calls.grammar.english_words`.

Clauses (a day, a clock reading, a part of the day, a repeat rule, a delay) are read in
any order until a token starts none; that token starts the content. A token that looks
like time but fits no rule ("at 25", "next week") is refused rather than left to the
content, so "at", "on", "every", "tonight" and "noon" never end up in the reminder text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from groupmate.function_calls.grammar.english_limits import LimitClauses
from groupmate.function_calls.grammar.english_words import (
    EXCEPTIONS,
    JOINERS,
    LEADS_INTO_TIME,
    MONTHS,
    PARTS,
    PLURAL_WEEKDAYS,
    SPAN_UNITS,
    TIME_WORDS,
    TOMORROW,
    VAGUE,
    WEEKDAYS,
    Token,
    number_value,
    ordinal_value,
)
from groupmate.function_calls.grammar.spec import (
    Clock,
    Day,
    Delay,
    GrammarError,
    Repeat,
    WeekdayMode,
)
from groupmate.storage.recurrence import MAX_INTERVAL


class WhenParser(LimitClauses):
    """Reads clauses from `tokens[start:]` into a WhenSpec."""

    # --- the clause loop -----------------------------------------------------------

    def parse(self) -> int:
        """Consume every clause; returns the index of the first token after them."""
        rules: list[Callable[[], bool]] = [
            self._delay,
            self._window,
            self._repeat,
            self._day,
            self._clock,
            self._part,
            self._limit,
        ]
        while self.i < len(self.tokens):
            before = self.i
            if self.spec.complete:
                # "tomorrow at 9 daily standup": the rest is content, but for a limit
                # ("every day at 9 until friday"), and the hours and days of a repeat
                # within a day ("every hour from 9 to 17 on weekdays").
                rules = [self._part, self._limit]
                repeat = self.spec.repeat
                if repeat is not None and repeat.every is not None:
                    rules += [self._window] if self.spec.clock is None else []
                    rules += [self._repeat] if repeat.kind == "daily" else []
            if self.spec.empty is False and self.word() in (",", "and"):
                self.i += 1  # a connector only counts when a clause follows it
            if not any(rule() for rule in rules):
                self.i = before
                break
        return self.i

    def check_boundary(self) -> None:
        """Refuse a token that looks like time but fit no rule."""
        token = self.peek()
        if token is None:
            return
        self._check_joined_rules(token)
        if token.kind == "number" and (self.spec.clock or self.spec.delay):
            return  # the time is complete: "tomorrow at 9 2 coffees" counts coffees
        if token.kind == "number" and token.text.isdigit() and int(token.text) <= 23:
            raise GrammarError(
                f"Is “{token.text}” a time? Write “at {token.text}” or “{token.text}:00”."
            )
        if self._looks_like_time(0):
            words = self.text[token.start :].split()[:4]
            raise GrammarError(f"I couldn't understand the time “{' '.join(words)}”.")

    def _check_joined_rules(self, token: Token) -> None:
        """What follows a complete time may not add to it: a second time or day ("at 9
        and 5pm", "on friday or saturday"), an exception ("except fridays"), an end ("for
        a week"). Each would be dropped into the content, and the reminder silently wrong."""
        word, following = token.text, self.word(1)
        if word in EXCEPTIONS or (word == "but" and following in ("not", "except", "skip")):
            raise GrammarError(
                "Exceptions such as “except friday” aren't supported; "
                "set one reminder for each rule you want."
            )
        if word in JOINERS and (self._looks_like_time(1) or following in JOINERS):
            raise GrammarError(
                "One time per reminder: I see more than one. Set one reminder for each time."
            )
        if word == "for" and self.spec.repeat is not None and self.spec.repeat.every:
            self.refuse_span_after(self.spec.repeat)
        ends = word == "for" and (
            number_value(self.peek(1)) is not None and self.word(2).rstrip("s") in SPAN_UNITS
        )
        if self.spec.repeat is not None and (
            ends or (word in ("for", "until") and following == "ever")
        ):
            raise GrammarError(
                "End a repeating reminder on a day or after a number of times, e.g. "
                "“until Friday” or “5 times”; or cancel it with /cancel when you're done."
            )

    def _looks_like_time(self, ahead: int) -> bool:
        token = self.peek(ahead)
        if token is None:
            return False
        following, after = self.word(ahead + 1), self.peek(ahead + 1)
        return (
            token.kind in ("iso", "dotted", "clock", "hourmer", "ordinal", "dur", "slash", "number")
            or token.text in TIME_WORDS
            or (
                token.text in LEADS_INTO_TIME
                and (
                    following in TIME_WORDS
                    or following in VAGUE
                    or following in MONTHS
                    or number_value(after) is not None
                    or (after is not None and after.kind != "word")
                )
            )
        )

    # --- delays: "in 90 minutes", "in 2 hours and 30 minutes", "10 minutes from now" ------

    def _delay(self) -> bool:
        start = self.i
        leading_in = self.word() in ("in", "after")
        if leading_in:
            self.i += 1
        minutes, days = self.amounts()
        if minutes is None:
            self.i = start
            return False
        if self.word() == "from" and self.word(1) == "now":
            self.i += 2
        elif self.word() == "later":
            self.i += 1
        elif not leading_in:
            self.i = start
            return False
        self.spec.set_delay(Delay(minutes=minutes, days=days, text=self.span(start)))
        return True

    # --- repeat rules --------------------------------------------------------------

    def _repeat(self) -> bool:
        start = self.i
        repeat = self._repeat_rule()
        if repeat is None:
            self.i = start
            return False
        self.spec.set_repeat(replace(repeat, text=self.span(start)))
        merged = self.spec.repeat  # "every hour on weekdays": a step, not a rule of days
        self.days_end = self.i if merged is not None and merged.every is None else None
        return True

    def _repeat_rule(self) -> Repeat | None:
        word = self.word()
        if word == "hourly":
            self.i += 1
            return Repeat("daily", every=60)
        if word in ("daily", "everyday"):
            self.i += 1
            return Repeat("daily")
        if word in ("weekdays", "workdays") or (word == "on" and self.word(1) == "weekdays"):
            self.i += 1 if word != "on" else 2
            return Repeat("weekdays")
        if self._weekday_span():
            return Repeat("weekdays")
        if word in PLURAL_WEEKDAYS or (word == "on" and self.word(1) in PLURAL_WEEKDAYS):
            self.i += 1 if word != "on" else 2
            return self._one_weekday(PLURAL_WEEKDAYS[self.tokens[self.i - 1].text], 1)
        if word in ("weekly", "biweekly", "fortnightly"):
            self.i += 1
            interval = 1 if word == "weekly" else 2
            return self._one_weekday(self._on_weekday(required=True), interval)
        if word == "monthly":
            self.i += 1
            return Repeat("monthly", day=self._on_day_of_month(required=True))
        if word in ("on", "the") or ordinal_value(self.peek()) is not None:
            return self._nth_of_every_month()
        if word not in ("every", "each"):
            return None
        self.i += 1
        return self._after_every()

    def _after_every(self) -> Repeat:
        within = self.within_day()
        if within is not None:
            return within
        word = self.word()
        interval = 1
        if word == "other":
            interval, word = 2, self.word(1)
            self.i += 1
        elif number_value(self.peek()) is not None and word not in ("a", "an"):
            interval = number_value(self.peek()) or 0  # "every 0 days" is refused, not daily
            self.i += 1
            word = self.word()
        elif word == "fortnight":
            self.i += 1
            return self._one_weekday(self._on_weekday(required=True), 2)
        if not 1 <= interval <= MAX_INTERVAL:
            raise GrammarError(f"Repeat every 1 to {MAX_INTERVAL} days, weeks or months.")
        if word in ("day", "days"):
            self.i += 1
            return Repeat("daily", interval=interval)
        if word in PARTS and word not in ("tonight", "noon") and interval == 1:
            self.i += 1
            self.spec.set_part(PARTS[word], word)
            return Repeat("daily")
        if word in ("weekday", "workday") or (
            word in ("working", "work") and self.word(1) == "day"
        ):
            self._only_every(interval, word)
            self.i += 1 if word in ("weekday", "workday") else 2
            return Repeat("weekdays")
        if self._weekday_span():
            self._only_every(interval, "weekday")
            return Repeat("weekdays")
        if word in ("week", "weeks"):
            self.i += 1
            return self._one_weekday(self._on_weekday(required=True), interval)
        if word in WEEKDAYS:
            self.i += 1
            weekday = WEEKDAYS[word]
            if self.word() in ("and", ",", "&") and self.word(1) in WEEKDAYS:
                raise GrammarError("One weekday per reminder; set one reminder for each day.")
            return self._one_weekday(weekday, interval)
        if word in ("month", "months"):
            self.i += 1
            return Repeat("monthly", interval=interval, day=self._on_day_of_month(True))
        if word in ("year", "years"):
            raise GrammarError("Yearly reminders aren't supported; set one for the date.")
        if word in ("weekend", "weekends"):
            raise GrammarError("Set one reminder for Saturday and one for Sunday.")
        if ordinal_value(self.peek()) is not None:
            raise GrammarError(
                "Write “every month on the 1st”, or a weekday such as “every monday”."
            )
        raise GrammarError("I couldn't understand what should repeat after “every”.")

    @staticmethod
    def _only_every(interval: int, what: str) -> None:
        if interval != 1:
            raise GrammarError(f"“every {interval} {what}s” isn't supported; use every weekday.")

    def _weekday_span(self) -> bool:
        """ "mon-fri", "monday to friday", "monday through friday"."""
        starts_monday = self.word() in WEEKDAYS and WEEKDAYS[self.word()] == 0
        if not (starts_monday and self.word(1) in ("-", "–", "to", "through", "thru")):
            return False
        if self.word(2) not in WEEKDAYS:
            return False
        if WEEKDAYS[self.word(2)] != 4:
            raise GrammarError("Only Monday to Friday is supported as a range of days.")
        self.i += 3
        return True

    def _one_weekday(self, weekday: int | None, interval: int) -> Repeat:
        return Repeat("weekly", interval=interval, weekday=weekday)

    def _on_weekday(self, *, required: bool) -> int | None:
        at = self.i
        if self.word() == "on":
            self.i += 1
        word = self.word()
        if word in WEEKDAYS or word in PLURAL_WEEKDAYS:
            self.i += 1
            return WEEKDAYS.get(word, PLURAL_WEEKDAYS.get(word))
        self.i = at
        if required:
            raise GrammarError("On which day of the week? For example “every week on monday”.")
        return None

    def _on_day_of_month(self, required: bool) -> int | None:
        at = self.i
        if self.word() == "on":
            self.i += 1
        if self.word() == "the":
            self.i += 1
        if self.word() == "day":
            self.i += 1
        if self.word() == "last" and self.word(1) == "day":
            self.i += 2
            return 31
        day = ordinal_value(self.peek())
        if day is not None:
            if not 1 <= day <= 31:
                raise GrammarError(f"“{self.word()}” is not a day of the month.")
            self.i += 1
            return day
        self.i = at
        if required:
            raise GrammarError("On which day of the month? For example “every month on the 1st”.")
        return None

    def _nth_of_every_month(self) -> Repeat | None:
        """ "on the 1st of every month", "the 15th of each month"."""
        day = self._on_day_of_month(False)
        if day is None:
            return None
        if self.word() == "of" and self.word(1) in ("every", "each") and self.word(2) == "month":
            self.i += 3
            return Repeat("monthly", day=day)
        return None

    # --- one-time days -------------------------------------------------------------

    def _day(self) -> bool:
        start = self.i
        day = self.day_rule()
        if day is None:
            self.i = start
            return False
        self.spec.set_day(replace(day, text=self.span(start)))
        return True

    def day_rule(self) -> Day | None:
        word = self.word()
        if word == "today":
            self.i += 1
            return Day("offset", offset=0)
        if word == "tonight":
            self.i += 1
            self.spec.set_part("evening", word)
            return Day("offset", offset=0)
        if word in TOMORROW:
            self.i += 1
            return Day("offset", offset=1)
        if word == "yesterday":
            raise GrammarError("Yesterday is in the past; I can only remind you of what's ahead.")
        if (word, self.word(1), self.word(2)) == ("the", "day", "after") or (
            word,
            self.word(1),
        ) == ("day", "after"):
            skip = 3 if word == "the" else 2
            if self.word(skip) in TOMORROW:
                self.i += skip + 1
                return Day("offset", offset=2)
            return None
        if word == "this" and self.word(1) in ("morning", "afternoon", "evening"):
            self.i += 2
            self.spec.set_part(PARTS[self.word(-1)], self.word(-1))
            return Day("offset", offset=0)
        return self._weekday_day() or self._date()

    def _weekday_day(self) -> Day | None:
        at = self.i
        mode: WeekdayMode = "upcoming"
        if self.word() == "on":
            self.i += 1
        if self.word() == "this" and self.word(1) == "coming":
            self.i += 2
        elif self.word() in ("this", "coming"):
            self.i += 1
        elif self.word() == "next":
            if self.word(1) in ("week", "month", "year", "weekend"):
                raise GrammarError(f"Which day {self.word()} {self.word(1)}? Give the day or date.")
            mode = "next"
            self.i += 1
        if self.word() in WEEKDAYS:
            self.i += 1
            return Day("weekday", weekday=WEEKDAYS[self.word(-1)], mode=mode)
        self.i = at
        return None

    def _date(self) -> Day | None:
        at = self.i
        if self.word() == "on":
            self.i += 1
        token = self.peek()
        found = self._date_forms(token) if token is not None else None
        if found is None:
            self.i = at
        return found

    def _date_forms(self, token: Token) -> Day | None:
        if token.kind == "dotted":  # 24.12. or 24.12.2026: always day.month
            self.i += 1
            day_text, month_text, year_text = token.text.split(".")
            if year_text:
                return Day("date", year=int(year_text), month=int(month_text), day=int(day_text))
            return Day("month_date", month=int(month_text), day=int(day_text))
        if token.kind == "iso":
            self.i += 1
            year, month, rest = re.split("[-/]", token.text)
            day_text, _, clock = rest.partition("t")
            if clock:
                hour, minute = clock.split(":")
                self.spec.set_clock(Clock(int(hour), int(minute), exact=True, text=clock))
            return Day("date", year=int(year), month=int(month), day=int(day_text))
        if token.kind == "slash":
            self.i += 1
            return self._slash_date(token.text)
        dot = 1 if self.word(1) == "." else 0  # "Dec. 24"
        if token.text in MONTHS and ordinal_value(self.peek(1 + dot)) is not None:
            # "dec 24", "december 24th", "dec 24 2026"
            self.i += 2 + dot
            return self._with_year(MONTHS[token.text], ordinal_value(self.peek(-1)) or 0)
        if self.word() == "the":
            self.i += 1
            token = self.peek() or token
        day = ordinal_value(token) if token.kind in ("ordinal", "number") else None
        if day is not None:
            after = 1 + (self.word(1) == "of")
            month_word = self.word(after)
            if month_word in MONTHS:
                self.i += after + 1
                return self._with_year(MONTHS[month_word], day)
            if token.kind == "ordinal":  # "on the 24th": this month's or the next one's
                self.i += 1
                if not 1 <= day <= 31:
                    raise GrammarError(f"“{token.text}” is not a day of the month.")
                return Day("month_day", day=day)
        return None

    def _with_year(self, month: int, day: int) -> Day:
        token = self.peek()
        if self.word() == ",":
            token = self.peek(1)
        if token is not None and token.kind == "number" and len(token.text) == 4:
            self.i = self.tokens.index(token) + 1
            return Day("date", year=int(token.text), month=month, day=day)
        return Day("month_date", month=month, day=day)

    @staticmethod
    def _slash_date(text: str) -> Day:
        parts = [int(part) for part in text.split("/")]
        first, second = parts[0], parts[1]
        if first <= 12 and second <= 12 and first != second:
            raise GrammarError(
                f"Is “{text}” day/month or month/day? Write it like 2026-12-24 or 24 Dec."
            )
        day, month = (first, second) if first > 12 or second <= 12 else (second, first)
        if len(parts) == 3:
            year = parts[2] + (2000 if parts[2] < 100 else 0)
            return Day("date", year=year, month=month, day=day)
        return Day("month_date", month=month, day=day)

    # --- clock readings and parts of the day ---------------------------------------

    def _clock(self) -> bool:
        start = self.i
        explicit_at = self.word() == "at"
        if explicit_at:
            self.i += 1
        clock = self.clock_reading(explicit_at)
        if clock is None:
            self.i = start
            return False
        self.spec.set_clock(clock)
        return True

    def _part(self) -> bool:
        start = self.i
        if self.word() in ("in", "this") and self.word(1) == "the":
            self.i += 2
        elif self.word() == "at" and self.word(1) == "night":
            self.i += 1
        word = self.word()
        if word in ("morning", "afternoon", "evening", "night"):
            self.i += 1
            self.spec.set_part(PARTS[word], self.span(start))
            return True
        self.i = start
        return False
