"""A real Chat Completions server on 127.0.0.1 with scripted replies, for tests and benchmarks.

Tests reach it through the real `openai` SDK. Each request pops the next scripted
reply; a reply can also be a function of the request (for the benchmark's "call a
tool, then answer" rule).

A warm-up request (`max_tokens` 1, which `Bot` sends once at startup) is kept apart: it
goes to `warm_ups`, not `requests`, takes no scripted reply, and is answered with
`warm_up_reply` once `warm_up_gate` is open (it is, unless a test closes it).

Like llama.cpp's server it says its context window at `GET /props` (`context_tokens`),
which the bot asks at startup when `llm.context_tokens` is not set.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from groupmate.testing.threaded_server import ThreadedServer


@dataclass(frozen=True)
class Reply:
    """One scripted response: the model's text (`content`), its native tool calls
    (`tool_calls`: (tool name, arguments) pairs), or an HTTP error (`status`,
    `error_message`, `headers`); `delay` seconds before it is sent, `raw_body` sent as it
    is (a broken server), `no_usage` for a server that reports no token counts. Made by
    `text`, `calls`, `error` and `raw`."""

    content: str | None = None
    tool_calls: list[tuple[str, Any]] = field(default_factory=list)
    status: int = 200
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw_body: str | None = None
    no_usage: bool = False  # a server that reports no token usage


def text(content: str, delay: float = 0.0) -> Reply:
    """The model answers `content` (after `delay` seconds)."""
    return Reply(content=content, delay=delay)


def calls(*items: tuple[str, Any], content: str | None = None, delay: float = 0.0) -> Reply:
    """Native tool calls, several at once if given several: `calls(("weather", {"city":
    "Berlin"}), ("weather", {"city": "Paris"}))`. Arguments that are not a str are
    JSON-encoded; a str is sent as it is (to test arguments that are not valid JSON)."""
    return Reply(content=content, tool_calls=list(items), delay=delay)


def error(status: int, message: str = "error", headers: dict[str, str] | None = None) -> Reply:
    """The server fails with HTTP `status` (429 with `{"retry-after": "1"}`, 500...)."""
    return Reply(status=status, error_message=message, headers=headers or {})


def raw(body: str, status: int = 200) -> Reply:
    """The server sends `body` as it is: a reply that is not the JSON the API says."""
    return Reply(raw_body=body, status=status)


Script = Reply | Callable[[dict[str, Any]], Reply]
"""A scripted reply, or a function of the request's JSON body that makes one."""


def request_tokens(body: dict[str, Any]) -> int:
    """A request's size as a real tokenizer counts it, about, and the answer's
    `max_tokens`. Its messages' and tools' text is counted as Qwen2.5's tokenizer counts
    the densest text measured (groupmate's own tool schemas): 3.5 ASCII characters a
    token, and 0.85 a token per Chinese character (real: 0.69 to 0.8)."""
    text = json.dumps(body.get("messages", []), ensure_ascii=False) + json.dumps(
        body.get("tools", []), ensure_ascii=False
    )
    wide = len(text) - len(text.encode("ascii", "ignore"))
    return int((len(text) - wide) / 3.5 + wide * 0.85) + int(body.get("max_tokens") or 0)


