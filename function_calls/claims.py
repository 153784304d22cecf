"""Whether an answer reads as "it is done": the words a user takes for a claim that
something was set, changed or cancelled. The one vocabulary for the two guards that keep
a claim without a deed from the user: the turn's (`FunctionCallLLM`: every write it
tried failed) and the offers' (`bot.offers`: a reminder was asked for and not set).
"""

from __future__ import annotations

import re

__all__ = ["CLAIM", "asks_back", "owns_up", "sounds_done"]

# A bare acknowledgement: to a user who asked for something, it says "done".
_ACK = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|done|sure(?: thing)?|got it|will do|alright|all right|noted|"
    r"no problem|of course|certainly|understood|yes|yep|yeah|on it|consider it done|"
    r"i will do that|i'll do that|👍|✅|好的?|没问题|收到|可以|行|明白了?|知道了|嗯|已完成|"
    r"完成了?)\s*[.!,，。！~～]*\s*)+$",  # noqa: RUF001
    re.IGNORECASE,
)
# Said to a message about reminders, these read as "it is done" (see sounds_done).
_SOUNDS_DONE = re.compile(
    r"^\s*(?:ok(?:ay)?|sure|done|got it|alright|all right|will do|noted|of course|yes|yep)\b|"
    r"\ball set\b|\bit'?s set\b|\bset for\b|\bwill remind\b|\bi'?ll remind\b|"
    r"\bwon'?t remind\b|\bremind you\b|\byou'?ll be reminded\b|\bit is\b.*!$|"
    r"[👍👌✅✔]|^\s*(?:好的?|没问题|收到|可以|行|嗯|明白)|到时候|叫你|会提醒|不会再提醒|已经?(?:设|定|取消|删)",
    re.IGNORECASE,
)
# A reply that says a reminder was set, changed, snoozed or cancelled.
CLAIM = re.compile(
    r"⏰|💤|\breminders?\b[^.!?\n]{0,40}\b(?:is |has been |was )?(?:set|created|scheduled|"
    r"snoozed|updated|moved|changed|rescheduled|cancell?ed|deleted|removed|paused|resumed)\b|"
    r"\bi(?:'ll| will| have|'ve) (?:remind|set|snoozed|moved|updated|changed|rescheduled|"
    r"cancell?ed|deleted|removed)\b|\bsnoozed\b|"
    r"(?:已|已经)(?:设置|设定|设好|创建|推迟|修改|更改|改到|删除|取消|暂停)|会提醒|稍后提醒你",
    re.IGNORECASE,
)
# An answer that says it did not happen ("I couldn't set that: what time?").
_NOT_DONE = re.compile(
    r"\b(?:couldn'?t|could not|can'?t|cannot|unable|didn'?t|did not|wasn'?t|was not|"
    r"haven'?t|have not|failed|timed out|went wrong|sorry)\b|"
    r"\bnot (?:been )?(?:set|created|saved|changed|scheduled)\b|\bnothing (?:was|is|has been)\b|"
    r"没能|没有(?:设|改|创建|保存)|无法|不能|未能|失败|超时|抱歉|对不起",
    re.IGNORECASE,
)


def asks_back(answer: str) -> bool:
    """The model asks the user something ("What time?"): no claim, and worth passing on."""
    return (
        bool(answer.strip()) and answer.rstrip().endswith(("?", "？")) and not CLAIM.search(answer)
    )


def sounds_done(answer: str) -> bool:
    """To a message about reminders, an answer that a user reads as "done": a bare "OK",
    "All set!", "Will remind you at 5.", "好的，明天9点。" (unless it asks back)."""
    if asks_back(answer):
        return False
    return bool(_ACK.match(answer) or CLAIM.search(answer) or _SOUNDS_DONE.search(answer))


def owns_up(answer: str) -> bool:
    """An answer that cannot be read as success: a question back, or one that says it
    did not happen and claims nothing. Anything else ("Done.", "I'll nudge you daily.")
    may be read as done, whatever its words: after writes that all failed it is not
    passed on."""
    if asks_back(answer):
        return True
    return bool(_NOT_DONE.search(answer)) and not sounds_done(answer)
