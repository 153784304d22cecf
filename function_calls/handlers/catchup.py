"""`chat_catchup` (`/catchup`, "what did I miss?", "我错过了什么"): the chat since the
asker's own last message (or the last 24 hours), leading with what concerns them. With a
model, its summary, given the "for you" lines found by rule; without one, or with the
day's budget spent, the offline digest of the same window, saying so."""

from __future__ import annotations

from datetime import UTC, timedelta
from typing import Self

from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

from function_calls.catchup_core import Asker, ForYou, for_you
from function_calls.context import MessageContext, validation_context
from function_calls.digest_core import Clock, Lang, people
from function_calls.digest_lines import is_cjk
from function_calls.errors import LLMUnavailableError
from function_calls.handlers.budget import chat_limit
from function_calls.handlers.digest import ChatWindow, gather_window
from function_calls.handlers.summary import asks_about_the_chat, summarize
from function_calls.registry import Example, tool_function
from function_calls.result import FunctionResult
from function_calls.services import DailyLimits, TextCompleter
from storage import ReminderService
from storage.chat_window import last_spoke, theirs
from storage.chatlog import ChatLog
from storage.usage import UsageLog

# With no message of theirs to start from, catch-up covers this much.
DEFAULT_WINDOW = timedelta(hours=24)
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
        "Catch the sender up on this group since their own last message: what concerns "
        "them (mentions, questions to them, reminders for them, decisions), then the rest."
    ),
    examples=[Example("what did I miss?", {}), Example("我错过了什么", {})],
    scope="group",
    timeout=120,
    command="catchup",
)
async def chat_catchup(
    ctx: MessageContext,
    args: CatchupArgs,
    chatlog: ChatLog,
    reminders: ReminderService,
    llm: TextCompleter | None,
    limits: DailyLimits | None,
    usage: UsageLog | None,
) -> FunctionResult:
    lang: Lang = "zh" if is_cjk(ctx.text) else "en"
    window, spoke = await _window(ctx, chatlog, reminders)
    clock = Clock(window.zone, lang, window.since, window.until)
    # People's conversation: what was said to or by the bot (an earlier catch-up, say)
    # is nothing new.
    said = people(window.messages)
    if not said and not window.reminders:
        return FunctionResult.direct(_nothing_new(window, clock, spoke=spoke))
    replied = {m.reply_to for m in window.messages if m.reply_to and not m.from_bot}
    earlier = await reminders.database.read(
        lambda session: theirs(session, ctx.chat_id, ctx.sender_id, replied)
    )
    asker = Asker(ctx.sender_id, ctx.sender_name)
    found = for_you(window.messages, window.reminders, asker, earlier)
    head = _head(window, clock, spoke)
    if not said:  # reminders only: nothing for a model to summarize
        return _offline(head, window, found, clock, None)
    if llm is None:
        why = "没有配置语言模型" if lang == "zh" else "no language model is configured"
        return _offline(head, window, found, clock, _because(why, lang))
    if await _budget_spent(ctx, reminders, limits, usage):
        spent = "today's language-model budget is spent"
        why = "今天的语言模型额度已用完" if lang == "zh" else spent
        return _offline(head, window, found, clock, _because(why, lang))
    try:
        summary = await _summarize(llm, window, found, clock, ctx.sender_name or ctx.sender_id)
    except LLMUnavailableError as exc:
        instead = "以下是离线摘要。" if lang == "zh" else "Here is the offline digest instead."
        return _offline(head, window, found, clock, f"{exc.user_message} {instead}")
    return FunctionResult.direct(f"{head}\n{_for_you_block(found, clock)}{summary.strip()}")


async def _window(
    ctx: MessageContext, chatlog: ChatLog, reminders: ReminderService
) -> tuple[ChatWindow, bool]:
    """Since the asker's own last message before this request (or the last 24 hours),
    until the request; and whether they had spoken."""
    until = ctx.clock()
    await chatlog.flush()
    asked = ctx.request_messages
    times = await reminders.database.read(
        lambda session: last_spoke(session, ctx.chat_id, ctx.sender_id, asked + 1)
    )
    # The messages the router just logged are the request itself (several, for a burst):
    # the window ends where it began.
    if ctx.source in _LIVE_SOURCES and times and times[0] >= until - _REQUEST_AGE:
        request, times = times[:asked], times[asked:]
        until = request[-1]
    since = times[0] + timedelta(microseconds=1) if times else until - DEFAULT_WINDOW
    return await gather_window(chatlog, reminders, ctx.chat_id, since, until), bool(times)


async def _budget_spent(
    ctx: MessageContext,
    reminders: ReminderService,
    limits: DailyLimits | None,
    usage: UsageLog | None,
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


def _head(window: ChatWindow, clock: Clock, spoke: bool) -> str:
    count = len(people(window.messages))
    if clock.lang == "zh":
        since = f"你上次发言（{clock.full(window.since)}）以来" if spoke else "过去 24 小时"
        return f"📝 {since}的 {count} 条消息："
    since = f"since your last message ({clock.full(window.since)})" if spoke else "in the last 24 h"
    return f"📝 Catch-up: {count} message{'' if count == 1 else 's'} {since}:"


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


def _nothing_new(window: ChatWindow, clock: Clock, *, spoke: bool) -> str:
    since = clock.full(window.since)
    if clock.lang == "zh":
        return f"你上次发言（{since}）以来没有新消息。" if spoke else "过去 24 小时没有消息。"
    if spoke:
        return f"Nothing new since your last message ({since})."
    return "Nothing was said in the last 24 hours."
