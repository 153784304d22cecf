"""What a user is told when a model's turn goes wrong (or the database is down), and
the one guard that keeps groupmate's internal text from them.

Tool names, argument paths, `(arguments)`, tool-call syntax, repair reports, validation
wording and Python reprs are for the model and the logs. A small model echoes them: it
answered a refused call with the refusal's JSON, or wrote a call the parser could not
read as its "answer". `internal_marker` finds such text by one vocabulary of markers
(`INTERNAL_MARKERS`, plus the registered tool names and their argument objects), and the
loop sends a `PlainSentence` in its place.

The markers are specific on purpose: a search answer with braces in code, or the word
"set", is an answer. A tool's name counts only as a whole identifier with an underscore
(`reminder_set`): "help" or "summary" are words.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from groupmate.function_calls.errors import (
    ToolHiddenError,
    ToolInvocationError,
    ToolRateLimitedError,
    ToolSwitchedOffError,
)
from groupmate.function_calls.language import PlainSentence as PlainSentence  # re-exported

__all__ = [
    "COULD_NOT_DO",
    "INTERNAL_MARKERS",
    "NOT_AVAILABLE",
    "NO_ANSWER",
    "STORAGE_DOWN",
    "SWITCHED_OFF",
    "UNFINISHED",
    "Marker",
    "PlainSentence",
    "internal_marker",
    "nothing_done",
    "rate_limited",
    "refusal_of",
]


def rate_limited(retry_after: float) -> PlainSentence:
    """A tool's policy allows no more calls for now."""
    minutes = max(1, math.ceil(retry_after / 60))
    return PlainSentence(
        f"That has been used too often for now; please try again in {minutes} min.",
        f"这个功能现在用得太频繁了，请 {minutes} 分钟后再试。",
    )


def refusal_of(error: ToolInvocationError) -> PlainSentence:
    """What the user reads about a call that did not run: never the tool's name, a
    field's path or the validation's words (those are the model's and the log's)."""
    if isinstance(error, ToolSwitchedOffError):
        return SWITCHED_OFF
    if isinstance(error, ToolHiddenError):
        return NOT_AVAILABLE
    if isinstance(error, ToolRateLimitedError):
        return rate_limited(error.retry_after)
    return COULD_NOT_DO


# What the user gets when the model's calls were refused until the repairs ran out, or
# its answer was internal text: one sentence, no tool, field or reason named (the
# reasons went to the model, and are in the log and the dashboard's turn log).
COULD_NOT_DO = PlainSentence(
    "Sorry, I couldn't do that; please try saying it another way.",
    "抱歉，这件事我没办成，请换个说法再试一次。",
)
# The model kept calling a tool this sender may not use here (admin only, private chats
# only): worth saying, since rephrasing will not help.
NOT_AVAILABLE = PlainSentence(
    "Sorry, that isn't available to you in this chat.",
    "抱歉，你在这个聊天里用不了这个功能。",
)
SWITCHED_OFF = PlainSentence(
    "That is switched off in this chat; a chat admin can turn it back on with /tools.",
    "这个功能在本聊天中已关闭；群管理员可以用 /tools 重新打开。",  # noqa: RUF001
)
UNFINISHED = PlainSentence(
    "Sorry, I couldn't finish that; please try a simpler request.",
    "抱歉，这件事我没能完成，请把请求说得简单一些再试。",
)
# The user's own message does not fit the model's window, even with no tools or history.
MESSAGE_TOO_LONG = PlainSentence(
    "That message is too long for me to read at once. Could you send it in shorter parts?",
    "这条消息太长了，我一次读不完。能分成几段短一点的发吗？",
)
# Even "hi" does not fit beside the bot's own instructions: the operator's problem, and
# the log, /healthz and `groupmate check` say what to change.
MISCONFIGURED = PlainSentence(
    "I can't answer right now: I'm set up wrong for my language model. An admin has been told.",
    "我现在没法回答：我和语言模型的配置有问题，已经告诉管理员了。",
)
NO_ANSWER = PlainSentence(
    "Sorry, I have no answer to that.",
    "抱歉，这个问题我回答不了。",
)
# Every write the model's turn tried failed (see FunctionCallLLM._answer): what the user
# reads instead of an answer that would pass for done, by how the first write failed.
# "invalid": its arguments were refused (a time the user never said, say): the reasons
# are the model's, in its words; the user is told what to say instead.
_NOTHING_DONE = "Nothing was set or changed"
_NOTHING_DONE_ZH = "没有设置或修改任何东西"
NOT_UNDERSTOOD = PlainSentence(
    f"{_NOTHING_DONE}: your message didn't say exactly what to do. Please say it again "
    "with the details (for a reminder: what, and when, e.g. “every day at 9:00”).",
    f"{_NOTHING_DONE_ZH}：你的消息没有说清楚具体要做什么。请把细节说清楚再试一次"
    "（提醒的话：内容和时间，例如“每天上午9点”）。",
)
NOT_DONE: dict[str, PlainSentence] = {
    "hidden": PlainSentence(
        f"{_NOTHING_DONE}: that isn't available to you in this chat.",
        f"{_NOTHING_DONE_ZH}：你在这个聊天里用不了这个功能。",
    ),
    "limited": PlainSentence(
        f"{_NOTHING_DONE}: that has been used too often for now; please try again later.",
        f"{_NOTHING_DONE_ZH}：这个功能现在用得太频繁了，请稍后再试。",
    ),
    # A call that ran out of time may still finish (its transaction commits): never
    # "nothing was set", or the user sends it again and gets it twice.
    "timeout": PlainSentence(
        "That took too long to confirm, so it may or may not have gone through. Please "
        "check (/reminders for reminders) before trying again.",
        "操作没能及时确认，可能已经完成，也可能没有。"
        "请先检查一下（提醒可以用 /reminders 查看）再重试。",
    ),
    "failed": PlainSentence(
        f"{_NOTHING_DONE}: it didn't go through. Please try again in a moment.",
        f"{_NOTHING_DONE_ZH}：操作没有成功。请稍后再试。",
    ),
}


