"""What a handler returns: a direct answer for the user, or data for the model to phrase."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic_core import to_json

# Why a handler that ran declined to do what it was asked; the REST layer answers each
# with its status code (404, 403, 409, 422, 503), the chat with the handler's sentence.
Failure = Literal["not_found", "forbidden", "conflict", "refused", "unavailable"]


@dataclass(frozen=True, slots=True)
class Touched:
    """The object a call made or changed: its id, and the label users know it by."""

    id: str
    label: str


@dataclass(frozen=True, slots=True)
class FunctionResult:
    """The outcome of one tool call.

    With `reply` set, the text goes to the user as is and the turn can end without
    another LLM round. Otherwise `data` is serialized for the model to phrase.
    `failure` marks a call that ran but declined (its reply says why, in the chat's
    words). `value` is the typed object the call made or changed, for in-process callers
    (the REST routes answer with it); it never reaches the model. `touched` names that
    object (a reminder) for the audit log.
    """

    data: Any = None
    reply: str | None = None
    failure: Failure | None = None
    value: Any = None
    touched: Touched | None = None
    # False: a write tool was asked only to show something (`/tools`, `/budget`): the
    # call changed nothing, and the audit log leaves it out.
    changed: bool = True

    @classmethod
    def direct(
        cls,
        reply: str,
        data: Any = None,
        *,
        value: Any = None,
        touched: Touched | None = None,
        changed: bool = True,
    ) -> FunctionResult:
        """Answer the user directly; `data` optionally tells the model what happened."""
        return cls(data=data, reply=reply, value=value, touched=touched, changed=changed)

    @classmethod
    def refused(
        cls, reply: str, failure: Failure, data: Any = None, *, touched: Touched | None = None
    ) -> FunctionResult:
        """The call ran but did not do what was asked; `reply` tells the user why."""
        return cls(data=data, reply=reply, failure=failure, touched=touched)

    @classmethod
    def for_model(cls, data: Any) -> FunctionResult:
        """Hand `data` to the model, which phrases the answer."""
        return cls(data=data)

    @property
    def is_direct(self) -> bool:
        return self.reply is not None


def to_compact_json(value: Any) -> str:
    """Compact JSON with non-ASCII kept, for anything Pydantic can serialize."""
    return to_json(value, fallback=str).decode()
