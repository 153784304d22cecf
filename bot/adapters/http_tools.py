"""The REST routes of the tools policy and the audit log, behind the API token:

- `GET /v1/chats/{chat_id}/tools`: each tool, its effect, who may call it, and whether
  it is offered in the chat (and if not, why).
- `PUT /v1/chats/{chat_id}/tools` `{"off": [...], "on": [...]}`: a chat admin's switch,
  as `/tools off NAME` in the chat: the `chat_tools` tool through the invoker.
- `GET /v1/audit?chat_id=&tool=&since=&before=&limit=`: who made the bot do what,
  newest first; `next_before` pages back.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query
from pydantic import BaseModel, ConfigDict, Field

from groupmate.bot.adapters.http_calls import Audit, Refused, RunningBot, api_context, call_tool
from groupmate.bot.contexts import rights
from groupmate.function_calls import Effect, Who
from groupmate.function_calls.errors import HiddenReason
from groupmate.storage.audit import MAX_PAGE, AuditQuery


class ChatToolOut(BaseModel):
    name: str
    effect: Effect
    who: Who
    offered: bool = Field(description="offered in this chat to its members")
    hidden: HiddenReason | None = Field(description="why not: scope, policy, switched_off, ...")


class ToolSwitchIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    off: list[str] | None = None
    on: list[str] | None = None


class AuditOut(BaseModel):
    id: int
    at: datetime
    chat_id: str
    sender_id: str
    sender_name: str
    auth: str = Field(description="platform, token or operator")
    source: str = Field(
        description="model, command, rest, mcp, dashboard, offer, schedule or plugin"
    )
    tool: str
    effect: str
    arguments: dict[str, Any] = Field(description="redacted: secrets masked, long text cut")
    outcome: str
    target: str | None
    target_label: str | None
    detail: str | None


class AuditPageOut(BaseModel):
    entries: list[AuditOut]
    next_before: int | None = Field(description="pass as `before` for the next page")


router = APIRouter(prefix="/v1")


@router.get("/chats/{chat_id}/tools")
async def chat_tools(chat_id: str, bot: RunningBot) -> list[ChatToolOut]:
    """As a member of the chat sees them (the policy's `admins` tools are hidden)."""
    ctx = await api_context(bot, chat_id)
    # A plain member: never one of the bot's admins (a private chat's one member owns it).
    admin = rights((), ctx.sender_id, ctx.chat_type)
    member = dataclasses.replace(ctx, is_admin=admin.is_admin, bot_admin=admin.bot_admin)
    # The bot's one set: every tool it has, and what it offers this member here.
    listing = bot.registry.listing(member)
    return [
        ChatToolOut(
            name=tool.name,
            effect=tool.effect,
            who=bot.policy.who(tool.name, tool.effect),
            offered=tool.name in listing.offered,
            hidden=listing.reason(tool.name),
        )
        for tool in bot.registry
    ]


@router.put("/chats/{chat_id}/tools")
async def switch_tools(chat_id: str, body: ToolSwitchIn, bot: RunningBot) -> Any:
    ctx = await api_context(bot, chat_id)
    raw = body.model_dump(exclude_none=True)
    try:
        result = await call_tool(bot, ctx, "chat_tools", raw)
    except Refused as exc:
        return exc.response
    return {"off": result.value}


@router.get("/audit")
async def audit(
    log: Audit,
    chat_id: str | None = None,
    tool: str | None = None,
    since: datetime | None = None,
    before: Annotated[int | None, Query(ge=1)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 50,
) -> AuditPageOut:
    if since is not None and since.tzinfo is None:
        raise HTTPException(422, "since needs a time zone, e.g. 2026-11-25T09:00:00Z")
    query = AuditQuery(chat_id=chat_id, tool=tool, since=since, before=before, limit=limit)
    entries = await log.page(query)
    rows = [AuditOut.model_validate(e, from_attributes=True) for e in entries]
    next_before = entries[-1].id if len(entries) == limit else None
    return AuditPageOut(entries=rows, next_before=next_before)