def nothing_done(outcome: str) -> PlainSentence:
    """What the user reads when every write of a turn failed, the first as `outcome`."""
    return NOT_DONE.get(outcome, NOT_UNDERSTOOD)


# The database could not be reached (or stayed locked): what the router answers, and
# every tool's refusal. Nothing was written, so trying again is safe.
STORAGE_DOWN = PlainSentence(
    "I can't reach the reminder database right now, so nothing was changed. "
    "Please try again in a moment.",
    "我现在连不上提醒数据库，所以什么都没有改动。请稍后再试。",
)


@dataclass(frozen=True, slots=True)
class Marker:
    """A sign that text was written for or by the machinery, not for the user."""

    name: str
    pattern: re.Pattern[str]

    def found_in(self, text: str) -> bool:
        return self.pattern.search(text) is not None


def _marker(name: str, pattern: str, flags: int = 0) -> Marker:
    return Marker(name, re.compile(pattern, flags))


_Q = "[\"']"  # JSON's quotes, or a Python repr's
INTERNAL_MARKERS: tuple[Marker, ...] = (
    # The validation report's root path, which the old user message quoted.
    _marker("argument root path", re.escape("(arguments)")),
    # Call and result tags of the prompt formats, and chat-template tokens a server
    # left in the text (<|im_end|>, DeepSeek's <｜tool▁calls▁begin｜>, [TOOL_CALLS]).
    _marker(
        "tool-call tag",
        r"</?(?:tool_calls?|tool_code|tool_response|tool_output|tool_result|available_tools"
        r"|function_calls?)\s*>|<function=",
        re.IGNORECASE,
    ),
    _marker("template token", r"<[|｜][^<>\s]{1,40}[|｜]>|\[TOOL_CALLS\]"),
    # A call written as JSON (or a Python dict): a name next to its arguments, the
    # OpenAI shape, or the json format's wrapper. A bare {"name": "Alice"} is data.
    _marker(
        "tool-call JSON",
        rf"{_Q}name{_Q}\s*:\s*{_Q}[^\"'\n]{{0,80}}{_Q}\s*,\s*{_Q}(?:arguments|parameters){_Q}\s*:"
        rf"|{_Q}(?:arguments|parameters){_Q}\s*:\s*\{{[^{{}}]{{0,400}}\}}\s*,\s*{_Q}name{_Q}\s*:"
        rf"|{_Q}function{_Q}\s*:\s*\{{\s*{_Q}name{_Q}\s*:"
        rf"|{_Q}tool_calls{_Q}\s*:",
    ),
    # The loop's own reports to the model (refusals, repairs, replays).
    _marker(
        "repair report",
        rf"{_Q}(?:problem|received|available_tools|shown_to_user){_Q}\s*:"
        r"|invalid arguments for\b|unknown tool ['\"]|\btool ['\"][\w.-]+['\"] is not available"
        r"|your tool call could not be parsed|\(unparsable tool call\)"
        r"|Correct these arguments and call|Send the call again as valid JSON"
        r"|failed with an internal error|Answer my last message directly in plain text"
        r"|Earlier in this chat \(for context; act only on the latest message\)",
    ),
    # The validation wording of groupmate's stage 1, jsonschema's and Pydantic's.
    _marker(
        "validation wording",
        r"required field is missing|\bunknown field\b|has the wrong format \(expected"
        r"|arguments (?:are not (?:valid|usable) JSON|must be a JSON object|were rejected)"
        r"|is a required property|Additional properties are not allowed"
        r"|is not valid under any of the given schemas|is not of type ['\"]"
        r"|Field required|Input should be|Extra inputs are not permitted|Value error, "
        r"|String should have at (?:least|most)|input_value=|input_type=|\[type=\w+"
        rf"|errors\.pydantic\.dev|{_Q}loc{_Q}\s*:\s*[(\[]",
    ),
    _marker("validation error", r"\bvalidation errors?\b", re.IGNORECASE),
    # Python's own output: a traceback, an object's default repr, groupmate's and
    # Pydantic's classes by name.
    _marker(
        "python repr",
        r"\bTraceback\b|<[\w.]+ object at 0x[0-9a-fA-F]+>"
        r"|\b(?:ValidationError|InvalidArgumentsError|ToolInvocationError|UnknownToolError"
        r"|ToolHiddenError|ToolTimeoutError|ToolFailedError|GrammarError|ArgumentIssue"
        r"|ToolCallRecord|ValidatedToolCall|ParsedCall|MalformedCall|FunctionResult"
        r"|MessageContext)\b",
    ),
)


