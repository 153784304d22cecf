"""Two plugins (twin_a, twin_b) that each provide a service of this one type."""

from __future__ import annotations

from collections.abc import AsyncIterator

from pydantic import BaseModel


class Greeter:
    def __init__(self, words: str) -> None:
        self.words = words


class GreeterSettings(BaseModel):
    words: str = "hello"


async def greeter(settings: GreeterSettings) -> AsyncIterator[Greeter]:
    yield Greeter(settings.words)
