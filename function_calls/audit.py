"""What the invoker writes to the audit log about a call: who, from where, what, and a
summary of the arguments that keeps secrets and long text out."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from groupmate.function_calls.vocabulary import Effect, InvocationOutcome
from groupmate.storage.audit import AuditEntry

if TYPE_CHECKING:
    from groupmate.function_calls.context import MessageContext
    from groupmate.function_calls.result import Touched

# An argument whose name says it holds a secret is never written down: whole words of
# the name ("api_key", "X-Auth-Token"), not any name that contains them ("tokens_per_day",
# "author").
_SECRET_NAME = re.compile(
    r"(?:^|[_\-.])(?:pass(?:word|wd)?|secret|token|api[_\-]?key|key|auth|authorization|"
    r"cookie|credentials?|session)(?:$|[_\-.])",
    re.I,
)
# In a value: a URL's user:password@, and the values of secret-named query parameters.
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/@\s]+@")
_QUERY_SECRET = re.compile(
    r"(?i)([?&;](?:[a-z0-9]*[_\-])?(?:pass(?:word|wd)?|secret|token|api[_\-]?key|key|auth|"
    r"sig|signature|access[_\-]?token|session)=)[^&#\s]*"
)
_MAX_TEXT = 120
_MAX_ITEMS = 20
_MAX_DEPTH = 3
MASK = "***"


class AuditSink(Protocol):
    """Where audit entries go (storage.audit.AuditLog)."""

    async def record(self, entry: AuditEntry) -> None: ...


def entry_for(
    ctx: MessageContext,
    tool: str,
    effect: Effect,
    outcome: InvocationOutcome,
    arguments: Mapping[str, Any],
    *,
    detail: str | None = None,
    touched: Touched | None = None,
) -> AuditEntry:
    """The audit entry of one call in `ctx`: who, from where, how they proved it, and
    the redacted arguments."""
    return AuditEntry(
        at=ctx.clock(),
        chat_id=ctx.chat_id,
        sender_id=ctx.sender_id,
        sender_name=ctx.sender_name,
        auth=ctx.auth,
        source=ctx.source,
        tool=tool,
        effect=effect,
        outcome=outcome,
        arguments=redacted(arguments),
        target=touched.id if touched is not None else None,
        target_label=touched.label if touched is not None else None,
        detail=detail,
    )


def redacted(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A summary of a call's arguments fit for the audit log: values of secret-named
    keys masked, strings cut at 120 characters, lists and objects at 20 items."""
    return {str(key): _value(str(key), value, 0) for key, value in arguments.items()}


def _masked(match: re.Match[str]) -> str:
    return match.group(1) + MASK


def _masked_user(match: re.Match[str]) -> str:
    return f"{match.group(1)}{MASK}@"


def _value(key: str, value: Any, depth: int) -> Any:
    if _SECRET_NAME.search(key):
        return MASK
    if isinstance(value, str):
        if "=" in value or "@" in value:  # the cheap test first: most text has neither
            value = _QUERY_SECRET.sub(_masked, _USERINFO.sub(_masked_user, value))
        return value if len(value) <= _MAX_TEXT else value[: _MAX_TEXT - 1] + "…"
    if depth >= _MAX_DEPTH and isinstance(value, Mapping | list | tuple):
        return "…"
    if isinstance(value, Mapping):
        items = list(value.items())[:_MAX_ITEMS]
        return {str(k): _value(str(k), v, depth + 1) for k, v in items}
    if isinstance(value, list | tuple):
        return [_value(key, item, depth + 1) for item in value[:_MAX_ITEMS]]
    if value is None or isinstance(value, bool | int | float):
        return value
    return _value(key, str(value), depth)