@functools.lru_cache(maxsize=32)
def _tool_names_marker(names: frozenset[str]) -> Marker | None:
    # Identifier characters are ASCII here: in "用reminder_set设置" the CJK letters
    # around the name are word characters to `\b`.
    identifiers = sorted((name for name in names if "_" in name), key=len, reverse=True)
    if not identifiers:
        return None
    alternatives = "|".join(re.escape(name) for name in identifiers)
    return _marker("tool name", rf"(?<![A-Za-z0-9_])(?:{alternatives})(?![A-Za-z0-9_])")


_FENCE = re.compile(r"\A\s*```[\w+-]*\s*(.*?)\s*```\s*\Z", re.DOTALL)
_ARGUMENTS_LIMIT = 4_000  # longer than any argument object a model writes as its answer


def _is_arguments_object(text: str, parameters: Mapping[str, frozenset[str]]) -> bool:
    """The whole answer is one JSON object whose keys are a tool's arguments: a call
    written without its name ({"when": "tomorrow 9am", "content": "call mom"})."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced is not None:
        body = fenced.group(1)
    if not (body.startswith("{") and body.endswith("}")) or len(body) > _ARGUMENTS_LIMIT:
        return False
    try:
        value = json.loads(body)
    except ValueError:
        return False
    if not isinstance(value, dict) or not value:
        return False
    keys = set(value)
    return any(keys <= names for names in parameters.values() if names)


def internal_marker(
    text: str,
    tool_names: Iterable[str] = (),
    tool_parameters: Mapping[str, frozenset[str]] | None = None,
) -> str | None:
    """The name of the first sign of internal text in `text`, or None for a plain answer.

    `tool_names` are the registered tools (hidden ones included: their names are no
    more the user's business); `tool_parameters` their argument names.
    """
    for marker in INTERNAL_MARKERS:
        if marker.found_in(text):
            return marker.name
    names = _tool_names_marker(frozenset(tool_names))
    if names is not None and names.found_in(text):
        return names.name
    if tool_parameters and _is_arguments_object(text, tool_parameters):
        return "tool arguments"
    return None
