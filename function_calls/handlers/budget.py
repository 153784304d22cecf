"""`token_budget`: a chat's language-model budget for the day, shown, or changed by an
admin of the chat. The bot's router enforces it (bot/budget.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.reminder_words import format_local
from groupmate.function_calls.handlers.reminders import refused
from groupmate.function_calls.plugins.declare import Plugin
from groupmate.function_calls.registry import tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.services import DailyLimits
from groupmate.storage import ReminderReader, ReminderService, StorageError
from groupmate.storage.usage import UsageLog
from groupmate.storage.vocabulary import SETTING_TOKEN_BUDGET

MAX_LIMIT = 100_000_000

# A built-in family, loaded as any plugin is (`builtins: {budget: false}` leaves it out).
plugin = Plugin("budget")


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    """The configured limits (llm.budget); None: no limit."""

    per_chat: int | None = None
    total: int | None = None


class BudgetArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens_per_day: int | None = Field(
        None, ge=1000, le=MAX_LIMIT, description="admins: this chat's new daily token limit"
    )


async def chat_limit(
    service: ReminderReader | ReminderService, limits: DailyLimits, chat_id: str
) -> int | None:
    # Checked before every model turn: the cached row (a change in another process
    # shows within the zone cache's seconds; one made here, at once).
    own = (await service.settings_of(chat_id, cached=True)).get(SETTING_TOKEN_BUDGET)
    return own if isinstance(own, int) else limits.per_chat


def next_reset(now: datetime) -> datetime:
    """Budgets count UTC days."""
    return datetime.combine(now.astimezone(UTC).date() + timedelta(days=1), time(), tzinfo=UTC)


@tool_function(
    name="token_budget",
    description="Show this chat's language-model token use today and its daily limit; "
    "a chat admin can set a new limit.",
    examples=["/budget", "/budget 200000"],
)
async def token_budget(
    ctx: MessageContext,
    args: BudgetArgs,
    service: ReminderService,
    usage: UsageLog,
    limits: DailyLimits,
) -> FunctionResult:
    if args.tokens_per_day is not None:
        if ctx.chat_type == "group" and not ctx.is_admin:
            return FunctionResult.refused(
                "Only a group admin can change this chat's budget.", "forbidden"
            )
        try:
            await service.chats.update_settings(
                ctx.chat_id, ctx.chat_type, {SETTING_TOKEN_BUDGET: args.tokens_per_day}
            )
        except StorageError as exc:
            return refused(exc, ctx.text)
    now = ctx.clock()
    spent = await usage.spent(ctx.chat_id, now.astimezone(UTC).date())
    limit = await chat_limit(service, limits, ctx.chat_id)
    shown = "no limit" if limit is None else f"{limit:,} tokens a day"
    lines = [
        f"Language-model use today: {spent.chat:,} tokens in this chat ({shown}); "
        f"resets {format_local(next_reset(now), ctx.zone)} ({ctx.timezone})."
    ]
    if limits.total is not None:
        lines.append(f"The whole bot: {spent.total:,} of {limits.total:,} tokens today.")
    return FunctionResult.direct(
        "\n".join(lines),
        data={"chat": spent.chat, "limit": limit, "total": spent.total},
        changed=args.tokens_per_day is not None,
    )
