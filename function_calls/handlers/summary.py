"""`summary`: what a group talked about, from the stored chat log, map-reduce when long."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any, Self

from pydantic import BaseModel, Field, ValidationInfo, model_validator

from groupmate.function_calls.context import MessageContext, validation_context
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.handlers.digest import gather_window
from groupmate.function_calls.language import chat_language, is_chinese
from groupmate.function_calls.links.found import find_links
from groupmate.function_calls.plugins.declare import Plugin
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.services import TextCompleter
from groupmate.storage import ReminderReader
from groupmate.storage.chatlog import ChatLogReader, LoggedMessage

DEFAULT_MESSAGES = 100
CHUNK_CHARS = 12_000
MAX_TRANSCRIPT_CHARS = 240_000  # about 20 chunks; older lines of a huge window are left out
MAX_PARALLEL_REQUESTS = 4
MAX_REDUCE_ROUNDS = 3
_MAP_PROMPT = (
    "You summarize part of a group chat transcript. List the topics, decisions, open "
    "questions and who asked what, as short bullet points. Use the participants' names."
)
_REDUCE_PROMPT = (
    "Merge these partial summaries of one group chat, in order, into one concise summary: "
    "topics, decisions, open questions, who asked what. Short bullet points."
)
# Words that ask about the conversation itself. A small model called `summary` for "good
# morning", "早上好" and "what's 12 times 3" (measured in the eval); a call from a message
# without any of these is sent back to the model instead of answered.
_ASKS_ABOUT_THE_CHAT = re.compile(
    r"summar|\bsum (?:it |this |that |everything )?up\b|recap|tl;?\s?dr|digest|overview|"
    r"\bgist\b|highlights|catch (?:me |us |\w+ )?up|\bmiss(?:ed)?\b|"
    r"what (?:was|were|has|have|had|is|are)(?: been)? (?:said|discussed|decided|talked about|"
    r"going on|happening)|what(?:'s| is| has) (?:been )?(?:going on|happening|happened)|"
    r"what happened|talk(?:ed|ing) about|discuss|conversation|"
    r"总结|概括|摘要|汇总|归纳|要点|回顾|说了(?:些)?什么|聊了(?:些)?什么|讨论了|错过|发生了什么|"
    r"在聊|在说|聊天记录",
    re.IGNORECASE,
)

# A built-in family, loaded as any plugin is (`builtins: {summary: false}` leaves it out).
plugin = Plugin("summary")


# Words that point at the conversation itself, not at something linked in it.
_NAMES_THE_CHAT = re.compile(
    r"\bmiss(?:ed)?\b|discuss|conversation|talk(?:ed|ing) about|\bchat\b|going on|happened|"
    r"catch (?:me |us )?up|聊|大家|讨论|错过|发生",
    re.IGNORECASE,
)


def asks_about_the_chat(text: str) -> bool:
    """Whether a message asks about the conversation ("what did I miss?", "tl;dr",
    "总结一下"), so a summary is what it wants."""
    return _ASKS_ABOUT_THE_CHAT.search(text) is not None


class SummaryArgs(BaseModel):
    """Which part of the conversation to summarize."""

    last_n: int | None = Field(
        default=None, ge=1, le=2000, description="the last N messages (default 100)"
    )
    hours: float | None = Field(
        default=None, gt=0, le=168, description="or: everything from the last N hours"
    )

    @model_validator(mode="after")
    def _one_window(self, info: ValidationInfo) -> Self:
        if self.last_n is not None and self.hours is not None:
            raise ValueError("give either last_n or hours, not both")
        ctx = validation_context(info)
        # A model's call is checked against the message's words; a command's or an API
        # call's arguments are the user's own.
        said = ctx.text if ctx is not None else ""
        if said and not said.startswith("/"):
            _check_the_words(said, ctx.reply_text if ctx is not None else "")
        return self


def _check_the_words(said: str, replied: str) -> None:
    """A model's summary call must be what the message asks: about the conversation, and
    not about a link ("summarize this https://…", or "summarize this" in reply to a link,
    is read_url's; "what did we discuss about https://…" is still the chat's)."""
    links = find_links(said) or find_links(replied)
    if links and _NAMES_THE_CHAT.search(said) is None:
        raise ValueError(
            f"the message is about a web page: call read_url with url={links[0]!r} instead"
        )
    if not asks_about_the_chat(said):
        raise ValueError(
            "the message does not ask about the conversation: call no tool, "
            "answer the message itself"
        )


def chunk(lines: list[str], budget: int = CHUNK_CHARS) -> list[str]:
    """Consecutive lines packed into pieces of at most `budget` characters."""
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for line in lines:
        line = line[:budget]
        if current and size + len(line) + 1 > budget:
            pieces.append("\n".join(current))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    if current:
        pieces.append("\n".join(current))
    return pieces


async def summarize(
    llm: Any, lines: list[str], map_prompt: str = _MAP_PROMPT, reduce_prompt: str = _REDUCE_PROMPT
) -> str:
    """Map each chunk to a partial summary, then reduce them to one (a chat transcript by
    default; a web page's paragraphs with read_url's prompts).

    Bounded everywhere: the transcript's size, the requests in flight, and the reduce
    rounds (a model that writes long partial summaries cannot make it loop).
    """
    lines = _newest_within(lines, MAX_TRANSCRIPT_CHARS)
    slots = asyncio.Semaphore(MAX_PARALLEL_REQUESTS)

    async def ask(prompt: str, piece: str) -> str:
        async with slots:
            answer = str(await llm.complete_text(prompt, piece))
        return answer[: CHUNK_CHARS // 3]

    pieces = chunk(lines)
    if len(pieces) == 1:
        return await ask(map_prompt, pieces[0])
    partial = await asyncio.gather(*(ask(map_prompt, p) for p in pieces))
    merged = chunk([f"Part {n}:\n{text}" for n, text in enumerate(partial, 1)])
    for _ in range(MAX_REDUCE_ROUNDS):
        if len(merged) == 1:
            break
        partial = await asyncio.gather(*(ask(reduce_prompt, p) for p in merged))
        merged = chunk(list(partial))
    return await ask(reduce_prompt, merged[0])


def _newest_within(lines: list[str], budget: int) -> list[str]:
    kept: list[str] = []
    for line in reversed(lines):
        budget -= len(line) + 1
        if budget < 0:
            break
        kept.append(line)
    return kept[::-1]


@tool_function(
    name="summary",
    effect="read",
    description="Summarize what was said in this group: topics, decisions, who asked what.",
    examples=[
        Example("summarize what was said", {}),
        Example("summarize the last 200 messages", {"last_n": 200}),
    ],
    scope="group",
    timeout=120,
)
async def summary(
    ctx: MessageContext,
    args: SummaryArgs,
    chatlog: ChatLogReader,
    reminders: ReminderReader,
    llm: TextCompleter | None,
) -> FunctionResult:
    # One more than asked: the newest entry is normally the request itself.
    if args.hours is not None:
        since = ctx.clock() - timedelta(hours=args.hours)
        messages = await chatlog.recent(ctx.chat_id, 2001, since=since)
    else:
        messages = await chatlog.recent(ctx.chat_id, (args.last_n or DEFAULT_MESSAGES) + 1)
    if messages and messages[-1].sender_id == ctx.sender_id and not messages[-1].from_bot:
        messages = messages[:-1]
    else:
        messages = messages[1:] if args.hours is None else messages
    window = (
        f"the last {args.hours:g} hours" if args.hours else f"the last {len(messages)} messages"
    )
    if not messages:
        return FunctionResult.direct("There is nothing to summarize yet.")
    zone = ctx.zone
    lines = [
        f"[{m.created_at.astimezone(zone):%a %H:%M}] {m.sender_name or m.sender_id}: {m.text}"
        for m in messages
    ]
    if llm is None:
        digest = await _offline(ctx, chatlog, reminders, messages)
        return FunctionResult.direct(f"(No language model here: the offline digest.)\n{digest}")
    try:
        text = await summarize(llm, lines)
    except LLMUnavailableError as exc:
        digest = await _offline(ctx, chatlog, reminders, messages)
        return FunctionResult.direct(f"{exc.user_message} The offline digest:\n{digest}")
    return FunctionResult.direct(f"📝 Summary of {window}:\n{text}")


async def _offline(
    ctx: MessageContext,
    chatlog: ChatLogReader,
    reminders: ReminderReader,
    messages: list[LoggedMessage],
) -> str:
    """The offline digest of the same messages (from the first to the last), in the
    asker's language when their words say it, else the chat's."""
    until = messages[-1].created_at + timedelta(microseconds=1)
    window = await gather_window(chatlog, reminders, ctx.chat_id, messages[0].created_at, until)
    if is_chinese(ctx.text):
        return window.digest("zh")
    return window.digest(chat_language([m.text for m in messages if not m.from_bot]))
