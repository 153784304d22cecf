"""What handlers may use besides their arguments, typed (like pydantic-ai's `RunContext`
deps): mypy catches a missing or misspelt service, where a string look-up could not.

The router builds one `Services` per bot; a field left None is not configured here, and
a tool that `requires` it is not offered (see `Tool.visible_to`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, get_args, runtime_checkable

from function_calls.errors import ToolError
from storage.outgoing import Member
from storage.vocabulary import Permission

if TYPE_CHECKING:
    from function_calls.links import PageFetcher
    from function_calls.policy import ToolPolicy
    from function_calls.registry import ToolRegistry
    from function_calls.search import WebSearch
    from storage import ReminderService
    from storage.audit import AuditLog
    from storage.chatlog import ChatLog
    from storage.usage import UsageLog

ServiceName = Literal[
    "reminders", "reminder_rules", "chatlog", "usage", "budget_limits", "search", "pages",
    "llm", "members", "registry", "tool_policy", "audit", "progress",
]  # fmt: skip
SERVICE_NAMES: frozenset[str] = frozenset(get_args(ServiceName))
T = TypeVar("T")


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


@dataclass(frozen=True, slots=True)
class Services:
    reminders: ReminderService | None = None
    # Who may remind others; without it, the defaults of ReminderRules.
    reminder_rules: AudienceRules | None = None
    chatlog: ChatLog | None = None
    usage: UsageLog | None = None
    budget_limits: DailyLimits | None = None
    search: WebSearch | None = None
    # Fetches pages users link to (never inside the network); None when reading is off.
    pages: PageFetcher | None = None
    llm: TextCompleter | None = None
    # The platform's view of who is in a chat, to resolve "@bob" in reminders.
    members: MemberDirectory | None = None
    # The tools of this bot, for /help and /tools.
    registry: ToolRegistry | None = None
    # The tools policy, for /tools to say who may use what.
    tool_policy: ToolPolicy | None = None
    # The audit log, for "who set reminder #4?".
    audit: AuditLog | None = None
    # Sends a short "working on it" line to the chat while a slow tool runs.
    progress: Callable[[str], Awaitable[None]] | None = None

    def has(self, name: ServiceName) -> bool:
        return getattr(self, name) is not None

    def with_(self, **changes: Any) -> Services:
        """A copy with these services set."""
        return dataclasses.replace(self, **changes)


def required(service: T | None, name: ServiceName) -> T:
    """The service, which the tool's `requires` made sure of; a clear error otherwise."""
    if service is None:
        raise ToolError(f"{name} is not configured on this bot")
    return service
