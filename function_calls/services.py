"""The bot's own services that are protocols rather than classes: a handler asks for
one by type, like any dependency (see function_calls.deps and function_calls.provided)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from groupmate.storage.outgoing import Member
from groupmate.storage.vocabulary import Permission

if TYPE_CHECKING:
    from groupmate.function_calls.context import MessageContext


class ScheduledCommands(Protocol):
    """The chat commands a reminder may run when it fires ("/remind every day at 18:00
    /summary"): the bot's own and its plugins'. `bot.actions.BotCommands` is these."""

    def known(self, command: str) -> bool:
        """Whether `command` (no slash) is a command of this bot at all."""
        ...

    def schedulable(self) -> list[str]:
        """The commands a reminder may run, as "/summary" etc., for a refusal to list."""
        ...

    def refusal(self, ctx: MessageContext, command: str) -> str | None:
        """Why the message's sender may not schedule `command` here (it can't run on a
        schedule, or they may not run it now); None when they may."""
        ...


class TextCompleter(Protocol):
    """A plain completion without tools (summaries); `FunctionCallLLM` is one."""

    async def complete_text(self, system: str, user: str) -> str: ...


@runtime_checkable
class MemberDirectory(Protocol):
    """Who is in a chat, so that "remind @bob" can name Bob: a platform adapter that
    knows its chats' members is one (`Bot.add_adapter` registers it)."""

    async def find(self, chat_id: str, name: str) -> Member | None: ...


class AudienceRules(Protocol):
    """Who may set reminders for others (`handlers.audience.ReminderRules` is these)."""

    @property
    def remind_others(self) -> Permission: ...
    @property
    def remind_everyone(self) -> Permission: ...
    def for_chat(self, settings: Mapping[str, object]) -> AudienceRules:
        """The rules in one chat: these defaults, overridden by the chat's settings."""
        ...


class DailyLimits(Protocol):
    """Tokens per UTC day (`handlers.budget.BudgetLimits` is these); None: no limit."""

    @property
    def per_chat(self) -> int | None: ...
    @property
    def total(self) -> int | None: ...
