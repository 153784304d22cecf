"""Per-tool policy: who may call a tool, in which chats, and how often.

The `tools.policy` section of the config maps keys to rules. A key is a tool name, a
glob over tool names (`"time__*"` for an MCP server's tools) or `"effect:NAME"` for
every tool of that effect. Every rule whose key matches a tool applies, so the
strictest wins: a tool is offered only where all of them allow it, and each of their
rate limits counts on its own.

A tool a rule denies is not shown to the model, and a call of it is refused as hidden on
every path (the REST layer answers 403). `governed` applies the rules (and each chat's
switches) to a tool set; the invoker's set is the one place they are checked.
"""

from __future__ import annotations

import fnmatch
import math
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from groupmate.function_calls.errors import HiddenReason, ToolRateLimitedError
from groupmate.function_calls.filters import Filter
from groupmate.function_calls.vocabulary import EFFECTS, Effect, Scope, Who
from groupmate.storage.vocabulary import SETTING_TOOLS_OFF

if TYPE_CHECKING:  # for annotations: reading a config imports no message context
    from groupmate.function_calls.context import MessageContext
    from groupmate.function_calls.tools import Tool
    from groupmate.function_calls.toolsets import AbstractToolset


_EFFECT_KEY = "effect:"
_NONE: frozenset[str] = frozenset()
_HOUR = 3600.0
# Counters kept per rule; past this many (user, chat) keys the oldest are dropped.
_MAX_COUNTERS = 50_000


class ToolRule(BaseModel):
    """One entry of `tools.policy`."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    who: Who = "members"
    """Who may call the tool: `members` (anyone), `admins` (a group's admins; in a
    private chat only the bot's own), `creator_or_admin` (anyone, but a reminder tool
    then acts only on reminders the caller created), `nobody`."""
    chats: Filter = Filter()
    """The chats the tool is offered in: `allow` and `deny` lists of chat ids or globs
    (deny wins); a plain list is the allow list. Unset: every chat."""
    scope: Scope = "both"
    """Offer the tool in `group` chats only, `private` chats only, or `both`."""
    per_user_per_hour: int | None = Field(None, ge=1)
    """Calls one user may make in an hour, counted per process. Unset: no limit."""
    per_chat_per_hour: int | None = Field(None, ge=1)
    """Calls one chat may make in an hour, counted per process; the tools one rule
    covers share its limit. Unset: no limit."""


def check_key(key: str) -> str:
    """A policy key: a tool name, a glob, or effect:read|write|external."""
    if key.startswith(_EFFECT_KEY) and key.removeprefix(_EFFECT_KEY) not in EFFECTS:
        raise ValueError(f"{key!r}: the effect must be one of {', '.join(EFFECTS)}")
    if not key.strip():
        raise ValueError("a policy key must not be empty")
    return key


class PolicyConfig(BaseModel):
    """The `tools:` section of the config."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    policy: dict[str, ToolRule] = Field(default_factory=dict)
    """Rules by key: a tool name (`reminder_delete`), a glob over names (`"time__*"`),
    or `effect:read`, `effect:write`, `effect:external`. Every rule whose key matches a
    tool applies, so the strictest wins; a denied tool is not shown to the model."""

    @field_validator("policy")
    @classmethod
    def _keys(cls, value: dict[str, ToolRule]) -> dict[str, ToolRule]:
        for key in value:
            check_key(key)
        return value


def _matches(key: str, name: str, effect: Effect) -> bool:
    if key.startswith(_EFFECT_KEY):
        return key.removeprefix(_EFFECT_KEY) == effect
    return fnmatch.fnmatchcase(name, key)


@dataclass(slots=True)
class _Window:
    """Call times within the last hour, oldest first."""

    times: deque[float] = field(default_factory=deque)

    def wait(self, now: float, limit: int) -> float:
        """Seconds until one more call is allowed (0: now)."""
        while self.times and self.times[0] <= now - _HOUR:
            self.times.popleft()
        if len(self.times) < limit:
            return 0.0
        return self.times[0] + _HOUR - now


