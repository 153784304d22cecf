"""`chat_catchup` (`/catchup`, "what did I miss?", "我错过了什么"): the chat since what the
asker has not yet seen (see `seen_from`), leading with what concerns them. With a model,
its summary, given the "for you" lines found by rule; without one, or with the day's
budget spent, the offline digest of the same window, saying so."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

from groupmate.function_calls.catchup_core import Asker, ForYou, for_you
from groupmate.function_calls.context import MessageContext, validation_context
from groupmate.function_calls.digest_core import Clock, people
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.handlers.budget import chat_limit
from groupmate.function_calls.handlers.digest import ChatWindow, gather_window
from groupmate.function_calls.handlers.summary import asks_about_the_chat, summarize
from groupmate.function_calls.language import Lang, PlainSentence, language_of
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.seen_marks import SeenMarks
from groupmate.function_calls.services import DailyLimits, TextCompleter
from groupmate.storage import ReminderReader
from groupmate.storage.chat_window import last_spoke, theirs
from groupmate.storage.chatlog import ChatLogReader
from groupmate.storage.usage import UsageReader

# With no message of theirs to start from, catch-up covers this much.
DEFAULT_WINDOW = timedelta(hours=24)
# Away: this long without a word of theirs. In a group chat someone who follows along
# answers within minutes; half an hour of silence (a meeting, a commute, the night) means
# they were away, and a word said on their return ("hey @Alice …") is no sign they read
# what came before it. Shorter would take a slow reader for one who left; longer would
# forget a lunch break. Someone back for longer than this has been reading along.
AWAY = timedelta(minutes=30)
# How many of the asker's own newest messages are looked at to find where they were away.
_LOOK_BACK = 50
# Calls that answer a message the router just logged: its newest row is the request.
_LIVE_SOURCES = frozenset({"model", "command", "offer"})
# A request is logged at most this long before the call (a platform's timestamp may lag
# the bot's clock); an older newest message of the asker's is not the request.
_REQUEST_AGE = timedelta(minutes=5)
_PROMPT = (
    "You catch {name} up on a group chat they were away from. Below: lines found for "
    "them (questions to them, mentions, reminders for them, decisions), then the "
    "transcript. Start with what {name} must answer or act on, then decisions, then the "
    "other topics, as short bullet points naming who said what. Write in {language}."
)
_REDUCE = (
    "Merge these partial catch-up notes for {name}, in order, into one: what they must "
    "answer or act on first, then decisions, then other topics. Short bullet points, in "
    "{language}."
)


class CatchupArgs(BaseModel):
    """No arguments: the window is the asker's own."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _asks_about_the_chat(self, info: ValidationInfo) -> Self:
        ctx = validation_context(info)
        said = ctx.text if ctx is not None else ""
        # A model's call must come from a message about the chat ("good morning" is not).
        if said and not said.startswith("/") and not asks_about_the_chat(said):
            raise ValueError(
                "the message does not ask about the conversation: call no tool, "
                "answer the message itself"
            )
        return self


@tool_function(
    name="chat_catchup",
    effect="read",
    description=(
        "Catch the sender up on what they have not seen in this group: since their last "
        "catch-up, or their last message before they were away (half an hour without a "
        "word). What concerns them (mentions, questions to them, reminders for them, "
        "decisions) first, then the rest."
    ),
    examples=[Example("what did I miss?", {}), Example("我错过了什么", {})],
    scope="group",
    timeout=120,
    command="catchup",
)
async def chat_catchup(
    ctx: MessageContext,
    args: CatchupArgs,
    chatlog: ChatLogReader,
    reminders: ReminderReader,
    llm: TextCompleter | None,
    limits: DailyLimits | None,
    usage: UsageReader | None,
    marks: SeenMarks | None,
) -> FunctionResult:
    window, seen = await _window(ctx, chatlog, reminders, marks)
    answer = await _answer(ctx, window, seen, reminders, llm, limits, usage)
    if marks is not None and ctx.source in _LIVE_SOURCES:
        # Only once the answer is made (not when it timed out or failed): what it shows,
        # the asker has now seen, and the next catch-up starts here.
        await marks.mark(ctx.chat_id, ctx.sender_id, window.until)
    return answer


