"""The scripted language model of a test bot: what it replies, and what it was sent."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Self

from groupmate.testing.stub_llm import Reply, Script, StubLLM, calls, text

UNSCRIPTED_REPLY = (
    "[groupmate.testing: the model was asked, but no reply was scripted; "
    "script one with bot.model.answers(...) or bot.model.calls(...)]"
)
"""What the model answers when the test scripted nothing (more): the bot's reply then
says so, instead of the test waiting on a model that never answers."""


class ScriptedModel:
    """The model behind a test bot: a real Chat Completions server on 127.0.0.1 (the
    bot reaches it through the real `openai` SDK) that answers from a queue.

    `calls` and `answers` queue replies, one per request the bot sends, in order:
    `bot.model.calls("weather", {"city": "Berlin"}).answers("Sunny in Berlin.")` is
    "the model calls `weather` with these arguments, then answers that". A tool whose
    result goes straight to the chat (`FunctionResult.direct`) ends the turn: the model
    is not asked again, so script no answer after it.

    When the queue is empty the model answers `UNSCRIPTED_REPLY`, so a test that asked
    the model once more than it meant fails on the reply rather than hanging.
    """

    def __init__(self, server: StubLLM) -> None:
        self.server = server
        """The Chat Completions server it scripts (for `script`'s other replies)."""
        self.unscripted: list[dict[str, Any]] = []
        """The requests answered with UNSCRIPTED_REPLY: the model was asked more often
        than the test scripted."""
        self.reset()

    @property
    def base_url(self) -> str:
        """The `llm.base_url` of the server."""
        return self.server.base_url

    def reset(self) -> None:
        """Forget the queue and what was sent (the server may have served another test)."""
        self.server.reset()
        self.unscripted.clear()
        self.server.fallback = self._unscripted

    def calls(self, tool: str, arguments: Mapping[str, Any] | str | None = None) -> Self:
        """The next reply: a native call of `tool` with these arguments (a mapping is
        sent as JSON; a string as it is, to test arguments that are not valid JSON)."""
        payload: dict[str, Any] | str = (
            arguments if isinstance(arguments, str) else dict(arguments or {})
        )
        return self.script(calls((tool, payload)))

    def answers(self, content: str) -> Self:
        """The next reply: this text, the model's answer to the chat."""
        return self.script(text(content))

    def script(self, *replies: Script) -> Self:
        """Any replies of `groupmate.testing.stub_llm`: errors, delays, several tool
        calls at once, or a function of the request."""
        self.server.script(*replies)
        return self

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        return self.server.pending

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The body of every Chat Completions request the model got, oldest first."""
        return self.server.requests

    def offered_tools(self, request: int = -1) -> list[str]:
        """The names of the tools a request (the latest by default) offered the model."""
        if not self.requests:
            raise LookupError("the model has not been asked anything yet")
        tools: list[dict[str, Any]] = self.requests[request].get("tools", [])
        return [tool["function"]["name"] for tool in tools]

    def tool_results(self, request: int = -1) -> list[Any]:
        """The tool results a request (the latest by default) showed the model, each
        parsed from JSON when it is JSON."""
        if not self.requests:
            raise LookupError("the model has not been asked anything yet")
        results: list[Any] = []
        for message in self.requests[request]["messages"]:
            if message.get("role") != "tool":
                continue
            content = message.get("content")
            try:
                results.append(json.loads(content))
            except (TypeError, ValueError):
                results.append(content)
        return results

    def _unscripted(self, body: dict[str, Any]) -> Reply:
        self.unscripted.append(body)
        return text(UNSCRIPTED_REPLY)