class ToolPolicy:
    """The rules of `tools.policy`, and the rate counters they keep (in this process:
    with several processes on one database, each counts its own calls)."""

    def __init__(
        self, rules: Mapping[str, ToolRule] | None = None, *, monotonic: Callable[[], float]
    ) -> None:
        self._rules = dict(rules or {})
        self._monotonic = monotonic
        self._matching: dict[tuple[str, Effect], tuple[tuple[str, ToolRule], ...]] = {}
        self._windows: dict[tuple[str, str, str], _Window] = {}
        # Handlers in worker threads never call in here, but calls from several event
        # loops (tests, the MCP stdio server) may: the counters stay consistent.
        self._lock = threading.Lock()

    @property
    def rules(self) -> Mapping[str, ToolRule]:
        return self._rules

    def rules_for(self, name: str, effect: Effect) -> tuple[tuple[str, ToolRule], ...]:
        """The (key, rule) pairs that apply to a tool, in the config's order."""
        cached = self._matching.get((name, effect))
        if cached is None:
            cached = tuple((k, r) for k, r in self._rules.items() if _matches(k, name, effect))
            self._matching[(name, effect)] = cached
        return cached

    def allows(self, name: str, effect: Effect, ctx: MessageContext) -> bool:
        """Whether the sender of `ctx` may see and call the tool in its chat."""
        if not self._rules:
            return True  # every message asks this of every tool: no rules, no work
        for _, rule in self.rules_for(name, effect):
            if rule.who == "nobody" or (rule.who == "admins" and not _admin(ctx)):
                return False
            if rule.scope != "both" and rule.scope != ctx.chat_type:
                return False
            if not rule.chats.admits(ctx.chat_id):
                return False
        return True

    def owner_only(self, name: str, effect: Effect, ctx: MessageContext) -> bool:
        """Whether the call may act only on objects the sender created."""
        return (
            bool(self._rules)
            and not ctx.is_admin
            and any(rule.who == "creator_or_admin" for _, rule in self.rules_for(name, effect))
        )

    def unmatched(self, names: Iterable[str]) -> list[str]:
        """The keys that name none of `names` (a typo leaves the tool it meant open)."""
        known = list(names)
        return [
            key
            for key in self._rules
            if not key.startswith(_EFFECT_KEY)
            and not any(fnmatch.fnmatchcase(name, key) for name in known)
        ]

    def who(self, name: str, effect: Effect) -> Who:
        """The strictest `who` of the rules that apply, for /tools and the dashboard."""
        order: tuple[Who, ...] = ("members", "creator_or_admin", "admins", "nobody")
        found = [rule.who for _, rule in self.rules_for(name, effect)]
        return max(found, key=order.index) if found else "members"

    def take(self, name: str, effect: Effect, ctx: MessageContext) -> None:
        """Count one call; raises ToolRateLimitedError (counting nothing) when a rule's
        limit for this sender or chat is reached."""
        if not self._rules:
            return
        limits: list[tuple[tuple[str, str, str], int]] = []
        for key, rule in self.rules_for(name, effect):
            # Counted per rule: the tools one rule covers ("effect:external", "time__*")
            # share its limit.
            if rule.per_user_per_hour is not None:
                limits.append(((key, "user", ctx.sender_id), rule.per_user_per_hour))
            if rule.per_chat_per_hour is not None:
                limits.append(((key, "chat", ctx.chat_id), rule.per_chat_per_hour))
        if not limits:
            return
        now = self._monotonic()
        with self._lock:
            windows = [self._window(counter) for counter, _ in limits]
            wait = max(w.wait(now, limit) for w, (_, limit) in zip(windows, limits, strict=True))
            if wait > 0:
                raise ToolRateLimitedError(name, math.ceil(wait))
            for window in windows:
                window.times.append(now)

    def _window(self, counter: tuple[str, str, str]) -> _Window:
        window = self._windows.get(counter)
        if window is None:
            if len(self._windows) >= _MAX_COUNTERS:
                self._forget_idle()
            window = self._windows[counter] = _Window()
        return window

    def _forget_idle(self) -> None:
        """Make room: drop the counters with no call in the last hour (they limit
        nothing); only if every one is live, the oldest."""
        now = self._monotonic()
        idle = [k for k, w in self._windows.items() if not w.times or w.times[-1] <= now - _HOUR]
        for counter in idle:
            del self._windows[counter]
        if len(self._windows) >= _MAX_COUNTERS:
            del self._windows[next(iter(self._windows))]


def _admin(ctx: MessageContext) -> bool:
    """The policy's `admins`: a group's admins; in a private chat, whose owner is its
    admin, only the bot's own admins."""
    return ctx.bot_admin or (ctx.is_admin and ctx.chat_type == "group")


def tools_off(settings: Mapping[str, Any]) -> frozenset[str]:
    """The tools a chat switched off, from its settings."""
    names = settings.get(SETTING_TOOLS_OFF)
    if not names or not isinstance(names, list):
        return _NONE  # every message asks: most chats switch nothing off
    return frozenset(str(name) for name in names)


def governed(tools: AbstractToolset, policy: ToolPolicy | None) -> AbstractToolset:
    """`tools` under the tools policy and each chat's switches: a tool a rule denies the
    sender is hidden as "policy", one the chat switched off as "switched_off" (after the
    tools' own scope, rights and services, and the config's narrowing, in `tools`)."""

    def refuse(ctx: MessageContext, tool: Tool) -> HiddenReason | None:
        if policy is not None and not policy.allows(tool.name, tool.effect, ctx):
            return "policy"
        if ctx.tools_off and tool.name in ctx.tools_off:
            return "switched_off"
        return None

    return tools.refusing(refuse)
