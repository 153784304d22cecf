"""The web app's pages (`/` the playground, `/admin` the dashboard) and the API routes
only they need: the bot's facts for a page, a chat's history page by page, and the live
events of the web chats.

The pages are static files (no build step, no secrets in them); everything they show
comes from the token-protected `/v1` API, which the page calls with the token the user
typed in (kept in the browser's session storage).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import FileResponse, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from groupmate.bot.adapters.api_models import ButtonOut, buttons_out
from groupmate.bot.adapters.http_calls import ActingAs, History, Reminders, RunningBot
from groupmate.bot.presses import ButtonData, Press
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
    reminder, a progress line), as `event: message` with the message as JSON (its
    buttons too); a message a press changed, as `event: edit` with the same `id`."""
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
                yield f"event: {event.name}\ndata: {json.dumps(event.as_json())}\n\n"

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(stream(), media_type="text/event-stream", headers=headers)


class PressIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    data: str = Field(min_length=1, max_length=64, description="the button's data")
    press_id: str = Field(
        min_length=16,
        max_length=100,
        pattern=r"^[A-Za-z0-9-]+$",
        description="A nonce the page makes for this press: a retry of the request "
        "carries the same one, and the press acts once.",
    )
    message_id: str | None = Field(
        None, max_length=255, description="the message pressed on: redrawn in place"
    )


class MessageNow(BaseModel):
    """A message as a press left it: its text and its remaining buttons."""

    text: str
    buttons: list[list[ButtonOut]]


class PressOut(BaseModel):
    ok: bool
    # For the person who pressed alone ("" for nothing to say).
    answer: str
    # A replay of a press already acted on: nothing changed.
    repeated: bool
    update: MessageNow | None


@router.post("/v1/chats/{chat_id}/presses")
async def press(
    chat_id: str, body: PressIn, person: ActingAs, reminders: Reminders, bot: RunningBot
) -> PressOut:
    """A press of a button in the playground, as the person the page speaks as
    (`as_user`: the chat and the presser never come from the button's data). A refusal
    (a reminder that is gone, another chat's, not theirs to change) is `ok` false with
    the reason in `answer`, and nothing changed. With `message_id`, the open pages
    redraw that message as the press left it."""
    if not chat_id.startswith(WEB_PREFIX):
        # Other platforms' presses come from the platform, verified as its events are.
        raise HTTPException(404, f"only the playground's {WEB_PREFIX} chats take presses here")
    if person is None:
        raise HTTPException(422, "say who pressed: as_user (and as_name)")
    data = ButtonData.decode(body.data)
    if data is None:
        raise HTTPException(422, "that is not one of the bot's buttons")
    pressed = Press(
        chat_id=chat_id,
        chat_type=await reminders.chat_type_of(chat_id),
        sender_id=person.user_id,
        sender_name=person.name or person.user_id,
        data=data,
        # The page's nonce, within its chat: the same nonce elsewhere is another press.
        press_id=f"web:{hashlib.sha256(chat_id.encode()).hexdigest()[:16]}:{body.press_id}",
        message_id=body.message_id,
        sender_is_admin=person.admin,  # the page's Admin switch, as for its other calls
    )
    outcome = await bot.press(pressed)
    update = outcome.update
    if update is not None and body.message_id is not None and bot.live is not None:
        bot.live.edit(body.message_id, update)
    return PressOut(
        ok=outcome.ok,
        answer=outcome.answer,
        repeated=outcome.repeated,
        update=None
        if update is None
        else MessageNow(text=update.text, buttons=buttons_out(update.buttons)),
    )
