"""The `/remind` grammar: `[who] <when> <what>` in English or Chinese, exactly or not at all.

`parse_reminder` returns the exact arguments for `reminder_set` or raises `GrammarError`
with what was not understood; it never guesses. The `<when>` part is read first and whole
(a leading one; in English also a trailing one, "call mom tomorrow at 9"), and the rest is
the content.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from groupmate.function_calls.grammar.chinese import ChineseWhenParser
from groupmate.function_calls.grammar.english import WhenParser
from groupmate.function_calls.grammar.english_words import CONTENT_LEADS, TIES, tokenize
from groupmate.function_calls.grammar.limits import check_hours_in_text
from groupmate.function_calls.grammar.spec import (
    DEFAULT_TIME,
    Clock,
    GrammarError,
    ResolvedWhen,
    WhenSpec,
)
from groupmate.function_calls.language import is_chinese

__all__ = [
    "DEFAULT_TIME",
    "AskKind",
    "Clock",
    "GrammarError",
    "ParsedReminder",
    "ParsedRequest",
    "Recipients",
    "ReminderAsk",
    "ResolvedWhen",
    "WhenSpec",
    "about_existing",
    "asked_reminder",
    "classify_ask",
    "means_everyone",
    "named_when",
    "parse_audience",
    "parse_duration",
    "parse_reminder",
    "read_whole",
    "speaks_of_reminders",
    "split_when",
]

_WHO = re.compile(
    r"(?P<who>(?:me|us\s+all|us|everyone|everybody|all\s+of\s+us|you\s+all|y'all|"
    r"the\s+(?:whole\s+)?(?:team|group|chat))\b|@[\w.\-]+|我们|咱们|我|大家|所有人|"
    r"全体成员|全体|各位)"
    r"(?:\s*(?:,|\band\b|&|和|、)\s*|\s*)",
    re.IGNORECASE,
)
# The team is the group: each of these means this chat, not just the sender.
_EVERYONE = {
    "everyone",
    "everybody",
    "us",
    "us all",
    "all of us",
    "you all",
    "y'all",
    "the team",
    "the whole team",
    "the group",
    "the whole group",
    "the chat",
    "the whole chat",
    "@all",
    "@everyone",
    "@here",
    "大家",
    "所有人",
    "全体成员",
    "全体",
    "各位",
    "我们",
    "咱们",
}
# "@team", "@all": what a model (or a user) writes for the group as if it were a name.
_GROUP_HANDLES = {"team", "group", "all", "everyone", "everybody", "here", "channel", "chat",
                  "us", "大家", "所有人", "全体成员", "全体"}  # fmt: skip


def means_everyone(entry: str) -> bool:
    """Whether a `who` entry names the whole chat: "everyone", "the team", "@team",
    "@all", "大家"."""
    word = " ".join(entry.casefold().split())
    return word in _EVERYONE or (word.startswith("@") and word[1:] in _GROUP_HANDLES)


_QUOTES = {'"': '"', "“": "”", "'": "'", "「": "」"}


@dataclass(frozen=True, slots=True)
class Recipients:
    """Who the reminder is for: the sender ("me"), named members, or everyone."""

    me: bool = False
    names: tuple[str, ...] = ()
    everyone: bool = False

    def who(self) -> list[str]:
        """`ReminderArgs.who`: "me", "@name" and "everyone" entries."""
        entries = ["me"] if self.me or not (self.names or self.everyone) else []
        entries += [f"@{name}" for name in self.names]
        if self.everyone:
            entries.append("everyone")
        return entries


@dataclass(frozen=True, slots=True)
class ParsedReminder:
    when: ResolvedWhen
    content: str
    audience: Recipients
    spec: WhenSpec  # what the words said, before resolving

    def arguments(self) -> dict[str, Any]:
        raw = self.when.arguments()
        raw["content"] = self.content
        who = self.audience.who()
        if who != ["me"]:
            raw["who"] = who
        return raw


def parse_audience(text: str) -> tuple[Recipients, int]:
    """Leading "me", "us", "@bob", "everyone" (and 我/大家); where the rest starts."""
    me = everyone = False
    names: list[str] = []
    position = 0
    while True:
        found = _WHO.match(text, position)
        if found is None:
            break
        who = " ".join(found["who"].lower().split())
        if who in _EVERYONE:
            everyone = True
        elif who.startswith("@"):
            names.append(found["who"][1:])
        else:
            me = True
        position = found.end()
    return Recipients(me=me, names=tuple(dict.fromkeys(names)), everyone=everyone), position


def split_when(text: str, start: int = 0) -> tuple[WhenSpec, str]:
    """The `<when>` clauses of `text[start:]` and the content; an empty spec if none."""
    if is_chinese(text[start:]):
        chinese = ChineseWhenParser(text, start)
        if chinese.parse() > start:
            chinese.check_boundary()
            chinese.take_trailing_limits()
            check_hours_in_text(chinese.spec, chinese.content())
            return chinese.spec, chinese.content()
    tokens = tokenize(text)
    first = next((n for n, token in enumerate(tokens) if token.start >= start), len(tokens))
    leading = WhenParser(text, tokens, first)
    end = leading.parse()
    if not leading.spec.empty:
        leading.check_boundary()
        rest_at = tokens[end].start if end < len(tokens) else len(text)
        cut = leading.trailing_limit(end) if leading.spec.repeat is not None else None
        check_hours_in_text(leading.spec, text[rest_at:cut])
        return leading.spec, _content(text[rest_at:cut])
    # No leading when: a trailing one, "call mom tomorrow at 9".
    for index in range(first + 1, len(tokens)):
        if tokens[index - 1].text in TIES:
            continue
        trailing = WhenParser(text, tokens, index)
        try:
            end = trailing.parse()
        except GrammarError:
            continue
        finished = all(token.text in (".", "!") for token in tokens[end:])
        # A limit alone at the end is no time: "wait until 5pm", "stretch 3 times".
        timed = not trailing.spec.empty and not _only_limits(trailing.spec)
        if timed and finished:
            return trailing.spec, _content(text[tokens[first].start : tokens[index].start])
    return WhenSpec(), _content(text[start:])


def _only_limits(spec: WhenSpec) -> bool:
    said = spec.day or spec.clock or spec.part or spec.repeat or spec.delay
    return spec.limited and not said


def _content(text: str) -> str:
    content = CONTENT_LEADS.sub("", text.strip()).strip()
    if len(content) >= 2 and _QUOTES.get(content[0]) == content[-1]:
        content = content[1:-1].strip()
    return content


def parse_reminder(text: str, now: datetime) -> ParsedReminder:
    """`[who] <when> <what>` at `now` (aware, in the chat's zone)."""
    audience, start = parse_audience(text.strip())
    spec, content = split_when(text.strip(), start)
    if spec.empty:
        raise GrammarError("I couldn't find when.")
    when = spec.resolve(now)
    if not content:
        raise GrammarError("What should I remind you of?")
    return ParsedReminder(when=when, content=content, audience=audience, spec=spec)


def parse_duration(text: str) -> int | None:
    """Minutes in "10m", "1h", "90 minutes", "an hour", "半小时", "10分钟"; None if not one."""
    text = text.strip()
    if is_chinese(text):
        chinese = ChineseWhenParser(text + ("" if text.endswith("后") else "后"))
        if chinese.parse() and chinese.spec.delay is not None and not chinese.content():
            delay = chinese.spec.delay
            return delay.minutes + delay.days * 1440
        return None
    tokens = tokenize(text)
    parser = WhenParser(text, tokens, 1 if tokens and tokens[0].text in ("in", "for") else 0)
    minutes, days = parser.amounts()
    if minutes is None or parser.i != len(tokens):
        return None
    return minutes + days * 1440


# "把提醒1改到早上8点": in Chinese the new time follows the verb of change.
_CHANGE_ZH = re.compile(r"改到|改成|改为|推迟到|延后到|挪到|移到|调到|换到|提前到")


def named_when(text: str) -> WhenSpec:
    """The time an edit message names ("move #1 to 10am", "change #2 to friday at 5pm",
    "把提醒1改到早上8点"); an empty spec when it names none. Raises GrammarError for a
    time that must be asked about."""
    found = _CHANGE_ZH.search(text)
    if found is not None:
        return split_when(text, found.end())[0]
    return split_when(text.strip())[0]


# A snooze or an existing reminder, not a new one: "remind me again", "reminder #3".
_NOT_NEW = re.compile(r"\bagain\b|再|\breminders?\s*#?\d|#\d", re.IGNORECASE)


def about_existing(text: str) -> bool:
    """Whether a message speaks of a reminder that exists ("remind me again in an hour",
    "move reminder 3", "#2"), so it asks for no new one."""
    return _NOT_NEW.search(text) is not None


def asked_reminder(text: str, now: datetime) -> ParsedReminder | None:
    """The reminder a chat message asks for ("remind us tomorrow at 9 to call the
    dentist", "at 6pm remind me to call mom", "10分钟后提醒我喝水"), its first request read
    exactly; None when it asks for none (a negation, a question, reported speech) or names
    no time. Raises GrammarError when it names a time that must be asked about."""
    if about_existing(text):
        return None
    ask = classify_ask(text)
    if ask.kind != "request":
        return None
    audience, start = parse_audience(ask.phrase)
    spec, content = split_when(ask.phrase, start)
    if spec.empty or not content:
        return None
    return ParsedReminder(when=spec.resolve(now), content=content, audience=audience, spec=spec)


# Last: the request reader calls back into the functions above.
from groupmate.function_calls.grammar.request import (  # noqa: E402
    AskKind,
    ParsedRequest,
    ReminderAsk,
    classify_ask,
    read_whole,
    speaks_of_reminders,
)