async def _answer(
    ctx: MessageContext,
    window: ChatWindow,
    seen: Since,
    reminders: ReminderReader,
    llm: TextCompleter | None,
    limits: DailyLimits | None,
    usage: UsageReader | None,
) -> FunctionResult:
    lang = language_of(ctx.text)
    clock = Clock(window.zone, lang, window.since, window.until)
    # Other people's conversation: what was said to or by the bot (an earlier catch-up,
    # say) and the asker's own words are nothing new to them.
    said = [m for m in people(window.messages) if m.sender_id != ctx.sender_id]
    if not said and not window.reminders:
        return FunctionResult.direct(_nothing_new(window, clock, seen=seen))
    replied = {m.reply_to for m in window.messages if m.reply_to and not m.from_bot}
    earlier = await reminders.read(
        lambda session: theirs(session, ctx.chat_id, ctx.sender_id, replied)
    )
    asker = Asker(ctx.sender_id, ctx.sender_name)
    found = for_you(window.messages, window.reminders, asker, earlier)
    head = _head(window, clock, seen, ctx.sender_id)
    if not said:  # reminders only: nothing for a model to summarize
        return _offline(head, window, found, clock, None)
    if llm is None:
        return _offline(head, window, found, clock, _because(NO_MODEL.in_(lang), lang))
    if await _budget_spent(ctx, reminders, limits, usage):
        return _offline(head, window, found, clock, _because(BUDGET_SPENT.in_(lang), lang))
    try:
        summary = await _summarize(llm, window, found, clock, ctx.sender_name or ctx.sender_id)
    except LLMUnavailableError as exc:
        instead = OFFLINE_INSTEAD.in_(lang)
        return _offline(head, window, found, clock, f"{exc.user_message} {instead}")
    return FunctionResult.direct(f"{head}\n{_for_you_block(found, clock)}{summary.strip()}")


Since = Literal["message", "away", "catchup", "day"]


@dataclass(frozen=True, slots=True)
class SeenFrom:
    """Where the asker's unseen part of the chat begins, and why there: their last
    message, their last message before they were away, their last catch-up, or (none of
    those) the last 24 hours."""

    at: datetime | None
    since: Since


# Why a catch-up is the offline digest, in the asker's language.
NO_MODEL = PlainSentence("no language model is configured", "没有配置语言模型")
BUDGET_SPENT = PlainSentence("today's language-model budget is spent", "今天的语言模型额度已用完")
OFFLINE_INSTEAD = PlainSentence("Here is the offline digest instead.", "以下是离线摘要。")


def seen_from(spoke: Sequence[datetime], until: datetime, caught_up: datetime | None) -> SeenFrom:
    """From the asker's own messages before the request (newest first), the request's
    time and their last catch-up: what they have not yet seen begins after their last
    message, unless they have only just come back (their latest words started less than
    `AWAY` ago, after a longer silence), in which case it begins after their last message
    before that silence; and never before their last catch-up ended."""
    found = SeenFrom(None, "day")
    if spoke:
        found = SeenFrom(spoke[0], "message")
        start = 0  # the oldest message of their latest stretch of talking
        while start + 1 < len(spoke) and spoke[start] - spoke[start + 1] <= AWAY:
            start += 1
        back = until - spoke[start] <= AWAY  # their latest words began just now
        if back and start + 1 < len(spoke):
            found = SeenFrom(spoke[start + 1], "away")
        elif back and len(spoke) < _LOOK_BACK:
            found = SeenFrom(None, "day")  # they had not spoken before these words
    if caught_up is not None and (found.at is None or caught_up >= found.at):
        return SeenFrom(caught_up, "catchup")
    return found


