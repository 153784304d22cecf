"""The admin API behind the dashboard: chats, reminders across chats, deliveries (with a
retry), the tools as the model sees them (with a run form's endpoint), model activity,
token usage against the budgets, and status. All under /v1, behind the token."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse
from pydantic_core import to_jsonable_python

from groupmate.bot.adapters.admin_models import (
    ActivityOut,
    ChatOut,
    ChatReminderOut,
    ChatSpend,
    DayOut,
    PluginOut,
    RetryOut,
    RunIn,
    RunOut,
    StatusOut,
    ToolOut,
    TurnOut,
    UsageDayOut,
    UsageOut,
    WaitingOut,
)
from groupmate.bot.adapters.api_models import reminder_out
from groupmate.bot.adapters.http_calls import (
    Person,
    Refused,
    Reminders,
    RunningBot,
    Store,
    api_context,
    call_tool,
)
from groupmate.bot.status import config_lines
from groupmate.bot.waiting import by_platform
from groupmate.function_calls import (
    InvalidArgumentsError,
    ToolInvocationError,
)
from groupmate.storage import current_revision
from groupmate.storage.overview import DeliveryRecord
from groupmate.storage.vocabulary import DeliveryOutcome, ReminderStatus

# Who `POST /v1/tools/{name}/run` acts as when the caller names nobody: an admin of the
# chat, in permission checks and the audit log.
DASHBOARD_USER = "dashboard"

# The admin API's routes, under /v1.
router = APIRouter(prefix="/v1")


@router.get("/chats")
async def chats(service: Reminders, bot: RunningBot) -> list[ChatOut]:
    """Every chat the bot knows, with its size, last activity and reminder count."""
    summaries = await service.chat_summaries()
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


@router.get("/reminders")
async def reminders(
    service: Reminders, chat_id: str | None = None, status: ReminderStatus | None = None
) -> list[ChatReminderOut]:
    """Reminders across chats (or of one): the live ones soonest first, then (for any
    status, or asked for) the done and cancelled ones, the latest first."""
    ids = [chat_id] if chat_id else [s.chat_id for s in await service.chat_summaries()]
    live: list[ChatReminderOut] = []
    ended: list[ChatReminderOut] = []
    for one in ids:
        views, _ = await service.list_for_chat(one, limit=1000)
        if status is None or status in ("done", "cancelled"):
            views += await service.finished_for_chat(one)
        last = await service.last_outcomes([v.id for v in views if v.action is not None])
        for view in views:
            shown = reminder_out(view, last.get(view.id))
            out = ChatReminderOut(chat_id=one, **shown.model_dump())
            if status is None or out.status == status:
                (live if out.status in ("active", "paused") else ended).append(out)
    far = datetime.max.replace(tzinfo=UTC)
    return sorted(live, key=lambda r: r.next_fire_at or far) + ended


@router.get("/deliveries")
async def deliveries(
    service: Reminders,
    chat_id: str | None = None,
    outcome: DeliveryOutcome | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> list[DeliveryRecord]:
    """Delivery history, newest first: sent, late, skipped and failed, with errors."""
    return await service.deliveries(chat_id=chat_id, outcome=outcome, limit=limit)


@router.post("/deliveries/{delivery_id}/retry", responses={409: {}, 503: {}})
async def retry(delivery_id: int, service: Reminders, bot: RunningBot) -> Any:
    """Send a failed delivery again now, as the `delivery_retry` tool in its chat
    (through the invoker: audited); answers its new outcome."""
    if not service.delivers:
        error = "this process does not deliver reminders"
        return JSONResponse({"error": error}, status_code=503)
    chat_id = await service.delivery_chat(delivery_id)
    if chat_id is None:
        error = "only a failed delivery of a reminder that still exists can be retried"
        return JSONResponse({"error": error}, status_code=409)
    ctx = await api_context(bot, chat_id, source="dashboard")
    try:
        result = await call_tool(bot, ctx, "delivery_retry", {"delivery_id": delivery_id})
    except Refused as exc:
        return exc.response
    return RetryOut(outcome=result.value)


@router.delete("/chats/{chat_id}", responses={403: {}})
async def delete_chat(chat_id: str, bot: RunningBot) -> Any:
    """Delete everything stored for one chat (reminders, messages, usage, audit
    entries, settings, plugins' values), as the `chat_data_delete` tool in that chat
    (through the invoker: audited); answers what went."""
    ctx = await api_context(bot, chat_id)
    try:
        result = await call_tool(bot, ctx, "chat_data_delete", {"confirm": True})
    except Refused as exc:
        return exc.response
    return result.data


@router.get("/tools")
async def tools(bot: RunningBot) -> list[ToolOut]:
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


@router.post("/tools/{name}/run")
async def run_tool(name: str, body: RunIn, bot: RunningBot) -> RunOut:
    """Run a tool in a chat through the bot's invoker: the same visibility, policy,
    validation, time limit and audit as for the model.

    It acts as the sender `dashboard` (named "Dashboard" in replies: "Dashboard, you
    voted for pizza."), an admin of the chat; with `as_user` (and `as_name`,
    `as_admin`) it acts as that member instead, with the rights their own message would
    have. The audit log has the call with source `dashboard` and the sender it acted as.
    """
    person = None if body.as_user is None else Person(body.as_user, body.as_name, body.as_admin)
    ctx = await api_context(
        bot,
        body.chat_id,
        sender_id=DASHBOARD_USER,
        sender_name="Dashboard",
        chat_type=body.chat_type,
        source="dashboard",
        person=person,
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


@router.get("/activity")
async def activity(
    bot: RunningBot, chat_id: str | None = None, limit: Annotated[int, Query(ge=1, le=500)] = 50
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


@router.get("/usage")
async def usage(bot: RunningBot, days: Annotated[int, Query(ge=1, le=90)] = 7) -> UsageOut:
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


@router.get("/waiting")
async def waiting(service: Reminders) -> list[WaitingOut]:
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
        for found in by_platform(await service.waiting())
    ]


@router.get("/status")
async def status(service: Reminders, database: Store, bot: RunningBot) -> StatusOut:
    """What `groupmate check` prints, the adapters' connections, the MCP servers, the
    plugins (loaded, or failed and why) and the scheduler's health."""
    reminders = bot.reminders
    assert reminders is not None  # `Reminders` answered 503 otherwise
    try:
        revision: str | None = await asyncio.to_thread(current_revision, database)
    except Exception as exc:
        revision = f"unreachable ({type(exc).__name__})"
    scheduler = reminders.scheduler
    health = await service.scheduler_health()
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
        waiting=await waiting(service),
    )
