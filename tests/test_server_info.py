"""The context window asked of the LLM server at startup: small real HTTP servers on
127.0.0.1 answering as llama.cpp, Ollama and vLLM do (or not at all), and the bot that
starts against them."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.status import config_lines
from groupmate.function_calls import FunctionCallLLM
from groupmate.function_calls.server_info import (
    ContextWindow,
    context_window,
    discover_context,
    known_window,
    served_models,
)
from groupmate.function_calls.usage import estimate_tokens
from groupmate.testing.threaded_server import ThreadedServer
from tests.conftest import make_ctx
from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
MODEL = "qwen2.5:1.5b"
KEY = "sk-probe-secret"


class FakeServer:
    """An LLM server's info routes: each path answers its JSON (a callable gets the
    request's JSON body); every other path is a 404, as on a server without it."""

    def __init__(self, answers: dict[str, Any], delay: float = 0.0) -> None:
        self.answers = answers
        self.delay = delay
        self.seen: list[tuple[str, str, Any, str]] = []  # method, path, body, authorization
        app = Starlette(routes=[Route("/{path:path}", self._any, methods=["GET", "POST"])])
        self._runner = ThreadedServer(app)
        self.port = self._runner.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _any(self, request: Request) -> Response:
        body = await request.json() if request.method == "POST" else None
        auth = request.headers.get("authorization", "")
        self.seen.append((request.method, request.url.path, body, auth))
        await asyncio.sleep(self.delay)
        answer = self.answers.get(request.url.path)
        if answer is None:
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        return JSONResponse(answer(body) if callable(answer) else answer)

    def stop(self) -> None:
        self._runner.stop()


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeServer]]:
    started: list[FakeServer] = []

    def start(answers: dict[str, Any], delay: float = 0.0) -> FakeServer:
        server = FakeServer(answers, delay)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


LLAMA_CPP_PROPS = {
    "default_generation_settings": {"n_ctx": 3072, "params": {"temperature": 0.8}},
    "total_slots": 1,
    "model_path": "qwen.gguf",
}


def _ollama_show(parameters: str, trained: int = 32768) -> Callable[[Any], Any]:
    def show(body: Any) -> Any:
        if body != {"model": MODEL}:
            return {"error": f"model {body!r} not found"}
        return {
            "parameters": parameters,
            "model_info": {"general.architecture": "qwen2", "qwen2.context_length": trained},
            "capabilities": ["completion", "tools"],
        }

    return show


async def _effective(tmp_path: Path, base_url: str, **llm: Any) -> tuple[int, ContextWindow]:
    """The window a bot started against `base_url` fits its requests to."""
    section = {"base_url": base_url, "model": MODEL, "api_key": KEY, "warm_up": False, **llm}
    data = {"storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"}, "llm": section}
    async with Bot(parse_config(data, environ={})) as bot:
        assert bot.llm is not None and bot.llm_context is not None
        return bot.llm.context_tokens, bot.llm_context


