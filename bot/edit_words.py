"""What `/edit <id> <words>` asks to change: a new time or rule, new text, or both.

An edit changes only what its words name (see `phrase_rule`: a new rule without a time
keeps the reminder's time; a new time keeps its rule), and the text only when text is
given. Words that could be either are not guessed at: in "daily standup" the "daily" may
be the new repeat or part of the new text. The user is asked, with both readings as
commands to send, and nothing changes. Quotes mark the text exactly: `/edit 2 daily
"standup"` is the new rule and the new text, `/edit 2 "daily standup"` the text alone.
"""

from __future__ import annotations

import re
from typing import Any

from groupmate.function_calls.grammar import GrammarError, split_when
from groupmate.function_calls.language import is_chinese
from groupmate.storage.exceptions import GroupmateError

__all__ = ["AmbiguousEdit", "edit_arguments"]

# Text in quotes: ASCII double quotes, Chinese ones, or corner brackets. Not the single
# quote, which is an apostrophe in "mom's birthday".
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|「([^」]+)」")


# "/edit 3 no limit": the limit goes, the rule stays.
_NO_LIMIT = re.compile(
    r"(?:no|without|remove(?: the)?|drop(?: the)?) (?:limit|end|count)|forever|"
    r"不限次数|不限|取消限制|去掉限制|一直提醒",
    re.IGNORECASE,
)


class AmbiguousEdit(GroupmateError, ValueError):
    """The words may name a new time or rule, or be part of the new text; `question`
    asks which, in the user's language."""

    def __init__(self, question: str) -> None:
        super().__init__(question)
        self.question = question


def edit_arguments(reference: str, change: str) -> dict[str, Any]:
    """reminder_update's raw arguments for `/edit <reference> <change>`. Raises
    GrammarError for time words it can't read, AmbiguousEdit for words that may be
    either the time or the text."""
    raw: dict[str, Any] = {"reminder_id": reference}
    if _NO_LIMIT.fullmatch(change.strip()):
        return raw | {"no_limit": True}
    quoted = _QUOTED.search(change)
    if quoted is not None:
        # The quoted words are the text, whatever they say; the rest names the time.
        text = next(group for group in quoted.groups() if group is not None).strip()
        when = (change[: quoted.start()] + " " + change[quoted.end() :]).strip()
        if when:
            spec, rest = split_when(when)
            if spec.empty or rest:
                raise GrammarError(
                    f"I couldn't read “{when}” as a time; put all of the text in the quotes."
                )
            raw["when"] = when
        if text:
            raw["content"] = text
        return raw
    spec, content = split_when(change)
    if spec.empty:
        raw["content"] = content
        return raw
    when = _when_words(change, content)
    if content and spec.clock is None and spec.delay is None:
        raise AmbiguousEdit(_question(reference, when, content, change))
    raw["when"] = when
    if content:
        raw["content"] = content
    return raw


def _question(reference: str, when: str, content: str, change: str) -> str:
    """Both readings of "daily standup", as exact commands."""
    if is_chinese(change):
        return (
            f"“{when}”是新的时间或重复规则，还是新内容的一部分？这次什么都没有改动。"
            f"请发送其中一条：\n/edit {reference} {when} “{content}”（改为“{when}”，"
            f"未说的时间不变；内容改为“{content}”）\n"  # noqa: RUF001
            f"/edit {reference} “{change}”（只把内容改为“{change}”，时间不变）"
        )
    return (
        f"Is “{when}” the new time or repeat, or part of the new text? Nothing was changed. "
        f'Send one of:\n/edit {reference} {when} "{content}" ({when}, keeping the time of '
        f'day; text “{content}”)\n/edit {reference} "{change}" (text “{change}”; time '
        "unchanged)"
    )


def _when_words(change: str, content: str) -> str:
    """The words of `change` that name the time: all of it but the content, which the
    grammar found before or after them."""
    if content and change.endswith(content):
        return change[: -len(content)].strip()
    if content and change.startswith(content):
        return change[len(content) :].strip()
    return change
