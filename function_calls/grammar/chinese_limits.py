"""Chinese clauses of repeats within a day and of repeat limits: "每隔两小时", "每30分钟",
"9点到17点", "直到周五", "直到3月底", "共3次". After "直到" anything that is not one day
or month is refused ("直到我说好了" has no date to end on); "每天3次" says how often, not
how many in all, and is refused too. Chinese numbers ("十二", "两") are read here, for
these clauses and :mod:`function_calls.grammar.chinese`'s alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from groupmate.function_calls.grammar.limits import MINUTES_IN_DAY
from groupmate.function_calls.grammar.spec import (
    Clock,
    DayPart,
    GrammarError,
    Repeat,
    clock_time,
)
from groupmate.function_calls.lazy_re import LazyPattern

# A number in digits or in Chinese numerals ("12", "十二", "两"): NUM in a pattern.
NUM = r"(?:\d+|[零〇一二两三四五六七八九十]+)"


def compile_zh(pattern: str) -> LazyPattern:
    return LazyPattern(pattern.replace("NUM", NUM))


_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
           "七": 7, "八": 8, "九": 9}  # fmt: skip


def number(text: str) -> int:
    """'9', '十二', '二十三', '两' as integers."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_DIGITS[tens] if tens else 1) * 10 + (_DIGITS[ones] if ones else 0)
    value = 0
    for char in text:
        value = value * 10 + _DIGITS[char]
    return value


WITHIN = compile_zh(r"每隔?(?:(?P<n>NUM|半)个?(?P<half>半)?)?个?(?P<unit>小时|钟头|分钟|分(?!之))")
TOO_SHORT = compile_zh(r"每隔?NUM?秒")
PER_DAY = compile_zh(r"(?:每天|每日|天天|每周|每星期|每小时|每个小时|一天|一周)(?:NUM)次")
WINDOW_FROM = LazyPattern(r"从")
# "9点开始", "9点起": the first of a repeat within a day ("9点起床" is getting up).
WINDOW_START = LazyPattern(r"(?:开始|起)(?!床|来|身)")
WINDOW_TO = LazyPattern(r"(?:到|至|~|～|-|－)")  # noqa: RUF001
UNTIL = compile_zh(r"(?:一直到|直到|截止到|截至到?)")
UNTIL_MONTH = compile_zh(
    r"(?:(?P<m>NUM)月(?P<end>底|末|份?结束)?|(?:本|这个?)?月(?P<this>底|末))(?:为止)?"
)
UNTIL_END = LazyPattern(r"为止")
COUNT = compile_zh(r"(?:一共|总共|共|重复)(?P<n>NUM)次")
TRAILING_LIMIT = compile_zh(r"[，,\s]*(?P<limit>(?:一直到|直到|截止到|截至到?).+?)[。.!！]*$")  # noqa: RUF001
TRAILING_COUNT = compile_zh(r"[，,\s]*(?P<count>(?:一共|总共|共|重复)(?P<n>NUM)次)[。.!！]*$")  # noqa: RUF001
TRAILING_BARE_COUNT = compile_zh(r"(?P<count>NUM次)[。.!！]*$")  # noqa: RUF001
_LIMIT_HINT_ZH = "请给出日期（例如“直到周五”）或次数（例如“共3次”）"
_LIMIT_HINT = "give a day or date, e.g. “直到周五”, or a number of times, e.g. “共3次”"


def span_minutes(found: re.Match[str]) -> int:
    """ "两小时" (120), "30分钟" (30), "半小时" (30), "一个半小时" (90)."""
    value = 0.5 if found["n"] == "半" else float(number(found["n"]) if found["n"] else 1)
    if found["half"]:
        value += 0.5
    return round(value * (1 if found["unit"].startswith("分") else 60))


def within_day(found: re.Match[str]) -> Repeat:
    """ "每隔两小时" (120), "每30分钟" (30), "每半小时" (30), "每一个半小时" (90)."""
    minutes = span_minutes(found)
    if minutes < 1 or minutes >= MINUTES_IN_DAY:
        raise GrammarError(
            "请用“每N分钟”或“每N小时”（不到一天），一天以上用“每天”"
            " (repeat every so many minutes or hours, under a day)."
        )
    return Repeat("daily", every=minutes, text=found.group())


