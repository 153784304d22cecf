"""The one way a test builds a `Bot` (not started) from config sections: its database (a
URL, or a folder for a SQLite file), the stub model's section when it has a model, and
whatever other sections the test sets, as config.yaml would hold them; and the one way
it builds a chat message for that bot."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls import AbstractToolset
from groupmate.testing.stub_llm import StubLLM


def make_bot(
    database: str | Path,
    stub: StubLLM | None = None,
    *,
    llm: Mapping[str, Any] | None = None,
    clock: Callable[[], datetime] | None = None,
    registry: AbstractToolset | None = None,
    **sections: Any,
) -> Bot:
    """A bot on `database` (a URL, or a folder: its bot.db); with `stub`, its model is
    the stub, `llm` adding to that section (without one, `llm` is the section).
    `storage` adds to the database's section."""
    url = database if isinstance(database, str) else f"sqlite:///{database / 'bot.db'}"
    data: dict[str, Any] = {**sections, "storage": {"url": url, **sections.get("storage", {})}}
    if stub is not None:
        data["llm"] = {"base_url": stub.base_url, "api_key": "sk-test", **(llm or {})}
    elif llm is not None:
        data["llm"] = dict(llm)
    config = parse_config(data, environ={})
    if clock is None:  # the bot's own default
        return Bot(config, registry=registry)
    return Bot(config, registry=registry, clock=clock)


def chat_message(text: str, **fields: Any) -> IncomingMessage:
    """What Ann (u1) says in the group g1; `fields` change any of that."""
    values: dict[str, Any] = {
        "chat_id": "g1",
        "chat_type": "group",
        "sender_id": "u1",
        "sender_name": "Ann",
        "text": text,
        **fields,
    }
    return IncomingMessage(**values)
