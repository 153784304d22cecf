"""Token budgets: the model is not called once a chat's (or the whole bot's) tokens for
the UTC day are spent. The chat is told once, with the time the budget resets; slash
commands keep working, and a chat admin can raise the chat's limit with /budget."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from groupmate.function_calls import MessageContext, TurnResult
from groupmate.function_calls.handlers.budget import BudgetLimits, chat_limit, next_reset
from groupmate.function_calls.handlers.reminder_words import format_local
from groupmate.storage import ReminderService
from groupmate.storage.usage import UsageLog

_MAX_NOTIFIED = 100_000


class TokenBudget:
    def __init__(
        self,
        limits: BudgetLimits,
        usage: UsageLog,
        reminders: ReminderService,
        clock: Callable[[], datetime],
    ) -> None:
        self._limits = limits
        self._usage = usage
        self._reminders = reminders
        self._clock = clock
        self._notified: set[tuple[str, object]] = set()  # (chat, day) told already

    async def refusal(self, ctx: MessageContext) -> str | None:
        """None while the model may be called; else the notice to send ("" once told,
        in a group: a spent budget is said once a day, not to every message)."""
        limit = await chat_limit(self._reminders, self._limits, ctx.chat_id)
        if limit is None and self._limits.total is None:
            return None  # no budget at all (the default): no usage to read
        now = self._clock()
        spent = await self._usage.spent(ctx.chat_id, now.date())  # the clock is UTC
        if limit is not None and spent.chat >= limit:
            whose = "this chat's"
        elif self._limits.total is not None and spent.total >= self._limits.total:
            whose = "the bot's"
        else:
            return None
        key = (ctx.chat_id, now.date())
        if key in self._notified and ctx.chat_type == "group":
            return ""
        if len(self._notified) > _MAX_NOTIFIED:
            self._notified.clear()
        self._notified.add(key)
        reset = next_reset(now)
        return (
            f"I've used up {whose} language-model budget for today; it resets at "
            f"{format_local(reset, ctx.zone)} ({ctx.timezone}). Slash commands like "
            "/remind still work."
        )

    async def record(self, ctx: MessageContext, result: TurnResult) -> None:
        usage = result.usage
        if usage.requests:
            await self._usage.record(
                ctx.chat_id,
                self._clock().date(),
                prompt=usage.prompt_tokens,
                completion=usage.completion_tokens,
                requests=usage.requests,
                estimated=usage.estimated_requests,
            )
