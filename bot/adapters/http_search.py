"""`GET /v1/chats/{chat_id}/search`: a chat's messages that match, newest first, in the
query language of `/find` (words, "phrases", from:@name). Behind the `/v1` bearer token,
like the chat's history; it reads that one chat only."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel

from groupmate.bot.adapters.http_calls import Search
from groupmate.storage.search import parse_query


class SearchHitOut(BaseModel):
    message_id: str | None
    sender_id: str
    sender_name: str
    text: str
    at: str


router = APIRouter()


@router.get("/v1/chats/{chat_id}/search")
async def search(
    chat_id: str,
    q: Annotated[str, Query(min_length=1, max_length=300)],
    found_in: Search,
    before: Annotated[str | None, Query(max_length=255)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> list[SearchHitOut]:
    """Messages of this chat that match `q` (all words, "quoted phrases",
    from:@name), newest first. `before` pages back: the `message_id` of the last
    result (exact), or a time (ISO 8601; only messages said before it)."""
    query = parse_query(q)
    if query.empty:
        raise HTTPException(422, "q names nothing to find")
    position: int | None = None
    said_before = None if before is None else _time(before)
    if before is not None and said_before is None:
        position = await found_in.position_of(chat_id, before)
        if position is None:
            raise HTTPException(404, "before: no such message in this chat")
    hits = await found_in.search(
        chat_id, query, limit=limit, before=position, said_before=said_before
    )
    return [
        SearchHitOut(
            message_id=m.message_id,
            sender_id=m.sender_id,
            sender_name=m.sender_name,
            text=m.text,
            at=m.at.isoformat(),
        )
        for m in hits
    ]


def _time(value: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        raise HTTPException(422, "before: a time needs its offset (e.g. 2026-03-03T14:05Z)")
    return moment
