"""Reading a chat message as a request for a new reminder, before any model sees it.

`classify_ask` tells a request ("remind us every monday at 9 to …", "at 6pm remind me
to …", "明天上午9点提醒我开会") from talk about reminders that asks for none: a negation
("don't remind me …"), a question ("did you remind …?"), reported speech ("she reminded
me …"), "remind me how …". `read_whole` is the fast path: the reminder a message asks
for when the grammar accounts for every word of it (who, when and what, nothing quoted,
no second request); anything less is None and goes to the model. A wrong fast path is a
reminder nobody asked for, set without a question, so every doubt declines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

import groupmate.function_calls.grammar as grammar  # the package imports this module last
from groupmate.function_calls.grammar.chinese import ChineseWhenParser
from groupmate.function_calls.grammar.english import WhenParser
from groupmate.function_calls.grammar.english_words import tokenize
from groupmate.function_calls.language import is_chinese
from groupmate.function_calls.lazy_re import LazyPattern

AskKind = Literal["request", "not_a_request", "unclear", "none"]
"""request: asks for a new reminder in a form read here; not_a_request: speaks of
reminders but asks for none (negation, question, report, "remind me how"); unclear:
speaks of reminders in a form not read here; none: not about reminders."""


@dataclass(frozen=True, slots=True)
class ReminderAsk:
    kind: AskKind
    # `[who] <when> <what>` for the grammar, the first request only; "" unless a request.
    phrase: str = ""
    # The message is this one request and nothing else: no second request, no quotes.
    whole: bool = False


_SPEAKS = LazyPattern(r"\bremind|\breminders?\b|\balarm|提醒|闹钟", re.IGNORECASE)

# --- English -------------------------------------------------------------------------
_VERB_EN = LazyPattern(
    r"\b(?:remind|set\s+(?:me\s+|us\s+)?(?:up\s+)?(?:a|an)\s+reminder|"
    r"create\s+(?:a|an)\s+reminder|add\s+(?:a|an)\s+reminder)\b",
    re.IGNORECASE,
)
# What may stand before the verb of a request: a greeting and a polite form.
_POLITE_EN = LazyPattern(
    r"(?:(?:hey|hi|hello|yo|ok|okay)\b[\s,!]*)?"
    r"(?:please\s+|pls\s+|plz\s+|kindly\s+)?"
    r"(?:(?:can|could|would|will)\s+(?:you|u)\s+|i\s+(?:need|want|would\s+like|'d\s+like)\s+"
    r"you\s+to\s+|(?:don't|do\s+not)\s+forget\s+to\s+)?"
    r"(?:please\s+|pls\s+|kindly\s+)?",
    re.IGNORECASE,
)
_POLITE_WORDS_EN = LazyPattern(r"\b(?:please|pls|plz|kindly)\b", re.IGNORECASE)
# "… , thanks!": a courtesy at the end is not part of what to remind of.
_COURTESY_EN = LazyPattern(
    r"(?:[\s,]*\b(?:thanks|thank\s+you|thx|ty|please|pls|plz)\b[\s!.]*|[\s!.]+)+$",
    re.IGNORECASE,
)
_ASKS_BACK_EN = LazyPattern(r"^(?:can|could|would|will)\s+(?:you|u)\b", re.IGNORECASE)
_NEGATION_EN = LazyPattern(
    r"\b(?:don'?t|do\s+not|doesn'?t|didn'?t|never|no|not|nothing|stop|stopped|quit|"
    r"no\s+longer|anymore|any\s+more|cancel|won'?t|shouldn'?t|can'?t|cannot|without|"
    r"instead|neither|nor)\b|n't\b",
    re.IGNORECASE,
)
_QUESTION_LEAD_EN = LazyPattern(
    r"^(?:did|do|does|have|has|had|was|were|is|are|what|when|why|how|who|whom|whose|"
    r"which|where|whether|if|shall|should|may|might)\b",
    re.IGNORECASE,
)
# "remind me how to …", "remind me what …": asks to be told something now.
_TELL_ME_EN = LazyPattern(
    r"^(?:how|what|who|whom|whose|where|when|why|whether|if|which|of)\b", re.IGNORECASE
)
_REPORTED_EN = LazyPattern(r"\b(?:reminded|reminds|reminding)\b", re.IGNORECASE)
_CONDITION_EN = LazyPattern(
    r"\b(?:if|unless|in\s+case|whenever|as\s+soon\s+as|once|maybe|perhaps|probably|"
    r"should|might|would|could|must)\b",
    re.IGNORECASE,
)
# The start of a second request: "… and also search for …", "…; what's the weather".
_SECOND_EN = LazyPattern(
    r"\s*(?:[;&]|\s[-–—]+\s|(?<![ap]\.m)(?<!\b[ap]m)[.!?](?=\s+[^\W\d_])|\band\s+(?:also|then)\b|\balso\b|\bthen\b|"
    r"(?:,|\band\b)\s*(?:please\s+)?(?:search|look\s+up|find|google|tell|show|list|cancel|"
    r"delete|remove|summari[sz]e|translate|check|read|send\s+me|give\s+me|what|how|who|"
    r"where|why|when|can\s+you|could\s+you|would\s+you|will\s+you)\b)",
    re.IGNORECASE,
)
_DEICTIC_EN = LazyPattern(
    r"^(?:(?:do|check|handle|remember|see|about|of|on)\s+)?"
    r"(?:it|this|that|these|those|them|this\s+one|that\s+one|so|then|again|stuff|things?)$",
    re.IGNORECASE,
)
# Words of time that must not be left in the content: a second time, or one not read.
_TIME_LEFT_EN = LazyPattern(
    r"\b(?:today|tonight|tomorrow|tmrw|tmr|yesterday|noon|midnight|morning|afternoon|"
    r"evening|night|weekend|later|soon|asap|(?:next|this|last|every|each|per|a|an|one|\d+)\s+"
    r"(?:weeks?|months?|years?|hours?|minutes?|mins?|days?)|"
    r"o'?clock|am|pm|everyday|every|each|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thur|thurs|fri|"
    r"sat|sun)\b|\d\s*(?:h|m|d|w|hrs?|mins?|am|pm|a\.m|p\.m)\b|\d[:.]\d{2}|"
    r"\b(?:at|by|before|after|until|till|around|from|or)\s+\d|"
    # "the weekly report" is a thing; "… pills daily" at the end is a rule.
    r"\b(?:daily|weekly|monthly)\b(?!\s+[^\W\d_])|"
    # Times the grammar does not read, and ends of a rule: "the day before the exam",
    # "after lunch", "at the end of the day", "for two weeks", "until the 15th".
    r"\b(?:before|after|ahead|until|till|through|thru|during|since|end\s+of|fortnight|"
    r"days|weeks|months|years|hours|minutes|seconds)\b|"
    r"\b(?:at|by|around)\s+(?:lunch|lunchtime|dinner|breakfast|noon)\b|"
    r"\b(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple|next|this|"
    r"last|every|each|per|\d+)\s+(?:day|week|month|year|hour|minute)\b|"
    r"\b(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\s+week\b",
    re.IGNORECASE,
)
# Content that starts or ends where a time phrase was cut: "or two to …", "… on".
_DANGLING_EN = LazyPattern(
    r"^(?:or|and|at|on|in|by|for|from|after|before|until|till|with|around|then|week|"
    r"except|but|lead|leads)\b|"
    r"\b(?:on|at|in|by|for|from|around|the)$",
    re.IGNORECASE,
)

# --- Chinese -------------------------------------------------------------------------
_POLITE_ZH = LazyPattern(r"(?:请你?|麻烦你?|劳驾|你|记得|帮我|帮忙|给我)*")
_AFTER_VERB_ZH = LazyPattern(r"(?:一下|一声)")
_COURTESY_ZH = LazyPattern(r"(?:[，,\s]*(?:谢谢你?|多谢|谢了|辛苦了?)|[吧哦啊呀哈。！!～~\s])+$")  # noqa: RUF001
_NEGATION_ZH = LazyPattern(r"不|别|没|无需|勿|甭|停止|取消|免了|算了")
_QUESTION_ZH = LazyPattern(r"[?？吗呢]|什么|怎么|为什么|为何|谁|哪|几点|多久|是否|有没有|是不是")
_REPORTED_ZH = LazyPattern(r"提醒(?:了|过|的|着)|被提醒|有提醒|提醒是")
_CONDITION_ZH = LazyPattern(r"如果|要是|假如|假设|的话|万一|也许|可能|或许|大概|等到|之前|以前")
_SECOND_ZH = LazyPattern(
    r"[；;。！!?？]\s*\S|[，,、]\s*(?:查|搜|帮|告诉|总结|翻译|列|删)|另外|还有|顺便|然后|并且|同时|以及|再帮|也帮|帮我|搜索|搜一下|"  # noqa: RUF001
    r"查一下|查查|总结|翻译|告诉我|列出|删除"
)
_TELL_ME_ZH = LazyPattern(r"^(?:怎么|怎样|如何|什么|谁|哪|为什么|是否|有没有)")
_DEICTIC_ZH = LazyPattern(r"^(?:这个|那个|这件事|那件事|它|这|那|一下|这事|那事)$")
_TIME_LEFT_ZH = LazyPattern(
    r"\d+\s*(?:点|时|分|号|日|月)|[零一二两三四五六七八九十]+(?:点|时|分钟|号)|"
    r"今天|明天|后天|大后天|昨天|今晚|明早|明晚|早上|上午|中午|下午|晚上|凌晨|傍晚|"
    r"周[一二三四五六日天末]|星期|礼拜|每天|每周|每月|每年|小时|分钟|半天|以后|之后|前|后|"
    r"下班|上班|放学|连续|一直|直到|截止|为止|月底|月初|年底|"
    r"^[号日]"
)

# --- both ----------------------------------------------------------------------------
# Quoted, forwarded or multi-line text is someone else's words, not this request.
_QUOTED = LazyPattern(
    r"[\"“”„«»「」『』`\n]|(?<![^\W\d_])['‘’]|['‘’](?![^\W\d_])|^\s*>|"  # noqa: RUF001
    r"\bforwarded\b|\bfwd\b|转发|引用",
    re.IGNORECASE,
)
_MAX_CONTENT = 150
# "on 20.12" is a date to a German and 20:12 to the grammar: never read on the fast path.
_DOTTED_CLOCK = LazyPattern(r"(?<![\d.])\d{1,2}\.\d{2}(?![\d.])")
# "3点2楼", "9点10个人": the minutes or the content? Only "9点10分" says.
_CLOCK_THEN_NUMBER_ZH = LazyPattern(
    r"[点时][:：]?(?:\d+|[零〇一二两三四五六七八九十]+)(?![\d零〇一二两三四五六七八九十]*分)"
)


def speaks_of_reminders(text: str) -> bool:
    """Whether a message talks about reminders at all ("remind", "reminder", 提醒)."""
    return _SPEAKS.search(text) is not None


def classify_ask(text: str) -> ReminderAsk:
    """Whether `text` asks for a new reminder, and in what words (see AskKind)."""
    text = text.strip()
    if not speaks_of_reminders(text):
        return ReminderAsk("none")
    if is_chinese(text) and "提醒" in text:
        return _classify_chinese(text)
    return _classify_english(text)


def _classify_english(text: str) -> ReminderAsk:
    verbs = list(_VERB_EN.finditer(text))
    if not verbs:
        return ReminderAsk("not_a_request" if _REPORTED_EN.search(text) else "unclear")
    verb = verbs[0]
    before, after = text[: verb.start()], text[verb.end() :]
    polite = _POLITE_EN.match(before)
    assert polite is not None  # every part of it is optional
    lead = _POLITE_WORDS_EN.sub("", before[polite.end() :]).strip(" ,")
    if (
        _NEGATION_EN.search(before)
        and not re.search(r"(?:don't|do\s+not)\s+forget\s+to\s*$", before, re.IGNORECASE)
    ) or _QUESTION_LEAD_EN.match(before.strip()):
        return ReminderAsk("not_a_request")
    if lead and not _is_when_en(lead):
        # "she will remind me …", "guys, remind …": not an order to the bot alone.
        return ReminderAsk("not_a_request")
    if re.search(r"\b(?:anymore|any\s+more|no\s+longer)\b", after, re.IGNORECASE):
        return ReminderAsk("not_a_request")  # "remind me every day … anymore"
    rest = _after_verb_en(verb.group(), after)
    if _TELL_ME_EN.match(rest[_who_end(rest) :].lstrip()):
        return ReminderAsk("not_a_request")
    if not _has_who_en(verb.group(), rest):
        return ReminderAsk("unclear")
    first, second = _cut(rest, _SECOND_EN)
    first = _COURTESY_EN.sub("", first).rstrip(" ?!.")
    who = first[: _who_end(first)].strip() or "me"
    phrase = f"{who} {lead} {first[_who_end(first) :]}".strip()
    whole = (
        not second
        and len(verbs) == 1
        and not _QUOTED.search(text)
        and _questions_ok_en(text, before)
        and not _NEGATION_EN.search(text)
        and not _CONDITION_EN.search(after)
        and _REPORTED_EN.search(text) is None
        and _who_is_whole(rest, chinese=False)
        and not _DOTTED_CLOCK.search(text)
    )
    return ReminderAsk("request", phrase, whole)


def _classify_chinese(text: str) -> ReminderAsk:
    start = text.index("提醒")
    before, after = text[:start], text[start + 2 :]
    if _REPORTED_ZH.search(text) or _NEGATION_ZH.search(before):
        return ReminderAsk("not_a_request")
    if _QUESTION_ZH.search(text) and not re.search(r"(?:可以|能|能不能|可不可以).*吗[?？]?$", text):
        return ReminderAsk("not_a_request")
    polite = _POLITE_ZH.match(before)
    assert polite is not None
    lead = before[polite.end() :].strip(" ，,")
    lead = _POLITE_ZH.sub("", lead) if lead else lead
    if lead and not _is_when_zh(lead):
        return ReminderAsk("not_a_request")  # "她昨天提醒我…", "老板说提醒…"
    rest = after
    helper = _AFTER_VERB_ZH.match(rest)
    if helper is not None:
        rest = rest[helper.end() :]
    _, who_end = grammar.parse_audience(rest)
    if rest.startswith("一下", who_end):  # "提醒我一下…"
        rest = rest[:who_end] + rest[who_end + 2 :]
    if _TELL_ME_ZH.match(rest[who_end:]):
        return ReminderAsk("not_a_request")
    if who_end == 0:
        return ReminderAsk("unclear")  # "提醒张三…": a name the grammar can't vouch for
    first, second = _cut(rest, _SECOND_ZH)
    first = _COURTESY_ZH.sub("", first)
    phrase = f"{first[:who_end]}{lead} {first[who_end:]}".strip()
    whole = (
        not second
        and text.count("提醒") == 1
        and not _QUOTED.search(text)
        and not _QUESTION_ZH.search(text)
        and not _NEGATION_ZH.search(text)
        and not _CONDITION_ZH.search(text)
        and _who_is_whole(rest, chinese=True)
        and not _DOTTED_CLOCK.search(text)
        and not _CLOCK_THEN_NUMBER_ZH.search(text)
    )
    return ReminderAsk("request", phrase, whole)


def _cut(text: str, second: LazyPattern) -> tuple[str, str]:
    """The first request and what follows it ("" when there is no second one)."""
    found = second.search(text)
    if found is None:
        return text, ""
    return text[: found.start()], text[found.start() :].strip()


def _after_verb_en(verb: str, after: str) -> str:
    """What follows "remind"; after "set a reminder", its "for me"/"for 5pm" lead-in
    (not "for bob": a name the grammar can't vouch for stays, and declines)."""
    rest = after.strip()
    if verb.lower().startswith("remind") or not rest.lower().startswith("for "):
        return rest
    if grammar.parse_audience(rest[4:])[1] or _starts_with_when(rest[4:]):
        return rest[4:]
    return rest


def _starts_with_when(text: str) -> bool:
    """Whether `text` opens with a when ("7am tomorrow: gym"); a time the grammar must
    ask about counts (its question comes on the model's path)."""
    leading = WhenParser(text, tokenize(text), 0)
    try:
        leading.parse()
    except grammar.GrammarError:
        return True
    return not leading.spec.empty


def _who_end(rest: str) -> int:
    """Where the who of "remind me/us/@bob/the team …" ends (0: none named)."""
    return grammar.parse_audience(rest)[1]


def _has_who_en(verb: str, rest: str) -> bool:
    """ "remind me/us/@bob/the team …"; "set a reminder …" is the sender's own. "remind
    bob …" names nobody the grammar knows, and would turn bob into the content."""
    return _who_end(rest) > 0 or not verb.lower().startswith("remind")


def _who_is_whole(rest: str, chinese: bool) -> bool:
    """The who ends where the when or the content starts: not "me and bob", "the team
    lead", "everyone except bob", "我和张三", "我妈"."""
    end = _who_end(rest)
    if end == 0:
        return True
    if _JOINER_END.search(rest[:end]):
        return False  # "me and bob …": bob is no one the grammar knows
    after = rest[end:].lstrip()
    if chinese:
        return not _PERSON_ZH.match(after)
    return bool(_CONTENT_START_EN.match(after)) or _starts_with_when(after)


_JOINER_END = LazyPattern(r"(?:,|\band|&|和|、)\s*$", re.IGNORECASE)
_CONTENT_START_EN = LazyPattern(r"^(?:to|about|that)\b", re.IGNORECASE)
# Content that starts with a person: "提醒我妈吃药" (my mom), "提醒我们老板签字".
_PERSON_ZH = LazyPattern(
    r"^(?:妈|爸|老板|老婆|老公|女朋友|男朋友|对象|儿子|女儿|孩子|同事|领导|经理|哥|姐|弟|妹|爷|奶|"
    r"外公|外婆|家人|朋友|老师|同学|室友|邻居|客户|张|王|李|刘|陈|杨|赵|黄|吴)"
)


def _questions_ok_en(text: str, before: str) -> bool:
    """No question mark, or only the closing one of "can you remind me …?"."""
    marks = text.count("?")
    if marks == 0:
        return True
    return marks == 1 and text.rstrip().endswith("?") and bool(_ASKS_BACK_EN.search(before))


def _is_when_en(lead: str) -> bool:
    try:
        spec, content = grammar.split_when(lead.rstrip(" ,"))
    except grammar.GrammarError:
        return True  # time words the grammar will ask about: still a request
    return not spec.empty and not content.strip(" ,")


def _is_when_zh(lead: str) -> bool:
    parser = ChineseWhenParser(lead)
    try:
        end = parser.parse()
    except grammar.GrammarError:
        return True
    return not parser.spec.empty and not lead[end:].strip(" ，,")


def content_is_whole(content: str, chinese: bool) -> bool:
    """The content of a fast-path reminder names a thing to do and nothing more: not
    "this", no time left in it, not a question, not too long."""
    content = content.strip(" .!。！")  # noqa: RUF001
    if not content or len(content) > _MAX_CONTENT:
        return False
    if chinese:
        return not (
            _DEICTIC_ZH.match(content)
            or _TIME_LEFT_ZH.search(content)
            or _TELL_ME_ZH.match(content)
            or (not is_chinese(content) and len(content) < 2)
        )
    return (
        len(content) >= 2
        and not _DEICTIC_EN.match(content)
        and not _TIME_LEFT_EN.search(content)
        and not _DANGLING_EN.search(content)
        and not _TELL_ME_EN.match(content)
        and not content.endswith("?")
    )


def read_whole(text: str, now: datetime) -> ParsedRequest | None:
    """The reminder `text` asks for when the grammar reads all of it, else None."""
    ask = classify_ask(text)
    if ask.kind != "request" or not ask.whole or grammar.about_existing(text):
        return None
    try:
        parsed = grammar.parse_reminder(ask.phrase, now)
    except grammar.GrammarError:
        return None  # asked back by the model, or offered: never set without a word
    if not content_is_whole(parsed.content, bool(is_chinese(text))):
        return None
    if parsed.when.time is not None and parsed.when.type == "once":
        # "today at 7am" at 10:20: refused with its reason on the model's path.
        at = datetime.strptime(parsed.when.time, "%Y-%m-%d %H:%M").replace(tzinfo=now.tzinfo)
        if at <= now:
            return None
    return ParsedRequest(parsed.arguments(), parsed.when.default_time)


@dataclass(frozen=True, slots=True)
class ParsedRequest:
    """A fast-path reminder: reminder_set's raw arguments as the grammar read them."""

    arguments: dict[str, object]
    default_time: bool  # no time of day was said: 09:00, and the reply says so
