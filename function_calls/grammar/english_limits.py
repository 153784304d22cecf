"""English clauses of repeats within a day and of repeat limits: "every 2 hours",
"every 30 minutes", "from 9 to 17", "between 9am and 5pm", "until friday", "until
march", "until the end of march", "5 times". Anything after "until" that is not one day,
month or time is refused, never read as a limit or left in the content: "until I get
home" has no date to end on.
"""

from __future__ import annotations

import re

from groupmate.function_calls.grammar.english_reader import TokenReader
from groupmate.function_calls.grammar.english_words import (
    HOUR_UNITS,
    MINUTE_UNITS,
    MONTHS,
    TOO_SHORT_UNITS,
    number_value,
    ordinal_value,
)
from groupmate.function_calls.grammar.limits import (
    MINUTES_IN_DAY,
    THIS_MONTH,
    Limit,
    refuse_count_after_days,
    refuse_span,
)
from groupmate.function_calls.grammar.spec import Day, GrammarError, Repeat

_UNTIL = ("until", "till", "til", "untill")
_COUNTS = {"once": 1, "twice": 2, "thrice": 3}
_ACKNOWLEDGED = {"done", "acknowledged", "ack", "acked", "confirmed", "confirms", "ticked"}
# "5 times a day": how often, not how many in all.
_PER = ("a", "an", "per", "each", "every")
_PER_UNITS = {"day", "week", "month", "hour", "year", "morning", "evening", "night"}
_SHORT_DUR = re.compile(r"\d+(?:\.\d+)?(?:hours?|hrs?|h|minutes?|mins?|m)(?:\d+[a-z]*)?")