async def test_llama_cpp_props(
    tmp_path: Path, serve: Callable[..., FakeServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = serve({"/props": LLAMA_CPP_PROPS})
    with caplog.at_level(logging.INFO, logger="groupmate.llm"):
        tokens, window = await _effective(tmp_path, server.base_url)
    assert tokens == 3072
    assert window.source == "llama.cpp server, /props"
    # Asked at the server's root, with the key as a bearer token; the key is never logged.
    assert server.seen[0] == ("GET", "/props", None, f"Bearer {KEY}")
    assert [path for _, path, _, _ in server.seen] == ["/props", "/tokenize"]
    assert window.counted is None  # this server has no /tokenize: the default margin
    assert "LLM context window: 3072 tokens (llama.cpp server, /props)" in caplog.text
    assert KEY not in caplog.text


async def test_llama_cpp_counts_a_sample_and_the_window_is_filled_by_its_count(
    tmp_path: Path, serve: Callable[..., FakeServer]
) -> None:
    said: list[str] = []

    def tokenize(body: Any) -> Any:
        said.append(body["content"])
        return {"tokens": list(range(len(body["content"]) // 3))}  # denser than estimated

    server = serve({"/props": LLAMA_CPP_PROPS, "/tokenize": tokenize})
    window = await discover_context(server.base_url, MODEL, within=5)
    assert window is not None and window.counted is not None
    assert window.counted == pytest.approx((len(said[0]) // 3) / estimate_tokens(said[0]))
    assert '"type":"function"' in said[0]  # a tool's schema: what the estimate counts low
    # The bot then fills the window by the server's count, not the default margin.
    default = FunctionCallLLM(model=MODEL, base_url=server.base_url, context_tokens=3072)
    counted = FunctionCallLLM(
        model=MODEL, base_url=server.base_url, context_tokens=3072, context_counted=window.counted
    )
    try:
        ctx = make_ctx()
        assert counted.budget([], ctx).tool_budget < default.budget([], ctx).tool_budget
    finally:
        await default.aclose()
        await counted.aclose()


async def test_newer_llama_cpp_says_n_ctx_at_the_top(
    tmp_path: Path, serve: Callable[..., FakeServer]
) -> None:
    server = serve({"/props": {"n_ctx": 16384, "total_slots": 1}})
    assert (await _effective(tmp_path, server.base_url))[0] == 16384


async def test_ollama_num_ctx_of_the_model(
    tmp_path: Path, serve: Callable[..., FakeServer]
) -> None:
    parameters = 'num_ctx                        6144\nstop                           "<|im_end|>"'
    server = serve({"/api/show": _ollama_show(parameters), "/api/ps": {"models": []}})
    tokens, window = await _effective(tmp_path, server.base_url)
    assert tokens == 6144
    assert window.source == "Ollama, the model's num_ctx (/api/show)"
    assert ("POST", "/api/show", {"model": MODEL}, f"Bearer {KEY}") in server.seen


async def test_ollama_default_without_num_ctx_is_4096_or_the_trained_length(
    tmp_path: Path, serve: Callable[..., FakeServer]
) -> None:
    plain = serve({"/api/show": _ollama_show('stop "<|im_end|>"'), "/api/ps": {"models": []}})
    tokens, window = await _effective(tmp_path, plain.base_url)
    assert (tokens, window.source) == (4096, "Ollama's default (the model sets no num_ctx)")
    short = serve({"/api/show": _ollama_show("", trained=2048), "/api/ps": {"models": []}})
    assert (await _effective(tmp_path, short.base_url))[0] == 2048


async def test_ollama_loaded_model_says_what_it_was_given(
    tmp_path: Path, serve: Callable[..., FakeServer]
) -> None:
    # Loaded with OLLAMA_CONTEXT_LENGTH=8192, which /api/show cannot tell.
    running = {"models": [{"name": MODEL, "model": MODEL, "context_length": 8192}]}
    server = serve({"/api/show": _ollama_show(""), "/api/ps": running})
    tokens, window = await _effective(tmp_path, server.base_url)
    assert (tokens, window.source) == (8192, "Ollama, the loaded model's (/api/ps)")


async def test_vllm_max_model_len(tmp_path: Path, serve: Callable[..., FakeServer]) -> None:
    listed = {"object": "list", "data": [{"id": MODEL, "max_model_len": 32768}]}
    server = serve({"/v1/models": listed})
    tokens, window = await _effective(tmp_path, server.base_url)
    assert (tokens, window.source) == (32768, "vLLM, max_model_len (/v1/models)")


async def test_a_server_that_says_nothing_leaves_4096(
    tmp_path: Path, serve: Callable[..., FakeServer]
) -> None:
    # llama-cpp-python: 404 for /props and /api/show, a model list without a window.
    server = serve({"/v1/models": {"object": "list", "data": [{"id": MODEL}]}})
    tokens, window = await _effective(tmp_path, server.base_url)
    assert (tokens, window.source) == (4096, "default; the server did not say")
    assert [path for _, path, _, _ in server.seen] == [
        "/props",
        "/api/show",
        "/v1/models",
        "/api/v0/models",
    ]


async def test_served_models_are_listed_with_the_key_as_the_sdk_asks(
    serve: Callable[..., FakeServer],
) -> None:
    listed = {"object": "list", "data": [{"id": MODEL, "object": "model"}, {"id": "other"}]}
    server = serve({"/v1/models": listed})
    assert await served_models(server.base_url + "/", api_key=KEY) == (MODEL, "other")
    assert await served_models(server.base_url) == (MODEL, "other")
    assert [(path, auth) for _, path, _, auth in server.seen] == [
        ("/v1/models", f"Bearer {KEY}"),
        ("/v1/models", "Bearer unused"),  # a local server takes any key
    ]


async def test_served_models_of_a_server_without_a_list_or_answer_are_none(
    serve: Callable[..., FakeServer],
) -> None:
    assert await served_models(serve({}).base_url) is None  # 404
    assert await served_models(serve({"/v1/models": {"models": []}}).base_url) is None
    assert await served_models(f"http://127.0.0.1:{free_port()}/v1") is None


@pytest.mark.parametrize(
    ("entry", "source"),
    [
        ({"context_length": 65536}, "the server's model list (context_length)"),  # OpenRouter
        ({"context_window": 65536}, "the server's model list (context_window)"),  # Groq
        ({"max_context_length": 65536}, "the server's model list (max_context_length)"),
    ],
)
async def test_hosted_model_lists_that_say_the_window(
    tmp_path: Path, serve: Callable[..., FakeServer], entry: dict[str, int], source: str
) -> None:
    listed = {
        "object": "list",
        "data": [{"id": "other", "context_length": 8}, {"id": MODEL, **entry}],
    }
    server = serve({"/v1/models": listed})
    assert await _effective(tmp_path, server.base_url) == (65536, ContextWindow(65536, source))


async def test_lm_studio_gives_the_loaded_models_window(
    tmp_path: Path, serve: Callable[..., FakeServer]
) -> None:
    # LM Studio's own REST API, beside its OpenAI-compatible one (whose list says nothing).
    loaded = {
        "id": MODEL,
        "state": "loaded",
        "max_context_length": 32768,
        "loaded_context_length": 8192,
    }
    server = serve(
        {
            "/v1/models": {"object": "list", "data": [{"id": MODEL}]},
            "/api/v0/models": {"object": "list", "data": [loaded]},
        }
    )
    tokens, window = await _effective(tmp_path, server.base_url)
    assert (tokens, window.source) == (8192, "LM Studio, the loaded model's (/api/v0/models)")


@pytest.mark.parametrize(
    ("base_url", "model", "tokens"),
    [
        ("https://api.deepseek.com/v1", "deepseek-chat", 128_000),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-plus", 131_072),
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-max-latest", 32_768),
        ("https://api.moonshot.cn/v1", "moonshot-v1-8k", 8_192),
        ("https://open.bigmodel.cn/api/paas/v4", "glm-4-plus", 128_000),
        ("https://api.siliconflow.cn/v1", "Qwen/Qwen2.5-7B-Instruct", 32_768),
        ("https://generativelanguage.googleapis.com/v1beta/openai", "gemini-2.0-flash", 1_048_576),
        ("http://127.0.0.1:8080/v1", "deepseek-chat", None),  # a local server: not known
        ("https://api.deepseek.com.evil.example/v1", "deepseek-chat", None),
    ],
)
def test_documented_windows_of_hosted_apis(base_url: str, model: str, tokens: int | None) -> None:
    found = known_window(base_url, model)
    assert (found.tokens if found else None) == tokens


async def test_configured_context_tokens_win_and_the_server_is_not_asked(
    tmp_path: Path, serve: Callable[..., FakeServer]
) -> None:
    server = serve({"/props": LLAMA_CPP_PROPS})
    tokens, window = await _effective(tmp_path, server.base_url, context_tokens=2048)
    assert (tokens, window.source) == (2048, "llm.context_tokens")
    assert server.seen == []


async def test_a_slow_or_absent_server_does_not_hold_startup(
    serve: Callable[..., FakeServer],
) -> None:
    slow = serve({"/props": LLAMA_CPP_PROPS}, delay=1.5)
    began = time.monotonic()
    assert await discover_context(slow.base_url, MODEL, within=0.3) is None
    assert time.monotonic() - began < 2
    port = free_port()
    began = time.monotonic()
    window = await context_window(None, base_url=f"http://127.0.0.1:{port}/v1", model=MODEL)
    assert window.tokens == 4096 and time.monotonic() - began < 2
    # OpenAI's own API (no base_url) is not asked at all.
    assert await discover_context(None, MODEL) is None


def test_check_names_the_effective_settings() -> None:
    config = parse_config(
        {"llm": {"base_url": "http://127.0.0.1:8080/v1", "model": MODEL, "api_key": KEY}},
        environ={},
    )
    window = ContextWindow(3072, "llama.cpp server, /props")
    [line] = [x for x in config_lines(config, "sqlite://", "head", context=window) if "llm" in x]
    assert line == (
        f"llm: {MODEL} at http://127.0.0.1:8080/v1, tools auto; temperature 0, up to 512 "
        "output tokens, context 3072 tokens (llama.cpp server, /props), warm-up on"
    )
    assert KEY not in line


def test_check_asks_the_server_as_serve_would(
    tmp_path: Path, serve: Callable[..., FakeServer]
) -> None:
    server = serve({"/props": LLAMA_CPP_PROPS})
    config = tmp_path / "config.yaml"
    llm = {"base_url": server.base_url, "model": MODEL, "api_key": "${KEY}", "temperature": None}
    storage = {"url": f"sqlite:///{tmp_path / 'bot.db'}"}
    config.write_text(yaml.safe_dump({"llm": llm, "storage": storage}))
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "KEY": KEY}
    done = subprocess.run(
        [sys.executable, "-m", "groupmate.bot.cli", "check", "--config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (
        "temperature the server's, up to 512 output tokens, "
        "context 3072 tokens (llama.cpp server, /props), warm-up on"
    ) in done.stdout
    assert KEY not in done.stdout + done.stderr


async def test_the_openai_api_says_nothing_and_keeps_the_earlier_cap() -> None:
    window = await context_window(None, base_url=None, model="gpt-4o-mini")
    assert window == ContextWindow(8192, "default for the OpenAI API")
