"""The "memory" family: finding what was said in this chat. `/find WORDS` lists the
matching messages without a model; `chat_search` lets the model answer a question about
the past from them, citing each (sender and time), or say that nothing matches. Both
read only the chat they are called in. Forgetting is in `chat_forget`."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import datetime

from pydantic import BaseModel, Field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.handlers.chat_forget import chat_forget
from groupmate.function_calls.internal_text import PlainSentence
from groupmate.function_calls.language import is_chinese
from groupmate.function_calls.plugins.declare import Plugin
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.services import TextCompleter
from groupmate.storage import Database
from groupmate.storage.search import (
    Asked,
    FoundMessage,
    MessageSearch,
    SearchQuery,
    SearchReader,
    parse_query,
)

PAGE = 5  # /find's page: what a chat window shows without scrolling
_LAST_PAGE = 99  # a bigger number at the end is a word ("room 101"), not a page
CITED = 8  # messages the model answers from
_SHOWN_CHARS = 160  # a long message is cut around its first match
_CITATION = re.compile(r"\[(\d+)\]")
_ANSWER_PROMPT = (
    "Answer the question from the numbered chat messages below only: they are what a "
    "search of this chat found. Cite each message you use as [1], [2] and so on, right "
    "after the fact it supports. If they do not answer the question, say that the chat "
    "does not say. Never add facts they do not contain. Write in the language of the "
    "question, in at most three sentences."
)

# A built-in family, loaded as any plugin is (`builtins: {memory: false}` leaves it out).
plugin = Plugin("memory")


@plugin.service
async def message_search(database: Database) -> AsyncIterator[MessageSearch]:
    search = MessageSearch(database)
    async with search.indexing():  # new messages join the index every second
        yield search


@plugin.service
def search_reader(search: MessageSearch) -> SearchReader:
    """What the read tools get: `MessageSearch` can forget, which only `chat_forget`
    (a write) may."""
    return SearchReader(search)


class FindArgs(BaseModel):
    """The words to find; a number at the end is the page."""

    words: str = Field(
        min_length=1,
        max_length=300,
        description='words (all must match), "a phrase", from:@name; a page number last',
    )


class ChatSearchArgs(BaseModel):
    """What to look for in this chat's messages."""

    query: str = Field(
        min_length=1,
        max_length=200,
        description=(
            'key words of the answer, as said in the chat (all must match): "a phrase" for '
            "words together, from:@name for one person's messages. Chinese words as is."
        ),
    )


def local_time(at: datetime, ctx: MessageContext, chinese: bool) -> str:
    """When a message was said, in the chat's zone: 'Mar 3 14:05' (with the year when it
    is not this year's), '3月3日 14:05' for a Chinese asker."""
    here = at.astimezone(ctx.zone)
    year = "" if here.year == ctx.now().year else (f"{here.year}年" if chinese else f"{here.year} ")
    if chinese:
        return f"{year}{here.month}月{here.day}日 {here:%H:%M}"
    return f"{year}{here:%b} {here.day} {here:%H:%M}"


def marked(text: str, terms: tuple[str, ...]) -> str:
    """The message on one line with each match in «…»; a long one cut around the first."""
    flat = " ".join(text.split())
    if not terms:
        return _cut(flat, 0)
    pattern = re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.I)
    first = pattern.search(flat)
    shown = _cut(flat, first.start() if first else 0)
    return pattern.sub(lambda m: f"«{m.group(0)}»", shown)


