"""An “until done” reminder's rule in words: who must say done, and its cap with the last
time (' until someone says done (at most 12 times: the last on Wed 25 Nov at 22:50)')."""

from __future__ import annotations

from datetime import datetime, timedelta

from groupmate.function_calls.handlers.repeat_words import last_words
from groupmate.storage.recurrence import Schedule
from groupmate.storage.vocabulary import AckRule

_TICK = timedelta(microseconds=1)


def times_from(schedule: Schedule, start: datetime) -> int:
    """How many times a limited `schedule` fires from `start` on (its last included);
    the cap bounds the count, so this reads at most that many occurrences."""
    last = schedule.last()
    if last is None:
        return 0
    return sum(1 for _ in schedule.occurrences(start - _TICK, last))


def until_done_words(
    schedule: Schedule, start: datetime, ack: AckRule, asker: str, *, chinese: bool
) -> str:
    """What follows the rule, from `start` (its next time) on: ' until someone says done
    (at most 12 times: the last on Wed 25 Nov at 22:50)'; in Chinese '，直到有人说好了（最多
    12次，最后一次：…）'."""
    count, last = times_from(schedule, start), last_words(schedule, chinese=chinese)
    if chinese:
        who = {"anyone": "有人", "each": "被提醒的每个人都"}.get(ack, asker or "设置提醒的人")
        end = f"，最后一次：{last}" if last else ""
        return f"，直到{who}说好了（最多{count}次{end}）"
    who = {"anyone": "someone", "each": "everyone named"}.get(ack, asker or "the asker")
    end = f": the last on {last}" if last else ""
    return f" until {who} says done (at most {count} times{end})"