# A span or a bare count right where the content starts, or a span ending it.
_SPAN = r"(?P<lead>持续|连续|一共|总共|共)?(?P<n>NUM|半)个?(?P<half>半)?(?P<unit>小时|钟头|分钟)"
SPAN = compile_zh(_SPAN + r"(?!后|以后|之后|前|以前|之前)")
TRAILING_SPAN = compile_zh(_SPAN + r"[。.!！]*$")  # noqa: RUF001
BARE_COUNT = compile_zh(r"NUM次")


def check_content_start(content: str, repeat: Repeat, after_rule: bool) -> None:
    """What a repeat leaves in the content and may be its end, never guessed: "每天
    提醒我5次喝水" (5 a day, or 5 in all?), "每隔30分钟提醒我2小时喝水", "…喝水2小时"
    (for 2 hours from when?). A span shorter than the step at the end is what to do:
    "每小时提醒我休息10分钟"."""
    count = BARE_COUNT.match(content) if after_rule else None
    if count is not None and repeat.every is not None:
        refuse_bare_count(count.group())  # "每2小时 5次 喝水": 5 in all, most likely
    if repeat.every is None:
        if count is not None:
            said = count.group()
            raise GrammarError(
                f"“{said}”是一天几次，还是一共几次？一共请写“{repeat.text}9点，共{said}”；"  # noqa: RUF001
                "一天几次请写时间，例如“每3小时 9点到18点”。 "
                f"(Is “{said}” on each day or in all? Say “共{said}” for a total.)"
            )
        return
    found = SPAN.match(content)
    trailing = TRAILING_SPAN.search(content) if found is None else None
    if trailing is not None and (trailing["lead"] or span_minutes(trailing) >= repeat.every):
        found = trailing
    if found is None:
        return
    said, minutes = found.group().rstrip("。.!！"), span_minutes(found)  # noqa: RUF001
    times = minutes // repeat.every
    total = f"“{repeat.text}，共{times}次”或" if times > 1 and not minutes % repeat.every else ""
    raise GrammarError(
        f"“{said}”没说从什么时候到什么时候。请用次数或时段，例如{total}"
        f"“{repeat.text} 9点到17点”；如果是做多久，请把要提醒的事放进引号。 "  # noqa: RUF001
        f"(“{said}” doesn't say when to stop: give a number of times or the hours.)"
    )


def refuse_per_day(text: str) -> None:
    raise GrammarError(
        f"“{text}”是每天几次，不是一共几次。请说时间，例如“每2小时 9点到17点”，"
        "或者总次数，例如“每天9点，共5次” "
        f"(“{text}” is how often, not how many in all)."
    )


# "直到我说好了", "直到完成": an acknowledgement, not a day; never left in the content.
ACKNOWLEDGED = LazyPattern(r".*(?:好了|完成|做完|收到|确认|说好|打卡|done)", re.IGNORECASE)


def refuse_until(text: str) -> None:
    raise GrammarError(
        f"我没法按“{text}”结束提醒：{_LIMIT_HINT_ZH}。 (I can't end a reminder on “{text}”: "
        f"{_LIMIT_HINT}.)"
    )


def refuse_bare_count(said: str) -> None:
    raise GrammarError(
        f"“{said}”是一共几次吗？是的话请写“共{said}”。 "
        f"(Is “{said}” how many reminders in all? Then write “共{said}”.)"
    )


def refuse_more_than_a_day(said: str, day: str) -> None:
    raise GrammarError(
        f"“{said}”：提醒只能在某一天结束，请写“{day}”。 (A reminder ends on a day: write “{day}”.)"
    )


def window_clock(clock: Clock, part: str | None, parts: Mapping[str, DayPart]) -> Clock:
    """A clock of a window with its own part of the day ("下午5点") made exact: each end
    of "上午9点到下午5点" has its own."""
    if part is None:
        return clock
    wall = clock_time(clock, parts[part])
    return Clock(wall.hour, wall.minute, exact=True, text=clock.text)