def _cut(text: str, at: int) -> str:
    if len(text) <= _SHOWN_CHARS:
        return text
    start = max(0, min(at - _SHOWN_CHARS // 3, len(text) - _SHOWN_CHARS))
    head = "…" if start else ""
    tail = "…" if start + _SHOWN_CHARS < len(text) else ""
    return f"{head}{text[start : start + _SHOWN_CHARS].strip()}{tail}"


def line(found: FoundMessage, ctx: MessageContext, terms: tuple[str, ...], chinese: bool) -> str:
    who = found.sender_name or found.sender_id
    return f"• {who} · {local_time(found.at, ctx, chinese)}: {marked(found.text, terms)}"


def _described(query: SearchQuery, chinese: bool) -> str:
    words = " ".join(f"“{t}”" for t in query.terms)
    if query.sender is None:
        return words
    return f"{words} {'来自' if chinese else 'from'} {query.sender}".strip()


def _page_of(words: str) -> tuple[str, int]:
    """('launch date', 2) for 'launch date 2'. A lone number, or one of 3 digits or more
    ("room 101"), is a word to find; a quoted one too."""
    head, _, last = words.strip().rpartition(" ")
    if head.strip() and last.isascii() and last.isdigit() and 1 <= int(last) <= _LAST_PAGE:
        return head.strip(), int(last)
    return words.strip(), 1


_USAGE = PlainSentence(
    'Usage: /find <words> (all must match), "a phrase", from:@name, and a page number '
    "last: /find launch date 2",
    "用法：/find 关键词（都要出现），“一个短语”，from:@名字，最后加页码：/find 预算 2",
)


@tool_function(
    name="chat_find",
    command="find",
    effect="read",
    for_model=False,  # the model has chat_search, which answers instead of listing
    description="List this chat's messages that contain the words, newest first.",
)
async def chat_find(ctx: MessageContext, args: FindArgs, search: SearchReader) -> FunctionResult:
    chinese = is_chinese(args.words)
    words, page = _page_of(args.words)
    query = parse_query(words)
    if query.empty:
        return FunctionResult.refused(_USAGE.for_message(args.words), "refused")
    # Commands are not searched; "@groupmate /find …" is, unless it is this very one.
    asked = Asked(ctx.sender_id, ctx.text) if ctx.text else None
    offset = (page - 1) * PAGE
    found = await search.search(ctx.chat_id, query, limit=PAGE + 1, offset=offset, asked=asked)
    described = _described(query, chinese)
    if not found:
        if page > 1:
            text = PlainSentence(
                f"No page {page}: fewer messages match {described}. To find the number "
                f'itself, quote it: /find {words} "{page}"',
                f"没有第 {page} 页：匹配 {described} 的消息没有那么多。要找这个数字本身，"
                f'请加引号：/find {words} "{page}"',
            )
        else:
            text = PlainSentence(
                f"🔎 Nothing in this chat matches {described}.",
                f"🔎 这个聊天里没有找到 {described}。",
            )
        return FunctionResult.direct(text.for_message(args.words), data={"found": 0})
    more = len(found) > PAGE
    shown = found[:PAGE]
    head = PlainSentence(
        f"🔎 {described}, newest first" + (f" (page {page})" if page > 1 else "") + ":",
        f"🔎 {described}，最新的在前" + (f"（第 {page} 页）" if page > 1 else "") + "：",
    )
    lines = [head.for_message(args.words)]
    lines += [line(m, ctx, query.terms, chinese) for m in shown]
    if more:
        lines.append(
            PlainSentence(
                f"More: /find {words} {page + 1}", f"更多：/find {words} {page + 1}"
            ).for_message(args.words)
        )
    return FunctionResult.direct("\n".join(lines), data={"found": len(shown), "more": more})


def _numbered(question: str, found: list[FoundMessage], ctx: MessageContext) -> str:
    lines = "\n".join(
        f"[{n}] {m.sender_name or m.sender_id}, {local_time(m.at, ctx, False)}: {m.text}"
        for n, m in enumerate(found, 1)
    )
    return f"Question: {question}\n\nChat messages:\n{lines}"


def cited_answer(answer: str, found: list[FoundMessage], ctx: MessageContext, chinese: bool) -> str:
    """The model's answer, then the messages it cites (sender, time, words). A mark that
    points at no message found is dropped; an answer that cites none is followed by all
    of them, so that every answer shows where it comes from."""
    cited = sorted({int(n) for n in _CITATION.findall(answer) if 1 <= int(n) <= len(found)})
    body = _CITATION.sub(lambda m: m.group(0) if 1 <= int(m.group(1)) <= len(found) else "", answer)
    numbers = cited or list(range(1, len(found) + 1))
    sources = [
        f"[{n}] {found[n - 1].sender_name or found[n - 1].sender_id}, "
        f"{local_time(found[n - 1].at, ctx, chinese)}: {marked(found[n - 1].text, ())}"
        for n in numbers
    ]
    return "\n".join([body.strip(), "", *sources])


@tool_function(
    name="chat_search",
    effect="read",
    description=(
        "Search this chat's past messages to answer a question about what was said "
        "('when did we say the launch is?', '上次说的预算是多少'). The answer cites the "
        "messages found; if none match, it says so. Never answer such a question without it."
    ),
    examples=[
        Example("when did we say the launch is?", {"query": "launch"}),
        Example("上次说的预算是多少？", {"query": "预算"}),
        Example("what did bob say about the venue?", {"query": "venue from:@bob"}),
    ],
    timeout=60,
)
async def chat_search(
    ctx: MessageContext, args: ChatSearchArgs, search: SearchReader, llm: TextCompleter | None
) -> FunctionResult:
    question = ctx.text or args.query
    chinese = is_chinese(question)
    query = parse_query(args.query)
    if query.empty:
        return FunctionResult.refused(_USAGE.for_message(question), "refused")
    # The question is in the log too: it is no answer to itself.
    asked = Asked(ctx.sender_id, ctx.text) if ctx.text else None
    found = await search.search(ctx.chat_id, query, limit=CITED, asked=asked)
    if not found:
        # Said here, not by the model: nothing it could make up gets through.
        nothing = PlainSentence(
            f"🔎 I found nothing in this chat about {_described(query, False)}, so I can't say.",
            f"🔎 这个聊天的记录里没有找到 {_described(query, True)}，所以我没法回答。",
        )
        return FunctionResult.direct(nothing.for_message(question), data={"found": 0})
    listing = "\n".join(line(m, ctx, query.terms, chinese) for m in found)
    data = {"found": len(found)}
    if llm is None:
        return FunctionResult.direct(listing, data=data)
    try:
        answer = await llm.complete_text(_ANSWER_PROMPT, _numbered(question, found, ctx))
    except LLMUnavailableError as exc:
        return FunctionResult.direct(f"{exc.user_message}\n{listing}", data=data)
    if not answer.strip():
        return FunctionResult.direct(listing, data=data)
    return FunctionResult.direct(cited_answer(answer, found, ctx, chinese), data=data)


__all__ = ["chat_find", "chat_forget", "chat_search", "message_search", "plugin", "search_reader"]