class LimitClauses(TokenReader):
    """The clauses of this module; `day_rule` is the one-time day rule of the parser."""

    def day_rule(self) -> Day | None:
        raise NotImplementedError

    # --- repeats within a day ----------------------------------------------------------

    def within_day(self) -> Repeat | None:
        """After "every": "hour", "2 hours", "30 minutes", "90 mins", "2h", "half an
        hour"; None (nothing read) for a step of days or more."""
        at = self.i
        word = self.word()
        if word in HOUR_UNITS or word in MINUTE_UNITS:
            self.i += 1
            return self._step(60 if word in HOUR_UNITS else 1)
        if word == "half" and (self.word(1) in HOUR_UNITS or self.word(2) in HOUR_UNITS):
            self.i += 2 if self.word(1) in HOUR_UNITS else 3
            return self._step(30)
        if word in TOO_SHORT_UNITS or self.word(1) in TOO_SHORT_UNITS:
            raise GrammarError("Repeats are in minutes or hours, e.g. “every 30 minutes”.")
        token = self.peek()
        short = self.word(1) in HOUR_UNITS or self.word(1) in MINUTE_UNITS
        if token is None or not (_SHORT_DUR.fullmatch(token.text) or short):
            return None  # "every 2 days", "every 2 months": a rule of days, read by the caller
        minutes, days = self.amounts()
        if minutes is None or (days and not minutes):
            self.i = at  # "every 2 days": a rule of days, read by the caller
            return None
        if days:
            raise GrammarError("Repeat every so many minutes or hours, or every so many days.")
        return self._step(minutes)

    @staticmethod
    def _step(minutes: int) -> Repeat:
        if minutes < 1:
            raise GrammarError("Repeats are in whole minutes, e.g. “every 30 minutes”.")
        if minutes >= MINUTES_IN_DAY:
            raise GrammarError("For a day or more, use “every day at …” or “every 2 days at …”.")
        return Repeat("daily", every=minutes)

    def _window(self) -> bool:
        """ "from 9 to 17", "from 9am until 5pm", "between 9:00 and 17:00", or the
        start alone: "from 9", "starting at 9"."""
        start = self.i
        lead = self.word()
        if (lead, self.word(1), self.word(2)) == ("on", "the", "hour"):
            raise GrammarError(
                "Say when the first one is, e.g. “every hour from 9” or “from 9 to 17”."
            )
        if lead not in ("from", "between", "starting", "beginning"):
            return False
        self.i += 2 if lead in ("starting", "beginning") and self.word(1) == "at" else 1
        first = self.clock_reading(True)
        if first is None:
            self.i = start
            return False
        joins = ("and",) if lead == "between" else ("to", "-", "–", *_UNTIL)
        last = None
        joined = self.i
        if self.word() in joins:
            self.i += 1
            last = self.clock_reading(True)
            if last is None and lead == "between":
                raise GrammarError(
                    f"Between {first.text} and when? For example “between 9 and 17”."
                )
            if last is None:
                self.i = joined  # "from 9 to water the plants": the start alone
        elif lead == "between":  # "starting at 9 to 5" reads as well as "from 9 to 5"
            raise GrammarError(f"Between {first.text} and when? For example “between 9 and 17”.")
        self.spec.set_window(first, last)
        return True

    # --- limits ------------------------------------------------------------------------

    def refuse_span_after(self, repeat: Repeat) -> None:
        """A span after a repeat within a day ("every 30 minutes for 2 hours"): the
        end is refused, as "for 2 hours" from when is not said exactly; never left in
        the content, where the repeat would go on for ever."""
        start = self.i
        self.i += 1
        minutes, days = self.amounts()
        said = self.span(start)
        self.i = start
        if minutes is not None and not days:
            refuse_span(said, repeat, minutes)

    def _limit(self) -> bool:
        start = self.i
        if self.word() == "up" and self.word(1) in _UNTIL:
            self.i += 1
        if self.word() in _UNTIL:
            self.i += 1
            limit = self._until_what(start)
            self.spec.set_until(limit)
            return True
        self.i = start
        count = self._count()
        if count is None:
            self.i = start
            return False
        self.spec.set_count(count, self.span(start))
        return True

    def _until_what(self, start: int) -> Limit:
        after = self.i
        if (self.word() == "the" and self.word(1) == "end") or self.word() == "end":
            self.i += 1 if self.word() == "end" else 2
            if self.word() == "of" and self.word(1) in MONTHS:
                self.i += 2
                return Limit(month=MONTHS[self.word(-1)], month_end=True, text=self.span(start))
            if (self.word(), self.word(1), self.word(2)) == ("of", "the", "month"):
                self.i += 3  # "until the end of the month": this month's last day
                return Limit(month=THIS_MONTH, month_end=True, text=self.span(start))
            self.i = after
        day = self.day_rule()
        if day is not None:
            return Limit(day=day, text=self.span(start))
        if self.word() in MONTHS and ordinal_value(self.peek(1)) is None:
            self.i += 1
            return Limit(month=MONTHS[self.word(-1)], text=self.span(start))
        clock = self.clock_reading(True)
        if clock is not None:
            return Limit(clock=clock, text=self.span(start))
        words = self._said(start)
        raise GrammarError(
            f"I can't end a reminder on “{words}”: give a day or date, e.g. “until Friday”, "
            "or a number of times, e.g. “5 times”."
        )

    def _count(self) -> int | None:
        """ "5 times", "five times", "twice", "3 times in all"; "5 times a day" is how
        often, not how many, and is refused."""
        start, word = self.i, self.word()
        if word in _COUNTS:
            count, self.i = _COUNTS[word], self.i + 1
        elif number_value(self.peek()) is not None and self.word(1) == "times":
            count, self.i = number_value(self.peek()) or 0, self.i + 2
        else:
            return None
        per = self.word(1) if self.word() in _PER else self.word()
        if per in _PER_UNITS or per in ("daily", "weekly", "hourly"):
            self.i += 2 if self.word() in _PER else 1
            raise GrammarError(
                f"“{self.span(start)}” is how often, not how many in all. Say when, e.g. "
                "“every 2 hours from 9 to 17”, or the total, e.g. “every day at 9, 5 times”."
            )
        if self.word() == "in" and self.word(1) in ("all", "total"):
            self.i += 2
        elif self.word() in ("total", "altogether"):
            self.i += 1
        elif start == self.days_end and self.spec.repeat is not None:
            refuse_count_after_days(self.span(start), self.spec.repeat.text)
        return count

    def _said(self, start: int) -> str:
        """The words from `start` up to where the content would begin: "until I get
        home" of "until I get home to water the plants"."""
        end = start
        while end < len(self.tokens) and end - start < 6:
            if end > start and self.tokens[end].text in (",", ".", "to", "that", "and"):
                break
            end += 1
        return self.text[self.tokens[start].start : self.tokens[end - 1].end]

    def trailing_limit(self, first: int) -> int | None:
        """A limit that ends the text after the content of a repeating reminder ("every
        day at 9 to take pills until friday"): read into the spec, and the content ends
        at the returned character offset. A time of day there is the content's ("to
        study until 5pm"); a count there is asked about, as it may count the content."""
        last = len(self.tokens)
        while last > first and self.tokens[last - 1].text in (".", "!"):
            last -= 1
        for index in range(last - 1, first, -1):
            if self.tokens[index].text not in _UNTIL:
                continue
            reader = type(self)(self.text, self.tokens[:last], index)
            try:
                found = reader._limit()
            except GrammarError:
                # "… to stretch until done": an acknowledgement, not the content's words.
                if any(token.text in _ACKNOWLEDGED for token in self.tokens[index:last]):
                    raise
                return None
            limit = reader.spec.until
            if not found or limit is None or limit.clock is not None:
                return None  # "to study until 5pm": the content's time
            if reader.i != last:  # "until friday evening": a day, and more than a day
                raise GrammarError(
                    f"A reminder ends on a day: write “{limit.text}” before what to remind."
                )
            self.spec.set_until(limit)
            return self.tokens[index].start
        self._trailing_span(first, last)
        counted = last - first >= 2 and self.tokens[last - 1].text == "times"
        if counted and number_value(self.tokens[last - 2]) is not None:
            said = self.span_of(last - 2, last)
            raise GrammarError(
                f"Is “{said}” how many reminders in all? Then put it with the time: "
                f"“every day at 9, {said}, to …”. If it is part of what to remind, put that "
                "in quotes."
            )
        return None

    def _trailing_span(self, first: int, last: int) -> None:
        """ "every 30 minutes drink water for 2 hours": a span at the end, as long as
        the step or longer, is refused as at the start; a shorter one is how long to do
        it ("every hour walk for 10 minutes") and stays the content's."""
        repeat = self.spec.repeat
        if repeat is None or repeat.every is None:
            return
        for index in range(last - 2, first, -1):
            if self.tokens[index].text != "for":
                continue
            reader = type(self)(self.text, self.tokens[:last], index + 1)
            minutes, days = reader.amounts()
            if minutes is not None and not days and reader.i == last and minutes >= repeat.every:
                refuse_span(self.span_of(index, last), repeat, minutes)
            return

    def span_of(self, start: int, end: int) -> str:
        return self.text[self.tokens[start].start : self.tokens[end - 1].end]
