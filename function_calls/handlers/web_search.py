"""`web_search`: a concise answer with numbered sources, from the configured provider."""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from function_calls.context import MessageContext
from function_calls.registry import Example, tool_function
from function_calls.result import FunctionResult
from function_calls.search import SearchError
from function_calls.services import required

_MAX_SOURCES = 5


class SearchArgs(BaseModel):
    """What to look up."""

    query: str = Field(min_length=2, max_length=300, description="the search query")


def format_answer(text: str, sources: list[tuple[str, str]]) -> str:
    shown = sources[:_MAX_SOURCES]
    # Citation marks beyond the sources we list would point nowhere.
    body = re.sub(r"\[(\d+)\]", lambda m: m.group(0) if int(m.group(1)) <= len(shown) else "", text)
    lines = [body.strip()]
    if shown:
        lines.append("")
        lines.extend(f"[{n}] {title} - {url}" for n, (title, url) in enumerate(shown, 1))
    return "\n".join(lines)


@tool_function(
    name="web_search",
    description="Search the web for current information and answer with numbered sources.",
    examples=[Example("search for the latest Python release", {"query": "latest Python release"})],
    requires=["search"],
    timeout=45,
)
async def web_search(ctx: MessageContext, args: SearchArgs) -> FunctionResult:
    provider = required(ctx.services.search, "search")
    progress = ctx.services.progress
    if progress is not None:
        await progress(f"🔎 Searching for “{args.query}”…")
    try:
        answer = await provider.search(args.query)
    except SearchError as exc:
        return FunctionResult.direct(f"🔎 Search failed: {exc}. Please try again later.")
    if not answer.text:
        return FunctionResult.direct(f"🔎 I found nothing useful for “{args.query}”.")
    sources = [(source.title, source.url) for source in answer.sources]
    reply = format_answer(answer.text, sources)
    return FunctionResult.direct(reply, data={"sources": len(sources)})