async def _window(
    ctx: MessageContext,
    chatlog: ChatLogReader,
    reminders: ReminderReader,
    marks: SeenMarks | None,
) -> tuple[ChatWindow, Since]:
    """From where the asker's unseen part begins (see `seen_from`) until the request."""
    until = ctx.clock()
    await chatlog.flush()
    asked = ctx.request_messages
    times = await reminders.read(
        lambda session: last_spoke(session, ctx.chat_id, ctx.sender_id, asked + _LOOK_BACK)
    )
    # The messages the router just logged are the request itself (several, for a burst):
    # the window ends where it began.
    if ctx.source in _LIVE_SOURCES and times and times[0] >= until - _REQUEST_AGE:
        request, times = times[:asked], times[asked:]
        until = request[-1]
    caught_up = await marks.last(ctx.chat_id, ctx.sender_id) if marks is not None else None
    seen = seen_from(times[:_LOOK_BACK], until, caught_up)
    since = seen.at + timedelta(microseconds=1) if seen.at else until - DEFAULT_WINDOW
    window = await gather_window(chatlog, reminders, ctx.chat_id, since, until)
    return window, seen.since


async def _budget_spent(
    ctx: MessageContext,
    reminders: ReminderReader,
    limits: DailyLimits | None,
    usage: UsageReader | None,
) -> bool:
    """The day's token budget (the chat's or the bot's) is spent: the model is not
    called, as the router would not call it for a plain message either."""
    if limits is None or usage is None:
        return False
    limit = await chat_limit(reminders, limits, ctx.chat_id)
    if limit is None and limits.total is None:
        return False
    spent = await usage.spent(ctx.chat_id, ctx.clock().astimezone(UTC).date())
    over_chat = limit is not None and spent.chat >= limit
    return over_chat or (limits.total is not None and spent.total >= limits.total)


async def _summarize(
    llm: TextCompleter, window: ChatWindow, found: ForYou, clock: Clock, name: str
) -> str:
    language = "Chinese" if clock.lang == "zh" else "English"
    lines = [
        f"[{clock.at(m.at)}] {m.sender_name or m.sender_id}: {m.text}" for m in window.messages
    ]
    noted = found.lines(clock) + found.decision_lines(clock)
    context = "\n".join(noted) if noted else "(none found)"
    prompt = _PROMPT.format(name=name, language=language) + f"\n\nFor {name}:\n{context}"
    return await summarize(llm, lines, prompt, _REDUCE.format(name=name, language=language))


def _head(window: ChatWindow, clock: Clock, seen: Since, asker: str) -> str:
    count = sum(1 for m in people(window.messages) if m.sender_id != asker)
    since = _since(window, clock, seen)
    if clock.lang == "zh":
        return f"📝 {since}的 {count} 条消息："
    return f"📝 Catch-up: {count} message{'' if count == 1 else 's'} {since}:"


def _since(window: ChatWindow, clock: Clock, seen: Since) -> str:
    """ "since your last message (Tue 24 Nov 09:00)", or its like, for the window."""
    at = clock.full(window.since)
    if clock.lang == "zh":
        return {
            "message": f"你上次发言（{at}）以来",
            "away": f"你离开前最后一次发言（{at}）以来",
            "catchup": f"你上次查看错过的消息（{at}）以来",
            "day": "过去 24 小时",
        }[seen]
    return {
        "message": f"since your last message ({at})",
        "away": f"since your last message before you were away ({at})",
        "catchup": f"since your last catch-up ({at})",
        "day": "in the last 24 h",
    }[seen]


def _for_you_block(found: ForYou, clock: Clock) -> str:
    if found.empty:
        return ""
    heading = "🙋 与你有关：" if clock.lang == "zh" else "🙋 For you:"
    return "\n".join([heading, *found.lines(clock)]) + "\n\n"


def _because(why: str, lang: Lang) -> str:
    if lang == "zh":
        return f"（{why}，以下是离线摘要。）"
    return f"({why}, so this is the offline digest.)"


def _offline(
    head: str, window: ChatWindow, found: ForYou, clock: Clock, note: str | None
) -> FunctionResult:
    """The offline digest of the window, after the "for you" lines; `note` says why."""
    said = f"{note}\n" if note else ""
    text = f"{head}\n{said}{_for_you_block(found, clock)}{window.digest(clock.lang)}"
    return FunctionResult.direct(text)


def _nothing_new(window: ChatWindow, clock: Clock, *, seen: Since) -> str:
    if seen == "day":
        return (
            "过去 24 小时没有消息。"
            if clock.lang == "zh"
            else "Nothing was said in the last 24 hours."
        )
    since = _since(window, clock, seen)
    if clock.lang == "zh":
        return f"{since}没有新消息。"
    return f"Nothing new {since}."
