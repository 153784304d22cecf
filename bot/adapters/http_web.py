"""The web app's pages (`/` the playground, `/admin` the dashboard) and the API routes
only they need: the bot's facts for a page, a chat's history page by page, and the live
events of the web chats.

The pages are static files (no build step, no secrets in them); everything they show
comes from the token-protected `/v1` API, which the page calls with the token the user
typed in (kept in the browser's session storage).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse, StreamingResponse
from pydantic import BaseModel
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from groupmate.bot.adapters.http_calls import History, RunningBot
from groupmate.bot.web_events import WEB_PREFIX

STATIC = Path(__file__).resolve().parent.parent / "web"
_HEARTBEAT = 15.0


class InfoOut(BaseModel):
    bot_name: str
    llm: bool
    web_prefix: str
    timezone: str


class MessageOut(BaseModel):
    id: int
    sender_id: str
    sender_name: str
    text: str
    from_bot: bool
    at: str


class MessagesOut(BaseModel):
    messages: list[MessageOut]
    # Pass as `before` for the next (older) page; null when this was the oldest.
    next_before: int | None


def page_routes() -> list[Mount]:
    return [Mount("/static", app=StaticFiles(directory=STATIC / "static"), name="static")]


router = APIRouter()


@router.get("/", include_in_schema=False)
async def playground() -> FileResponse:
    return FileResponse(STATIC / "playground.html")


@router.get("/admin", include_in_schema=False)
async def dashboard() -> FileResponse:
    return FileResponse(STATIC / "admin.html")


@router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> FileResponse:
    # Browsers ask for it whatever a page links; the pages link the same icon.
    return FileResponse(STATIC / "static" / "icon.svg", media_type="image/svg+xml")


@router.get("/v1/info")
async def info(bot: RunningBot) -> InfoOut:
    """What a page needs to know about the bot: its name, whether natural language
    works (an LLM is configured) or only the offline commands, the web chats'
    prefix and the default time zone."""
    config = bot.config
    return InfoOut(
        bot_name=config.bot.name,
        llm=bot.llm is not None,
        web_prefix=WEB_PREFIX,
        timezone=config.bot.timezone,
    )


@router.get("/v1/chats/{chat_id}/messages")
async def messages(
    chat_id: str,
    history: History,
    before: Annotated[int | None, Query(ge=1)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> MessagesOut:
    """The chat's history, newest page first: each page is oldest first."""
    found = await history.page(chat_id, before=before, limit=limit + 1)
    older = len(found) > limit
    found = found[-limit:]
    return MessagesOut(
        messages=[
            MessageOut(
                id=m.id,
                sender_id=m.sender_id,
                sender_name=m.sender_name,
                text=m.text,
                from_bot=m.from_bot,
                at=m.created_at.isoformat(),
            )
            for m in found
        ],
        next_before=found[0].id if older and found else None,
    )


@router.get(
    "/v1/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def events(request: Request, bot: RunningBot) -> StreamingResponse:
    """Server-sent events: each message the bot sends to a web chat by itself (a
    reminder, a progress line), as `event: message` with the message as JSON."""
    assert bot.live is not None
    live = bot.live

    async def stream() -> AsyncIterator[str]:
        with live.listen() as queue:
            yield ": connected\n\n"
            while not await request.is_disconnected():
                try:
                    event = await asyncio.wait_for(queue.get(), _HEARTBEAT)
                except TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if event is None:  # the bot is closing
                    return
                yield f"event: message\ndata: {json.dumps(event.as_json())}\n\n"

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)
