"""The Chinese `<when>` grammar: clause patterns matched one after another from the start.

Chinese writes no spaces between the time and the content ("明天上午9点开会"), so each
clause is a pattern anchored where the previous one ended; the first position no pattern
matches starts the content. As in English, a leftover that still looks like time ("25点",
"下周") is refused rather than left in the content.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from groupmate.function_calls.grammar import chinese_limits as limits
from groupmate.function_calls.grammar.chinese_limits import compile_zh
from groupmate.function_calls.grammar.chinese_limits import number as number  # re-exported
from groupmate.function_calls.grammar.limits import THIS_MONTH, Limit
from groupmate.function_calls.grammar.spec import (
    Clock,
    Day,
    DayPart,
    Delay,
    GrammarError,
    Repeat,
    WeekdayMode,
    WhenSpec,
)
from groupmate.function_calls.lazy_re import LazyPattern
from groupmate.storage.recurrence import MAX_INTERVAL

_WD = r"(?P<wd>[一二三四五六日天1-7])"
_WEEK = r"(?:周|星期|礼拜)"
_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
            "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}  # fmt: skip
_PARTS: dict[str, DayPart] = {
    "上午": "morning", "早上": "morning", "早晨": "morning", "清晨": "morning", "早": "morning",
    "凌晨": "morning", "中午": "noon", "下午": "afternoon", "午后": "afternoon",
    "傍晚": "evening", "晚上": "evening", "晚": "evening", "夜里": "night", "夜晚": "night",
}  # fmt: skip
_OFFSETS = {"今天": 0, "今日": 0, "明天": 1, "明日": 1, "后天": 2, "大后天": 3}
_SHORT_DAYS = {"今晚": (0, "evening"), "明早": (1, "morning"), "明晚": (1, "evening")}


_SEP = LazyPattern(r"[\s，,、]+")
_DELAY = compile_zh(
    r"(?P<pre>过)?(?P<n>NUM|半)(?:个)?(?P<half>半)?(?P<unit>分钟|分|小时|钟头|天|日|"
    r"个?星期|周|礼拜)(?P<post>以后|之后|后)?"
)
_HOURS_MINUTES_DELAY = compile_zh(
    r"(?P<pre>过)?(?P<h>NUM)个?(?:小时|钟头)零?(?P<m>NUM)分钟?(?P<post>以后|之后|后)?"
)
_QUARTER_DELAY = LazyPattern(r"(?P<n>一|两|三|[1-3])刻钟(?:以后|之后|后)")
_DAILY = LazyPattern(r"每天|每日|天天|每一天")
_EVERY_PART = LazyPattern(r"每(?:个)?(?P<part>早上|早晨|上午|中午|下午|晚上|晚)")
_WORKDAYS = compile_zh(
    rf"每个?工作日|工作日|每{_WEEK}[一1](?:到|至|-){_WEEK}?[五5]|{_WEEK}[一1](?:到|至|-){_WEEK}?[五5]"
)
_WEEKLY = compile_zh(rf"每隔?(?:(?P<n>NUM)个?|个)?{_WEEK}的?{_WEEK}?{_WD}")
_BIWEEKLY = compile_zh(rf"隔周的?{_WEEK}?{_WD}")
_MONTHLY = compile_zh(r"每隔?(?:(?P<n>NUM)个?|个)?月的?(?:(?P<d>NUM)(?:日|号)|(?P<last>最后一天))")
_EVERY_N_DAYS = compile_zh(r"每隔?(?P<n>NUM)(?:天|日)")
_YEARLY = LazyPattern(r"每年")
_WEEK_NO_DAY = compile_zh(rf"每隔?(?:NUM个?|个)?{_WEEK}")
_OFFSET_DAY = LazyPattern(r"大后天|今天|今日|明天|明日|后天")
_SHORT_DAY = LazyPattern(r"今晚|明早|明晚")
_PAST_DAY = LazyPattern(r"昨天|昨晚|前天")
_WEEKDAY_DAY = compile_zh(rf"(?P<mode>下个?|这个?|本)?{_WEEK}{_WD}")
_VAGUE_WEEK = compile_zh(rf"(?:下|这|本)个?{_WEEK}|下个?月|明年")
_DATE = compile_zh(r"(?:(?P<y>\d{4})年)?(?P<m>NUM)月(?P<d>NUM)(?:日|号)?")
_ISO = LazyPattern(r"(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})")
_MONTH_DAY = compile_zh(r"(?P<d>NUM)(?:日|号)")
_PART = LazyPattern(
    r"上午|早上|早晨|清晨|凌晨|中午|下午|午后|傍晚|晚上|夜里|夜晚|(?:早|晚)(?=\d|[一二三四五六七八九十两])"
)
_CLOCK = compile_zh(r"(?P<h>NUM)(?:点钟|点|时)(?:(?P<half>半)|(?P<q>[一三])刻|(?P<m>NUM)分?|整)?")
_HHMM = LazyPattern(r"(?P<h>\d{1,2})[:：](?P<m>\d{2})")
_LOOKS_LIKE_TIME = compile_zh(
    r"NUM(?:点|[:：]\d|分钟|小时|个小时|号|日|月)|每|周[一二三四五六日天]|星期|礼拜|"
    r"今天|明天|后天|今晚|明早|明晚|上午|下午|晚上|早上|中午|凌晨"
)
# A second time joined to the first ("9点和17点", "周一和周三") or an exception ("除了周五").
_JOINED = LazyPattern(r"(?:和|或者|或是|或|及|以及|与|跟|还有|/)")
_EXCEPT = LazyPattern(r"(?:除了|除去|但是?不|不包括)")
_CONTENT_LEADS = LazyPattern(r"^(?:[\s，,、：:。]+|提醒我们|提醒我|提醒大家|提醒|叫我|通知我)+")


class ChineseWhenParser:
    def __init__(self, text: str, start: int = 0) -> None:
        self.text = text
        self.i = start
        self.spec = WhenSpec()
        # Where the content ends: before a limit after it ("…吃药，直到周五").
        self.end = len(text)
        self.rule_end = -1

    def _match(self, pattern: LazyPattern) -> re.Match[str] | None:
        found = pattern.match(self.text, self.i)
        if found is not None:
            self.i = found.end()
        return found

    def parse(self) -> int:
        """Consume every clause; returns the offset where the content starts."""
        rules: list[Callable[[], bool]] = [
            self._delay,
            self._repeat,
            self._limit,
            self._day,
            self._window,
            self._clock,
        ]
        while self.i < len(self.text):
            before, repeat = self.i, self.spec.repeat
            if not self.spec.empty:
                self._match(_SEP)
            if not any(rule() for rule in rules):
                self.i = before
                break
            if self.spec.repeat is not repeat:  # "每天5次": a count right after the rule
                self.rule_end = self.i
        return self.i

    def check_boundary(self) -> None:
        if self.spec.repeat is not None:
            after_rule = self.i == self.rule_end
            limits.check_content_start(self.content(), self.spec.repeat, after_rule)
        rest = _SEP.sub("", self.text[self.i : self.i + 12], count=1)
        if _EXCEPT.match(rest):
            raise GrammarError(
                "暂不支持“除了…”这样的例外，请为每条规则各设一个提醒 "
                "(exceptions aren't supported; set one reminder per rule)."
            )
        joined = _JOINED.match(rest)
        if joined is not None and _LOOKS_LIKE_TIME.match(rest, joined.end()):
            raise GrammarError(
                "一个提醒只能有一个时间，请分别设置 "
                "(one time per reminder; set one reminder for each time)."
            )
        if _LOOKS_LIKE_TIME.match(rest) or _VAGUE_WEEK.match(rest):
            raise GrammarError(f"我没看懂这个时间：“{rest[:8]}” (I couldn't understand the time).")

    def content(self) -> str:
        return _CONTENT_LEADS.sub("", self.text[self.i : self.end]).strip(" ，,")

    def take_trailing_limits(self) -> None:
        """A count or limit after the content of a repeating reminder ("每天9点提醒我
        吃药，共3次", "每天提醒我吃药直到周五"): read, and cut from the content. A bare
        "3次" there is asked about; "直到" with no day stays in the content, unless it
        is an acknowledgement ("直到我说好了"), which is refused."""
        if self.spec.repeat is None:
            return
        rest = self.text[self.i :]
        found = limits.TRAILING_COUNT.search(rest)
        if found is not None:
            self.spec.set_count(number(found["n"]), found["count"])
            self.end = self.i + found.start()
        elif (bare := limits.TRAILING_BARE_COUNT.search(rest)) is not None:
            limits.refuse_bare_count(bare["count"])
        found = limits.TRAILING_LIMIT.search(self.text, self.i, self.end)
        if found is None:
            return
        reader = ChineseWhenParser(self.text[: self.end], found.start("limit"))
        try:
            taken = reader._limit() and reader.i == found.end("limit")
        except GrammarError:
            if limits.ACKNOWLEDGED.match(found["limit"]):
                raise
            return
        if taken and reader.spec.until is not None:
            self.spec.set_until(reader.spec.until)
            self.end = found.start()
        elif reader.spec.until is not None:  # "直到周五下班": a day, and more than a day
            limits.refuse_more_than_a_day(found["limit"], reader.spec.until.text)

    # --- clauses -------------------------------------------------------------------

    def _delay(self) -> bool:
        start = self.i
        quarter = self._match(_QUARTER_DELAY)
        if quarter is not None:
            minutes = 15 * number(quarter["n"])
            self.spec.set_delay(Delay(minutes=minutes, text=quarter.group()))
            return True
        both = self._match(_HOURS_MINUTES_DELAY)
        if both is not None and (both["pre"] or both["post"]):
            minutes = 60 * number(both["h"]) + number(both["m"])
            self.spec.set_delay(Delay(minutes=minutes, text=both.group()))
            return True
        self.i = start
        found = self._match(_DELAY)
        if found is None or not (found["pre"] or found["post"]):
            self.i = start
            return False
        value = 0.5 if found["n"] == "半" else float(number(found["n"]))
        if found["half"]:
            value += 0.5
        unit = found["unit"]
        text = found.group()
        if unit in ("分钟", "分"):
            delay = Delay(minutes=round(value), text=text)
        elif unit in ("小时", "钟头"):
            delay = Delay(minutes=round(value * 60), text=text)
        else:
            days = value * (1 if unit in ("天", "日") else 7)
            if days != int(days):
                delay = Delay(minutes=round(days * 1440), text=text)
            else:
                delay = Delay(days=int(days), text=text)
        self.spec.set_delay(delay)
        return True

    def _repeat(self) -> bool:
        found = self._match(limits.PER_DAY)
        if found is not None:
            limits.refuse_per_day(found.group())
        if self._match(limits.TOO_SHORT):
            raise GrammarError("最短按分钟重复 (repeats are in minutes or hours).")
        found = self._match(limits.WITHIN)
        if found is not None:
            self.spec.set_repeat(limits.within_day(found))
            return True
        if self._match(_YEARLY):
            raise GrammarError("暂不支持每年重复 (yearly reminders aren't supported).")
        found = self._match(_WORKDAYS)
        if found is not None:
            self.spec.set_repeat(Repeat("weekdays", text=found.group()))
            return True
        found = self._match(_DAILY)
        if found is not None:
            self.spec.set_repeat(Repeat("daily", text=found.group()))
            return True
        found = self._match(_EVERY_PART)
        if found is not None:
            self.spec.set_part(_PARTS[found["part"]], found.group())
            self.spec.set_repeat(Repeat("daily", text=found.group()))
            return True
        found = self._match(_WEEKLY) or self._match(_BIWEEKLY)
        if found is not None:
            interval = 2 if found.group().startswith("隔") else _interval(found)
            weekday = _WEEKDAY[found["wd"]]
            self.spec.set_repeat(Repeat("weekly", interval, weekday=weekday, text=found.group()))
            return True
        found = self._match(_MONTHLY)
        if found is not None:
            day = 31 if found["last"] else number(found["d"])
            if not 1 <= day <= 31:
                raise GrammarError(f"“{found.group()}”不是有效的日期 (not a day of the month).")
            self.spec.set_repeat(Repeat("monthly", _interval(found), day=day, text=found.group()))
            return True
        found = self._match(_EVERY_N_DAYS)
        if found is not None:
            self.spec.set_repeat(Repeat("daily", _interval(found), text=found.group()))
            return True
        if _WEEK_NO_DAY.match(self.text, self.i):
            raise GrammarError("每周哪一天？例如“每周一上午9点” (which day of the week?).")
        return False

    def _day(self) -> bool:
        if _PAST_DAY.match(self.text, self.i):
            raise GrammarError("这个时间已经过去了 (that day is in the past).")
        found = self._match(_SHORT_DAY)
        if found is not None:
            offset, part = _SHORT_DAYS[found.group()]
            self.spec.set_day(Day("offset", offset=offset, text=found.group()))
            self.spec.set_part(part, found.group())  # type: ignore[arg-type]
            return True
        day = self._one_day()
        if day is not None:
            self.spec.set_day(day)
        return day is not None

    def _one_day(self) -> Day | None:
        """A day by itself: "明天", "周五", "下周五", "12月5日", "5号"."""
        found = self._match(_OFFSET_DAY)
        if found is not None:
            return Day("offset", offset=_OFFSETS[found.group()], text=found.group())
        found = self._match(_WEEKDAY_DAY)
        if found is not None:
            mode = found["mode"] or ""
            kind: WeekdayMode = (
                "next_week" if mode.startswith("下") else "this_week" if mode else "upcoming"
            )
            weekday = _WEEKDAY[found["wd"]]
            return Day("weekday", weekday=weekday, mode=kind, text=found.group())
        found = self._match(_ISO) or self._match(_DATE)
        if found is not None:
            month, day = number(found["m"]), number(found["d"])
            if found["y"]:
                return Day("date", year=int(found["y"]), month=month, day=day, text=found.group())
            return Day("month_date", month=month, day=day, text=found.group())
        found = self._match(_MONTH_DAY)
        if found is not None:
            return Day("month_day", day=number(found["d"]), text=found.group())
        return None

    def _limit(self) -> bool:
        """ "共3次", "直到周五", "直到3月底", "截止到12月5日为止"."""
        start = self.i
        found = self._match(limits.COUNT)
        if found is not None:
            self.spec.set_count(number(found["n"]), found.group())
            return True
        if self._match(limits.UNTIL) is None:
            return False
        day = self._one_day()
        month = None if day is not None else self._match(limits.UNTIL_MONTH)
        if day is None and month is None:
            said = re.match(r"[^，,。.!！\s]{1,10}", self.text[start:])  # noqa: RUF001
            limits.refuse_until(said.group() if said is not None else "直到")
        self._match(limits.UNTIL_END)
        text = self.text[start : self.i]
        if month is not None:
            named = number(month["m"]) if month["m"] else THIS_MONTH  # "月底": this month's
            limit = Limit(month=named, month_end=bool(month["end"] or month["this"]), text=text)
        else:
            limit = Limit(day=day, text=text)
        self.spec.set_until(limit)
        return True

    def _window(self) -> bool:
        """ "9点到17点", "从上午9点到下午5点", "9:00-17:00"."""
        start = self.i
        lead = self._match(limits.WINDOW_FROM)
        first = self._read_clock()
        last = self._read_clock() if first and self._match(limits.WINDOW_TO) else None
        if first is not None and last is None and self._starts_within(lead is not None):
            self.spec.set_window(first, None)  # "从9点开始每2小时": the start alone
            return True
        if first is None or last is None:
            self.i = start
            return False
        self.spec.set_window(first, last)
        return True

    def _starts_within(self, lead: bool) -> bool:
        """After a clock, "开始"/"起" when it starts a repeat within a day: "从9点开始",
        "9点起每2小时"; not "9点开始上班", which is the content's."""
        at = self.i
        if self._match(limits.WINDOW_START) is None:
            return False
        rest = _SEP.sub("", self.text[self.i : self.i + 8], count=1)
        repeat = self.spec.repeat
        if lead or limits.WITHIN.match(rest) or (repeat is not None and repeat.every):
            return True
        self.i = at
        return False

    def _read_clock(self) -> Clock | None:
        """One clock reading, with its own part of the day made exact."""
        at = self.i
        part = self._match(_PART)
        found = self._match(_CLOCK) or self._match(_HHMM)
        if found is None:
            self.i = at
            return None
        minute = 0
        if found.re.groupindex.get("half") and found["half"]:
            minute = 30
        elif found.re.groupindex.get("q") and found["q"]:
            minute = 15 * number(found["q"])
        elif found["m"]:
            minute = number(found["m"])
        exact = ":" in found.group() or "：" in found.group()
        exact = exact and (len(found["h"]) == 2 or found["h"] == "0")
        clock = Clock(number(found["h"]), minute, exact=exact, text=self.text[at : self.i])
        return limits.window_clock(clock, part.group() if part else None, _PARTS)

    def _clock(self) -> bool:
        start = self.i
        part = self._match(_PART)
        if part is not None:
            self.spec.set_part(_PARTS[part.group()], part.group())
        found = self._match(_CLOCK)
        if found is not None:
            hour = number(found["h"])
            minute = 0
            if found["half"]:
                minute = 30
            elif found["q"]:
                minute = 15 * number(found["q"])
            elif found["m"]:
                minute = number(found["m"])
            self.spec.set_clock(Clock(hour, minute, text=self.text[start : self.i]))
            return True
        found = self._match(_HHMM)
        if found is not None:
            hour, minute = int(found["h"]), int(found["m"])
            exact = len(found["h"]) == 2 or hour == 0
            self.spec.set_clock(Clock(hour, minute, exact=exact, text=found.group()))
            return True
        return part is not None


def _interval(found: re.Match[str]) -> int:
    interval = number(found["n"]) if found["n"] else 1
    if not 1 <= interval <= MAX_INTERVAL:
        raise GrammarError(f"最多每{MAX_INTERVAL}个单位重复一次 (repeat interval too large).")
    return interval
