"""What a handler returns: a direct answer for the user, or data for the model to phrase."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_core import to_json


@dataclass(frozen=True, slots=True)
class FunctionResult:
    """The outcome of one tool call.

    With `reply` set, the text goes to the user as is and the turn can end without
    another LLM round. Otherwise `data` is serialized for the model to phrase.
    """

    data: Any = None
    reply: str | None = None

    @classmethod
    def direct(cls, reply: str, data: Any = None) -> FunctionResult:
        """Answer the user directly; `data` optionally tells the model what happened."""
        return cls(data=data, reply=reply)

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
