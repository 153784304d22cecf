"""`read_url`: what a linked page says. The page is fetched (never inside the network),
its main text extracted, and summarized by the summary pipeline's map-reduce; without an
LLM, its title and first paragraphs."""

from __future__ import annotations

import asyncio
from typing import Self
from urllib.parse import urlsplit

from pydantic import BaseModel, Field, ValidationInfo, model_validator

from groupmate.function_calls.context import MessageContext, validation_context
from groupmate.function_calls.deps import Progress
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.handlers.summary import summarize
from groupmate.function_calls.links import Article, LinkError, PageFetcher, find_links, read_article
from groupmate.function_calls.plugins.declare import Plugin
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.services import TextCompleter

_MAP_PROMPT = (
    "You summarize part of a web page. Give its main points as a few short bullet points, "
    "in the page's own language. Leave out menus, ads and comments."
)
_REDUCE_PROMPT = (
    "Merge these partial summaries of one web page, in order, into one concise summary: "
    "what it is about and its main points, as a few short bullet points."
)

# A built-in family, loaded as any plugin is (`builtins: {links: false}` leaves it out).
plugin = Plugin("links")


class ReadArgs(BaseModel):
    """The page to read."""

    url: str = Field(
        min_length=10,
        max_length=2000,
        description="the http(s) link to read, exactly as the user sent it",
    )

    @model_validator(mode="after")
    def _a_link_the_user_sent(self, info: ValidationInfo) -> Self:
        ctx = validation_context(info)
        said = ctx.text if ctx is not None else ""
        if ctx is None or not said or said.startswith("/"):
            return self  # a command's or an API call's link is the user's own
        # The model reads only links from the message or the one it replies to: a link
        # it made up, or found in older chat, is not what this user asked for.
        sent = find_links(said) + find_links(ctx.reply_text)
        if self.url.strip() not in sent:
            hint = f": url={sent[0]!r}" if sent else "; this message has none, so call no tool"
            raise ValueError(f"read only a link the user sent{hint}")
        return self


def offline_reply(article: Article) -> str:
    return f"📄 {article.title}\n{article.lead()}{_cut_note(article)}\n\n{article.url}"


def _cut_note(article: Article) -> str:
    return "\n(The page was long; only its first part was read.)" if article.truncated else ""


@tool_function(
    name="read_url",
    effect="external",
    description="Read a web page the user linked (or replied to) and summarize what it says.",
    examples=[
        Example(
            "what does this say? https://news.example.org/bridge-vote",
            {"url": "https://news.example.org/bridge-vote"},
        )
    ],
    timeout=120,
)
async def read_url(
    ctx: MessageContext,
    args: ReadArgs,
    pages: PageFetcher,
    progress: Progress | None,
    llm: TextCompleter | None,
) -> FunctionResult:
    if progress is not None:
        await progress(f"📄 Reading {urlsplit(args.url.strip()).hostname or 'the page'}…")
    try:
        page = await pages.fetch(args.url.strip())
        # Extraction is CPU work on up to 2 MB of HTML: off the event loop.
        article = await asyncio.to_thread(read_article, page)
    except LinkError as exc:
        return FunctionResult.direct(f"📄 I can't read that link: {exc}.")
    data = {"title": article.title, "url": article.url, "truncated": article.truncated}
    if llm is None:
        return FunctionResult.direct(offline_reply(article), data=data)
    try:
        summary = await summarize(llm, article.paragraphs, _MAP_PROMPT, _REDUCE_PROMPT)
    except LLMUnavailableError as exc:
        return FunctionResult.direct(f"{exc.user_message}\n{offline_reply(article)}", data=data)
    reply = f"📄 {article.title}\n{summary.strip()}{_cut_note(article)}\n\nSource: {article.url}"
    return FunctionResult.direct(reply, data=data)
