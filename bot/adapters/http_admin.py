"""The admin API behind the dashboard: chats, reminders across chats, deliveries (with a
retry), the tools as the model sees them (with a run form's endpoint), model activity,
token usage against the budgets, and status. All under /v1, behind the token."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import to_jsonable_python

from groupmate.bot.adapters.api_models import ReminderOut, reminder_out
from groupmate.bot.adapters.http_calls import Refused, api_context, call_tool
from groupmate.bot.app import Bot
from groupmate.bot.status import config_lines
from groupmate.bot.waiting import by_platform
from groupmate.function_calls import (
    Effect,
    InvalidArgumentsError,
    InvocationOutcome,
    Scope,
    ToolInvocationError,
    Who,
)
from groupmate.function_calls.vocabulary import PluginState
from groupmate.storage import ReminderService, current_revision
from groupmate.storage.overview import DeliveryRecord
from groupmate.storage.vocabulary import ChatType, DeliveryOutcome, ReminderStatus


class ChatOut(BaseModel):
    chat_id: str
    platform: str = Field(description="the chat id's prefix: tg, mx, qq, web, or api")
    chat_type: ChatType | None
    timezone: str
    messages: int
    last_activity: datetime | None
    reminders: int


class ChatReminderOut(ReminderOut):
    chat_id: str


class RetryOut(BaseModel):
    outcome: DeliveryOutcome


class ToolOut(BaseModel):
    name: str
    description: str
    parameters: dict[str, Any]
    scope: Scope
    admin_only: bool
    source: Literal["groupmate", "remote"]
    effect: Effect = Field(description="read, write (audited) or external (audited)")
    who: Who = Field(description="who may call it, by the tools policy")


class RunIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chat_id: str = Field(min_length=1, max_length=255)
    chat_type: ChatType = "group"
    arguments: dict[str, Any] = Field(default_factory=dict)


class RunOut(BaseModel):
    outcome: InvocationOutcome
    reply: str | None = None
    data: Any = None
    error: str | None = None
    issues: list[dict[str, str]] = Field(default_factory=list)


class TurnOut(BaseModel):
    id: int
    chat_id: str
    sender_id: str
    at: datetime
    tool_mode: str
    latency_ms: int
    llm_calls: int
    repairs: int
    prompt_tokens: int
    completion_tokens: int
    estimated: bool
    calls: list[dict[str, Any]]
    # The tools the message was offered, best first, and why: {tool, score, why}.
    offered: list[dict[str, Any]] = []
    question: str
    reply: str
    error: str | None


class DayOut(BaseModel):
    day: date
    turns: int
    tool_calls: int
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int


class ActivityOut(BaseModel):
    turns: list[TurnOut]
    days: list[DayOut]


class ChatSpend(BaseModel):
    chat_id: str
    tokens: int


class UsageDayOut(BaseModel):
    day: date
    tokens: int
    requests: int
    chats: list[ChatSpend]


class UsageOut(BaseModel):
    tokens_per_chat_per_day: int | None
    tokens_per_day: int | None
    days: list[UsageDayOut]
    top_chats: list[ChatSpend] = Field(description="the most spending chats over the period")


class PluginOut(BaseModel):
    """A plugin as /v1/status and the dashboard show it: never its settings."""

    name: str
    module: str
    state: PluginState
    version: str | None
    tools: list[str]
    error: str | None
    builtin: bool


class WaitingOut(BaseModel):
    """Due reminders of one platform that no running process delivers (`bot.waiting`)."""

    platform: str
    chats: list[str]
    reminders: int
    due_since: datetime
    advice: str


class StatusOut(BaseModel):
    lines: list[str]
    adapters: dict[str, Any]
    mcp_servers: list[dict[str, Any]]
    plugins: list[PluginOut]
    scheduler: dict[str, Any]
    waiting: list[WaitingOut]


def admin_routes(bot: Bot) -> APIRouter:
    routes = APIRouter(prefix="/v1")

    def service() -> ReminderService:
        assert bot.reminders is not None
        return bot.reminders

    @routes.get("/chats")
    async def chats() -> list[ChatOut]:
        """Every chat the bot knows, with its size, last activity and reminder count."""
        summaries = await service().chat_summaries()
        return [
            ChatOut(
                chat_id=s.chat_id,
                platform=s.chat_id.split(":", 1)[0] if ":" in s.chat_id else "api",
                chat_type=s.chat_type,
                timezone=s.timezone or bot.config.bot.timezone,
                messages=s.messages,
                last_activity=s.last_activity,
                reminders=s.reminders,
            )
            for s in summaries
        ]

    @routes.get("/reminders")
    async def reminders(
        chat_id: str | None = None, status: ReminderStatus | None = None
    ) -> list[ChatReminderOut]:
        """Reminders across chats (or of one): the live ones soonest first, then (for any
        status, or asked for) the done and cancelled ones, the latest first."""
        ids = [chat_id] if chat_id else [s.chat_id for s in await service().chat_summaries()]
        live: list[ChatReminderOut] = []
        ended: list[ChatReminderOut] = []
        for one in ids:
            views, _ = await service().list_for_chat(one, limit=1000)
            if status is None or status in ("done", "cancelled"):
                views += await service().finished_for_chat(one)
            last = await service().last_outcomes([v.id for v in views if v.action is not None])
            for view in views:
                shown = reminder_out(view, last.get(view.id))
                out = ChatReminderOut(chat_id=one, **shown.model_dump())
                if status is None or out.status == status:
                    (live if out.status in ("active", "paused") else ended).append(out)
        far = datetime.max.replace(tzinfo=UTC)
        return sorted(live, key=lambda r: r.next_fire_at or far) + ended

    @routes.get("/deliveries")
    async def deliveries(
        chat_id: str | None = None,
        outcome: DeliveryOutcome | None = None,
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
    ) -> list[DeliveryRecord]:
        """Delivery history, newest first: sent, late, skipped and failed, with errors."""
        return await service().deliveries(chat_id=chat_id, outcome=outcome, limit=limit)

    @routes.post("/deliveries/{delivery_id}/retry", responses={409: {}, 503: {}})
    async def retry(delivery_id: int) -> Any:
        """Send a failed delivery again now, as the `delivery_retry` tool in its chat
        (through the invoker: audited); answers its new outcome."""
        reminders = service()
        if reminders.scheduler is None:
            error = "this process does not deliver reminders"
            return JSONResponse({"error": error}, status_code=503)
        chat_id = await reminders.delivery_chat(delivery_id)
        if chat_id is None:
            error = "only a failed delivery of a reminder that still exists can be retried"
            return JSONResponse({"error": error}, status_code=409)
        ctx = await api_context(bot, chat_id, source="dashboard")
        try:
            result = await call_tool(bot, ctx, "delivery_retry", {"delivery_id": delivery_id})
        except Refused as exc:
            return exc.response
        return RetryOut(outcome=result.value)

    @routes.delete("/chats/{chat_id}", responses={403: {}})
    async def delete_chat(chat_id: str) -> Any:
        """Delete everything stored for one chat (reminders, messages, usage, audit
        entries, settings, plugins' values), as the `chat_data_delete` tool in that chat
        (through the invoker: audited); answers what went."""
        ctx = await api_context(bot, chat_id)
        try:
            result = await call_tool(bot, ctx, "chat_data_delete", {"confirm": True})
        except Refused as exc:
            return exc.response
        return result.data

    @routes.get("/tools")
    async def tools() -> list[ToolOut]:
        """Every tool, with the schema the model is shown (the full view)."""
        return [
            ToolOut(
                name=tool.name,
                description=tool.model_description(),
                parameters=tool.parameters,
                scope=tool.scope,
                admin_only=tool.admin_only,
                source="remote" if tool.external else "groupmate",
                effect=tool.effect,
                who=bot.policy.who(tool.name, tool.effect),
            )
            for tool in bot.registry
        ]

    @routes.post("/tools/{name}/run")
    async def run_tool(name: str, body: RunIn) -> RunOut:
        """Run a tool in a chat, as an admin of it, through the bot's invoker: the same
        visibility, policy, validation, time limit and audit as for the model."""
        ctx = await api_context(
            bot,
            body.chat_id,
            sender_id="dashboard",
            sender_name="Dashboard",
            chat_type=body.chat_type,
            source="dashboard",
        )
        try:
            result = await bot.invoker.run(ctx, name, body.arguments)
        except InvalidArgumentsError as exc:
            issues = [{"path": i.path, "problem": i.problem} for i in exc.issues]
            return RunOut(outcome=exc.outcome, error=str(exc), issues=issues)
        except ToolInvocationError as exc:
            return RunOut(outcome=exc.outcome, error=str(exc))
        data = to_jsonable_python(result.data, fallback=str)
        if result.failure is not None:
            return RunOut(outcome="refused", reply=result.reply, data=data, error=result.reply)
        return RunOut(outcome="ok", reply=result.reply, data=data)

    @routes.get("/activity")
    async def activity(
        chat_id: str | None = None, limit: Annotated[int, Query(ge=1, le=500)] = 50
    ) -> ActivityOut:
        """The newest model turns, with their tool calls, and totals per UTC day."""
        assert bot.turns is not None
        rows = await bot.turns.recent(chat_id=chat_id, limit=limit)
        turns = [TurnOut.model_validate(row, from_attributes=True) for row in rows]
        days: dict[date, DayOut] = {}
        for turn in turns:
            day = turn.at.astimezone(UTC).date()
            total = days.setdefault(
                day,
                DayOut(
                    day=day,
                    turns=0,
                    tool_calls=0,
                    llm_calls=0,
                    prompt_tokens=0,
                    completion_tokens=0,
                ),
            )
            total.turns += 1
            total.tool_calls += len(turn.calls)
            total.llm_calls += turn.llm_calls
            total.prompt_tokens += turn.prompt_tokens
            total.completion_tokens += turn.completion_tokens
        return ActivityOut(turns=turns, days=sorted(days.values(), key=lambda d: d.day))

    @routes.get("/usage")
    async def usage(days: Annotated[int, Query(ge=1, le=90)] = 7) -> UsageOut:
        """Tokens per chat and UTC day against the budgets, and the chats spending most."""
        assert bot.turns is not None
        since = bot.clock().astimezone(UTC).date() - timedelta(days=days - 1)
        rows = await bot.turns.usage(since)
        per_day: dict[date, list[Any]] = defaultdict(list)
        per_chat: dict[str, int] = defaultdict(int)
        for row in rows:
            per_day[row.day].append(row)
            per_chat[row.chat_id] += row.prompt_tokens + row.completion_tokens
        budget = bot.config.llm.budget
        return UsageOut(
            tokens_per_chat_per_day=budget.tokens_per_chat_per_day,
            tokens_per_day=budget.tokens_per_day,
            days=[
                UsageDayOut(
                    day=day,
                    tokens=sum(r.prompt_tokens + r.completion_tokens for r in found),
                    requests=sum(r.requests for r in found),
                    chats=[
                        ChatSpend(chat_id=r.chat_id, tokens=r.prompt_tokens + r.completion_tokens)
                        for r in found
                    ],
                )
                for day, found in sorted(per_day.items(), reverse=True)
            ],
            top_chats=[
                ChatSpend(chat_id=chat, tokens=tokens)
                for chat, tokens in sorted(per_chat.items(), key=lambda i: -i[1])[:10]
            ],
        )

    @routes.get("/waiting")
    async def waiting() -> list[WaitingOut]:
        """Per platform, the due reminders no running process delivers: they wait (never
        failed for it) until a process that serves the platform runs."""
        return [
            WaitingOut(
                platform=found.platform,
                chats=list(found.chats),
                reminders=found.reminders,
                due_since=found.due_since,
                advice=found.advice,
            )
            for found in by_platform(await service().waiting())
        ]

    @routes.get("/status")
    async def status() -> StatusOut:
        """What `groupmate check` prints, the adapters' connections, the MCP servers, the
        plugins (loaded, or failed and why) and the scheduler's health."""
        reminders = service()
        database = reminders.database
        try:
            revision: str | None = await asyncio.to_thread(current_revision, database)
        except Exception as exc:
            revision = f"unreachable ({type(exc).__name__})"
        scheduler = reminders.scheduler
        health = await reminders.scheduler_health()
        watchdog = bot.config.reminders.policy().watchdog_interval
        return StatusOut(
            lines=config_lines(bot.config, database.safe_url, revision, context=bot.llm_context),
            adapters={adapter.name: adapter.status() for adapter in bot.adapters},
            mcp_servers=[
                {"name": s.label, "state": s.state, "tools": len(s), "restarts": s.restarts}
                for s in (bot.mcp_tools.servers if bot.mcp_tools else [])
            ],
            plugins=[
                PluginOut(
                    name=p.name,
                    module=p.module,
                    state=p.state,
                    version=p.version,
                    tools=list(p.tools),
                    error=p.error,
                    builtin=p.builtin,
                )
                for p in bot.plugins
            ],
            scheduler={
                "running": scheduler is not None,
                "planned_timers": scheduler.planned if scheduler is not None else 0,
                "watchdog_interval_s": watchdog.total_seconds(),
                **health,
            },
            waiting=await waiting(),
        )

    return routes
