"""`web_search`: an answer with numbered sources. A search model's own answer is passed
on; raw results (SearXNG, Tavily, Brave) become a short answer written by the LLM from
the top results only, or, without an LLM, a list of them."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.deps import Progress
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.plugins.declare import Plugin
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.search import (
    SearchAuthError,
    SearchError,
    SearchLimitError,
    Source,
    WebSearch,
)
from groupmate.function_calls.services import TextCompleter

MAX_SOURCES = 5
_CITATION = re.compile(r"\[(\d+)\]")
_ANSWER_PROMPT = (
    "Answer the question in at most four sentences, using only the numbered search "
    "results below. Cite the results you use as [1], [2] and so on, right after the fact "
    "they support. If the results do not answer the question, say so. Write in the "
    "language of the question."
)

# A built-in family, loaded as any plugin is (`builtins: {search: false}` leaves it out).
plugin = Plugin("search")


class SearchArgs(BaseModel):
    """What to look up."""

    query: str = Field(min_length=2, max_length=300, description="the search query")


def format_answer(text: str, sources: list[Source]) -> str:
    """The answer, then its numbered sources; a citation mark beyond the listed sources
    would point nowhere, so it is dropped."""
    shown = sources[:MAX_SOURCES]
    body = _CITATION.sub(lambda m: m.group(0) if 1 <= int(m.group(1)) <= len(shown) else "", text)
    lines = [body.strip()]
    if shown:
        lines.append("")
        lines.extend(f"[{n}] {source.title} - {source.url}" for n, source in enumerate(shown, 1))
    return "\n".join(lines)


def list_results(query: str, sources: list[Source]) -> str:
    """Without an LLM: the top results, each with its title, address and snippet."""
    lines = [f"🔎 Top results for “{query}”:"]
    for n, source in enumerate(sources[:MAX_SOURCES], 1):
        lines.append(f"[{n}] {source.title}\n{source.url}")
        if source.snippet:
            lines.append(source.snippet)
    return "\n".join(lines)


def numbered_results(query: str, sources: list[Source]) -> str:
    """What the LLM is given: the question and the top results, numbered as cited."""
    results = "\n\n".join(
        f"[{n}] {source.title} ({source.url})\n{source.snippet}"
        for n, source in enumerate(sources[:MAX_SOURCES], 1)
    )
    return f"Question: {query}\n\nSearch results:\n{results}"


async def written_answer(llm: TextCompleter, query: str, sources: list[Source]) -> str:
    return await llm.complete_text(_ANSWER_PROMPT, numbered_results(query, sources))


@tool_function(
    name="web_search",
    effect="external",
    description="Search the web for current information and answer with numbered sources.",
    examples=[Example("search for the latest Python release", {"query": "latest Python release"})],
    timeout=60,
)
async def web_search(
    ctx: MessageContext,
    args: SearchArgs,
    search: WebSearch,
    progress: Progress | None,
    llm: TextCompleter | None,
) -> FunctionResult:
    if progress is not None:
        await progress(f"🔎 Searching for “{args.query}”…")
    try:
        found = await search.search(ctx.chat_id, args.query)
    except SearchLimitError as exc:
        return FunctionResult.direct(f"🔎 Not searching now: {exc}.")
    except SearchAuthError as exc:  # the operator's to fix: trying later won't help
        return FunctionResult.direct(f"🔎 Search failed: {exc}.")
    except SearchError as exc:
        return FunctionResult.direct(f"🔎 Search failed: {exc}. Please try again later.")
    answer = found.answer
    sources = answer.sources[:MAX_SOURCES]
    data = {"sources": len(sources), "provider": found.provider, "cached": found.cached}
    if answer.text:  # a search model's own answer
        return FunctionResult.direct(format_answer(answer.text, sources), data=data)
    if not sources:
        return FunctionResult.direct(f"🔎 I found nothing for “{args.query}”.", data=data)
    if llm is None:
        return FunctionResult.direct(list_results(args.query, sources), data=data)
    try:
        text = await written_answer(llm, args.query, sources)
    except LLMUnavailableError as exc:
        listing = list_results(args.query, sources)
        return FunctionResult.direct(f"{exc.user_message}\n{listing}", data=data)
    if not text.strip():
        return FunctionResult.direct(list_results(args.query, sources), data=data)
    return FunctionResult.direct(format_answer(text, sources), data=data)