class StubLLM:
    """Scripted OpenAI-compatible server on 127.0.0.1; `requests` keeps every request
    body it got. Each request takes the next scripted reply; with none left, `fallback`
    answers (a `ScriptedModel` sets one that says nothing was scripted), else HTTP 500.
    Tests use it through `ScriptedModel`; `start` and `stop` it when using it alone."""

    def __init__(self, *, record: bool = True) -> None:
        # A benchmark's stub records nothing: a growing record costs its process more
        # garbage collection with every request, which would be counted as the LLM's time.
        self._record = record
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # of each request, names in lower case
        self.paths: list[str] = []  # of each request
        self.fallback: Script | None = None
        self.warm_ups: list[dict[str, Any]] = []
        self.warm_up_reply: Script = Reply(content="")
        self.warm_up_gate = threading.Event()
        self.warm_up_gate.set()
        # The window it says at /props, as llama.cpp's server does; None says nothing
        # there (404), as llama-cpp-python's server and most hosted APIs.
        self.context_tokens: int | None = 8192
        # A real window: a request larger than this (counted as `request_tokens` does)
        # is refused as llama.cpp's server refuses it, HTTP 400 with `n_ctx`. None: any.
        self.window: int | None = None
        self.refused: list[dict[str, Any]] = []  # the requests refused for their size
        self._script: deque[Script] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._runner: ThreadedServer | None = None
        self.port = 0
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._completions, methods=["POST"]),
                # Where Azure OpenAI clients post (the model names the deployment).
                Route(
                    "/openai/deployments/{deployment}/chat/completions",
                    self._completions,
                    methods=["POST"],
                ),
                Route("/v1/models", self._models, methods=["GET"]),
                Route("/props", self._props, methods=["GET"]),
            ]
        )

    @property
    def base_url(self) -> str:
        """The OpenAI base URL to give a client (`llm.base_url`), once started."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Script) -> None:
        """Queue `replies`, one per request, in order."""
        with self._lock:
            self._script.extend(replies)

    def reset(self) -> None:
        """Forget the queue, the requests and any changed setting (window, fallback)."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.headers.clear()
            self.paths.clear()
            self.fallback = None
            self.warm_ups.clear()
            self.warm_up_reply = Reply(content="")
            self.refused.clear()
            self.window = None
            self.context_tokens = 8192
        self.warm_up_gate.set()

    @property
    def pending(self) -> int:
        """Scripted replies not yet taken."""
        with self._lock:
            return len(self._script)

    def start(self, port: int = 0) -> None:
        """Serve on 127.0.0.1 (`port` 0: a free one) in a thread; returns once it listens."""
        self._runner = ThreadedServer(self.app)
        self.port = self._runner.start(port)

    def stop(self) -> None:
        """Stop serving."""
        if self._runner is not None:
            self._runner.stop()

    def _next(self, body: dict[str, Any], request: Request) -> Reply:
        with self._lock:
            if self._record:
                self.requests.append(body)
                self.headers.append(dict(request.headers))
                self.paths.append(request.url.path)
            script = self._script.popleft() if self._script else self.fallback
        if script is None:
            return error(500, "stub LLM: no scripted reply left")
        return script(body) if callable(script) else script

    async def _props(self, request: Request) -> Response:
        if self.context_tokens is None:
            return JSONResponse({"error": "not found"}, status_code=404)
        settings = {"n_ctx": self.context_tokens, "params": {"temperature": 0.8}}
        return JSONResponse({"default_generation_settings": settings, "total_slots": 1})

    async def _models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "stub", "object": "model"}]})

    async def _warm_up(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            if self._record:
                self.warm_ups.append(body)
        # Set from the test's thread; never held longer than a test lasts.
        await asyncio.to_thread(self.warm_up_gate.wait, 30)
        reply = self.warm_up_reply
        return reply(body) if callable(reply) else reply

    async def _completions(self, request: Request) -> Response:
        body = await request.json()
        if self.window is not None and request_tokens(body) > self.window:
            with self._lock:
                self.refused.append(body)
            # llama.cpp's server's answer, word for word.
            error_body = {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": request_tokens(body) - int(body.get("max_tokens") or 0),
                    "n_ctx": self.window,
                }
            }
            return JSONResponse(error_body, status_code=400)
        if body.get("max_tokens") == 1:
            reply = await self._warm_up(body)
        else:
            reply = self._next(body, request)
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.raw_body is not None:
            return Response(reply.raw_body, status_code=reply.status, media_type="application/json")
        if reply.status != 200:
            payload = {"error": {"message": reply.error_message, "type": "stub", "code": None}}
            return JSONResponse(payload, status_code=reply.status, headers=reply.headers)
        return JSONResponse(self._completion(body, reply))

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": f"call_{next(self._ids)}",
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": args if isinstance(args, str) else json.dumps(args),
                    },
                }
                for name, args in reply.tool_calls
            ]
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                }
            ],
            **({} if reply.no_usage else {"usage": _usage(body, message)}),
        }


def _usage(body: dict[str, Any], message: dict[str, Any]) -> dict[str, int]:
    """Tokens as its own tokenizer counts them (the count its window is held to)."""
    prompt = request_tokens(body) - int(body.get("max_tokens") or 0)
    completion = len(json.dumps(message)) // 4
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def tool_then_answer(
    tool: str, arguments: dict[str, Any], answer: str, delay: float = 0.0
) -> Callable[[dict[str, Any]], Reply]:
    """A rule: call `tool` first; once a tool result is in the conversation, answer."""

    def rule(body: dict[str, Any]) -> Reply:
        if body["messages"][-1].get("role") == "tool":
            return text(answer, delay=delay)
        return calls((tool, arguments), delay=delay)

    return rule


def main() -> None:
    """Serve a stub in the foreground (used by the benchmark in a separate process)."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--tool", default="echo", help="the tool every conversation calls")
    parser.add_argument("--arguments", default='{"text": "hi"}', help="its JSON arguments")
    options = parser.parse_args()
    stub = StubLLM(record=False)
    arguments = json.loads(options.arguments)
    stub.fallback = tool_then_answer(options.tool, arguments, "done", delay=options.delay)
    config = uvicorn.Config(
        stub.app, host="127.0.0.1", port=options.port, log_level="warning", lifespan="off"
    )
    uvicorn.Server(config).run()


if __name__ == "__main__":
    main()


def latest_message(body: dict[str, Any]) -> str:
    """The chat message a request answers: the last user message without the earlier
    chat before it and the context line after it (see FunctionCallLLM)."""
    content: str = next(m for m in reversed(body["messages"]) if m["role"] == "user")["content"]
    before_context = content.rsplit("\n\n[Context: ", 1)[0]
    return before_context.rsplit("\n\n", 1)[-1]


def earlier_chat(body: dict[str, Any]) -> list[str]:
    """The transcript lines of the earlier chat in a request, oldest first."""
    content: str = next(m for m in body["messages"] if m["role"] == "user")["content"]
    if not content.startswith("Earlier in this chat"):
        return []
    return content.split("\n\n", 1)[0].splitlines()[1:]
