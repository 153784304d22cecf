"""The admin API's request and response bodies (bot.adapters.http_admin's routes)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from groupmate.bot.adapters.api_models import ReminderOut
from groupmate.function_calls import Effect, InvocationOutcome, Scope, Who
from groupmate.function_calls.vocabulary import PluginState
from groupmate.storage.vocabulary import ChatType, DeliveryOutcome


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
    as_user: str | None = Field(
        default=None,
        min_length=1,
        max_length=255,
        description="Act as this member of the chat: their id, with the rights their own "
        "message would have. Without it the call acts as the sender `dashboard` "
        "(shown as Dashboard), an admin of the chat.",
    )
    as_name: str = Field(
        default="",
        max_length=255,
        description="with as_user: the member's name, as replies and reminders show it",
    )
    as_admin: bool = Field(
        default=False, description="with as_user: the member administers the chat"
    )


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
