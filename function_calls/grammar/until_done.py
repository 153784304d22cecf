"""“Until done” in words: "until someone says done", "until @bob and @carol say done",
"直到我说好了". The clause names who must acknowledge the reminder (the asker, anyone, or
each of its people); it is cut out of the request before the `<when>` and the content are
read, so "remind us every 10 minutes until someone says done to stretch" is the repeat,
the rule and the content.

Only the exact forms below are a rule. A clause that starts like one but goes on ("until
done with the report", "until someone answers the phone", "直到有人回复邮件") or says
another word ("until I say ok") is refused with how to write it, never read as a rule nor
left silently in the reminder's text. Other "until" phrases ("until Friday", "until I get
home") are not this module's: the limit grammar reads or refuses them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from groupmate.function_calls.grammar.spec import GrammarError
from groupmate.function_calls.lazy_re import LazyPattern
from groupmate.storage.vocabulary import AckRule

__all__ = ["UntilDone", "ack_for", "check_repeat", "split_until_done"]


@dataclass(frozen=True, slots=True)
class UntilDone:
    """Who must acknowledge, as the words said it."""

    rule: AckRule
    # "until @bob and @carol say done": the people named (handles without "@"), who must
    # be exactly the reminder's people; empty for "everyone", "I", "someone".
    names: tuple[str, ...] = ()
    text: str = ""


_NAME = r"@?[^\W\d_][\w.\-]*"
_EN = LazyPattern(
    r"\b(?:until|till|til|'til)\s+"
    r"(?:(?P<bare>(?:it\s+is\s+|it's\s+|its\s+)?done)\b"
    r"|(?P<who>i|someone|somebody|anyone|anybody|one\s+of\s+us"
    r"|(?:every(?:one|body)|all\s+of\s+(?:us|you|them)|we\s+all|you\s+all|they\s+all"
    r"|each\s+of\s+(?:us|you|them))(?:\s+mentioned)?"
    rf"|{_NAME}(?:\s*(?:,|\band\b|&)\s*{_NAME})*)"
    r"\s+(?:(?P<say>says?|said)(?:\s+(?P<word>[\w'’]+))?"
    r"|(?P<answer>answers?|replies|reply|responds?|acknowledges?|confirms?))\b)",
    re.IGNORECASE,
)
_ASKER_EN = {"i"}
_ANYONE_EN = {"someone", "somebody", "anyone", "anybody", "one of us"}
_AND_EN = LazyPattern(r"\s*(?:,|\band\b|&)\s*", re.IGNORECASE)
_EVERYONE_EN = LazyPattern(r"every|all of|(?:we|you|they) all|each of")
# What may follow the clause: the end, punctuation, or the content's lead word.
_AFTER_EN = LazyPattern(r"\s*(?:$|[,.;:!?)\-–—]|(?:to|about|that)\b)", re.IGNORECASE)

_ZH = LazyPattern(
    r"(?:一直)?直到(?P<who>我们?都|我|有人|任何人|随便谁|大家都?|所有人都?|每个人都?"
    r"|@[\w.\-]+(?:\s*[和、,，]\s*@[\w.\-]+)*\s*都?)"
    r"(?:(?P<say>说)(?P<word>好了|完成了?|搞定了?|做完了|收到了?)?"
    r"|(?P<answer>回复|回应|确认)了?)"
    r"(?:为止)?"
)
_AFTER_ZH = LazyPattern(r"\s*(?:$|[，,。.；;！!？?、]|提醒|再)")  # noqa: RUF001
_EVERYONE_ZH = ("我们都", "大家", "所有人", "每个人")

# The words an acknowledgement is made with (replies, buttons): what a rule must say.
_DONE_WORDS_EN = {"done"}
_HOW_EN = "write “until someone says done”, “until I say done” or “until @bob says done”"
_HOW_ZH = "请写“直到我说好了”“直到有人说好了”或“直到大家都说好了”"


def split_until_done(text: str) -> tuple[str, UntilDone | None]:
    """`text` without its until-done clause, and the clause; `(text, None)` when it has
    none. Raises GrammarError for a clause that is not exactly one (see the module)."""
    spans = _quoted(text)
    found = _first(_ZH, text, spans) or _first(_EN, text, spans)
    if found is None:
        return text, None
    chinese = found.re.pattern == _ZH.pattern
    until = _read_zh(found) if chinese else _read_en(found)
    after = (_AFTER_ZH if chinese else _AFTER_EN).match(text, found.end())
    if after is None:
        rest = " ".join(text[found.start() :].split()[:6])
        if chinese:
            raise GrammarError(
                f"“{rest}”是提醒的内容，还是要一直提醒直到有人确认？"
                f"{_HOW_ZH}，放在句末 (is it the reminder's text or a rule?)."
            )
        raise GrammarError(
            f"Is “{rest}” part of the reminder, or should it repeat until someone "
            f"acknowledges? To repeat, {_HOW_EN}, at the end or before “to …”."
        )
    before, after_text = text[: found.start()], text[found.end() :]
    rest = before.rstrip(" ,，") + " " + after_text.lstrip(" ,，.。;；!！")  # noqa: RUF001
    return " ".join(rest.split()).strip(" ,，"), until


def _first(pattern: LazyPattern, text: str, quoted: list[tuple[int, int]]) -> re.Match[str] | None:
    """The first match outside quoted text: quoted words are the content, as written."""
    for found in pattern.finditer(text):
        if not any(start <= found.start() < end for start, end in quoted):
            return found
    return None


_QUOTES = LazyPattern(r"\"[^\"]*\"|“[^”]*”|「[^」]*」|'[^']*'(?!\w)")


def _quoted(text: str) -> list[tuple[int, int]]:
    return [found.span() for found in _QUOTES.finditer(text)]


def _read_en(found: re.Match[str]) -> UntilDone:
    text = found.group()
    if found["bare"]:
        return UntilDone("asker", text=text)
    if found["say"]:
        word = (found["word"] or "").casefold()
        if word not in _DONE_WORDS_EN:
            said = f"“{found['word']}”" if found["word"] else "nothing"
            raise GrammarError(
                f"“{text}”: I stop when someone replies “done” or presses Done, not on "
                f"{said}; {_HOW_EN}."
            )
    who = " ".join(found["who"].casefold().split())
    if who in _ASKER_EN:
        return UntilDone("asker", text=text)
    if who in _ANYONE_EN:
        return UntilDone("anyone", text=text)
    if _EVERYONE_EN.match(who):
        return UntilDone("each", text=text)
    names = _AND_EN.compiled.split(found["who"].strip())
    return UntilDone("each", tuple(name.lstrip("@") for name in names), text)


def _read_zh(found: re.Match[str]) -> UntilDone:
    text = found.group()
    if found["say"] and not found["word"]:
        raise GrammarError(
            f"“{text}”：我只在有人回复“好了”或按“完成”时停止；{_HOW_ZH} "  # noqa: RUF001
            "(I stop when someone says 好了)."
        )
    who = found["who"].strip()
    if who == "我":
        return UntilDone("asker", text=text)
    if who in ("有人", "任何人", "随便谁"):
        return UntilDone("anyone", text=text)
    if who.startswith(_EVERYONE_ZH):
        return UntilDone("each", text=text)
    names = tuple(name.lstrip("@") for name in re.findall(r"@[\w.\-]+", who))
    return UntilDone("each", names, text)


def ack_for(until: UntilDone, names: tuple[str, ...], everyone: bool, me: bool = False) -> AckRule:
    """The rule for a reminder for the people `names` (handles) or `everyone`: "each"
    needs the people listed, and named ones must be exactly the reminder's people (the
    rule is every one of them, so a part of them can't be said)."""
    if until.rule != "each":
        return until.rule
    if everyone or not names:
        raise GrammarError(
            f"“{until.text}”: I can only wait for people the reminder names. Write "
            "“remind @bob and @carol … until everyone says done”, or “until someone says "
            "done”."
        )
    people = {name.casefold() for name in names}
    said = {name.casefold() for name in until.names}
    if said and (said != people or me):
        shown = ", ".join(["you"] * me + [f"@{name}" for name in names])
        raise GrammarError(
            f"“{until.text}” must name everyone the reminder is for ({shown}); or write "
            "“until everyone says done” or “until someone says done”."
        )
    return "each"


_NOT_WITH_DAYS = (
    "an “until done” reminder repeats every few minutes until someone says done, so it "
    "can't go with a daily or weekly rule; write “every 10 minutes until someone says "
    "done”, or one time"
)
_NOT_WITH_DAYS_ZH = (
    "“直到…说好了”是每隔几分钟提醒一次，不能和每天、每周的规则一起用；"  # noqa: RUF001
    "请写“每10分钟…直到我说好了”或一个时间"
)


def check_repeat(
    kind: str, within_day: bool, error: type[ValueError] = ValueError, *, chinese: bool = False
) -> None:
    """An until-done reminder is one time (then every 10 minutes) or a repeat within a
    day: done on Monday would end Tuesday's too. Raises `error` (GrammarError from the
    grammar, ValueError from validation) saying what to write instead."""
    if kind == "once" or within_day:
        return
    english = _NOT_WITH_DAYS[0].upper() + _NOT_WITH_DAYS[1:] + "."
    raise error(f"{_NOT_WITH_DAYS_ZH} ({english})" if chinese else english)
