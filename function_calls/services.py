"""What handlers may use besides their arguments, typed (like pydantic-ai's `RunContext`
deps): mypy catches a missing or misspelt service, where a string look-up could not.

The router builds one `Services` per bot; a field left None is not configured here, and
a tool that `requires` it is not offered (see `Tool.visible_to`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, get_args

from function_calls.errors import ToolError

if TYPE_CHECKING:
    from function_calls.handlers.audience import MemberDirectory, ReminderRules
    from function_calls.handlers.budget import BudgetLimits
    from function_calls.links import PageFetcher
    from function_calls.registry import ToolRegistry
    from function_calls.search import WebSearch
    from storage import ReminderService
    from storage.chatlog import ChatLog
    from storage.usage import UsageLog

ServiceName = Literal[
    "reminders", "reminder_rules", "chatlog", "usage", "budget_limits", "search", "pages",
    "llm", "members", "registry", "progress",
]  # fmt: skip
SERVICE_NAMES: frozenset[str] = frozenset(get_args(ServiceName))
T = TypeVar("T")


class TextCompleter(Protocol):
    """A plain completion without tools (summaries); `FunctionCallLLM` is one."""

    async def complete_text(self, system: str, user: str) -> str: ...


@dataclass(frozen=True, slots=True)
class Services:
    reminders: ReminderService | None = None
    # Who may remind others; without it, the defaults of ReminderRules.
    reminder_rules: ReminderRules | None = None
    chatlog: ChatLog | None = None
    usage: UsageLog | None = None
    budget_limits: BudgetLimits | None = None
    search: WebSearch | None = None
    # Fetches pages users link to (never inside the network); None when reading is off.
    pages: PageFetcher | None = None
    llm: TextCompleter | None = None
    # The platform's view of who is in a chat, to resolve "@bob" in reminders.
    members: MemberDirectory | None = None
    # The tools of this bot, for /help.
    registry: ToolRegistry | None = None
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
