"""docs/troubleshooting.md and the model pages quote the messages a user meets word for
word: each message is produced here by the code that says it (the command line, the
config loader, the model client against the stub server, the HTTP API), and the page
must hold it as it came. A reworded message fails here until the page says it again.

Where a message holds what differs from run to run (a free port, the stub's address,
the schema's newest revision), the run's value is swapped for the one the page shows,
and only that."""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel, Field

from groupmate.bot.adapters import install_line
from groupmate.bot.app import Bot
from groupmate.bot.cli import main
from groupmate.bot.config import parse_config
from groupmate.bot.container import NO_TOKEN
from groupmate.bot.status import config_lines, model_warning
from groupmate.function_calls import (
    FunctionCallLLM,
    FunctionResult,
    MessageContext,
    ToolRegistry,
    tool_function,
)
from groupmate.function_calls.internal_text import MESSAGE_TOO_LONG, MISCONFIGURED, STORAGE_DOWN
from groupmate.function_calls.server_info import context_window
from groupmate.storage import head_revision
from groupmate.testing import stub_llm as s
from tests.conftest import eventually, make_ctx
from tests.http_harness import Servers
from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
TROUBLESHOOTING = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
MODEL_PAGES = ROOT / "docs" / "getting-started" / "models"
MODELS = (MODEL_PAGES / "index.md").read_text(encoding="utf-8")
# What the pages show for a model server's address and the port groupmate serves on.
PAGE_SERVER = "http://127.0.0.1:11434/v1"
PAGE_PORT = 8080


def groupmate(tmp_path: Path, config: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`groupmate --config <config> ARGS` in a process of its own, as a user runs it."""
    path = tmp_path / "config.yaml"
    path.write_text(config, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "groupmate.bot.cli", "--config", str(path), *args],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def storage(tmp_path: Path) -> str:
    return f"storage:\n  url: sqlite:///{tmp_path / 'bot.db'}\n"


@pytest.mark.parametrize(
    ("config", "unset"),
    [
        ("llm:\n  modle: qwen2.5:7b\n", None),
        ("llm:\n  tool_mode: natve\n", None),
        ("adapters:\n  telegram:\n    token: ${TELEGRAM_BOT_TOKEN}\n", "TELEGRAM_BOT_TOKEN"),
        ("llm:\n  api_key: ${OPENAI_API_KEY:?your OpenAI key}\n", "OPENAI_API_KEY"),
    ],
    ids=["misspelt", "wrong-value", "env-unset", "env-required"],
)
def test_a_config_error_is_quoted_as_the_command_prints_it(
    config: str,
    unset: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if unset is not None:
        monkeypatch.delenv(unset, raising=False)
    path = tmp_path / "config.yaml"
    path.write_text(config, encoding="utf-8")
    assert main(["--config", str(path), "check"]) == 2
    printed = capsys.readouterr().err.strip()
    assert printed.startswith("groupmate: ")
    assert printed in TROUBLESHOOTING


def test_a_yaml_syntax_error_is_quoted_up_to_its_details(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("config.yaml").write_text("bot:\n  name: [groupmate\n", encoding="utf-8")
    assert main(["--config", "config.yaml", "check"]) == 2
    head = capsys.readouterr().err.splitlines()[0]
    said = "groupmate: config.yaml is not valid YAML:"
    assert head.startswith(said) and said in TROUBLESHOOTING


def test_a_platform_without_its_extra_is_quoted() -> None:
    # tests/test_extras.py shows `check` and `serve` print this line, the SDK hidden.
    assert f"groupmate: {install_line(['telegram'])}" in TROUBLESHOOTING


class CityArgs(BaseModel):
    city: str = Field(description="City name")


def _weather_tools() -> ToolRegistry:
    registry = ToolRegistry()

    @tool_function(description="Current weather for a city", registry=registry)
    async def weather(ctx: MessageContext, args: CityArgs) -> FunctionResult:
        return FunctionResult.for_model({"city": args.city, "temp_c": 18})

    return registry


async def _error_of(llm: FunctionCallLLM) -> str | None:
    async with llm:
        return (await llm.run(make_ctx(), "what's the weather in Graz?")).error


@pytest.mark.parametrize(
    ("status", "logged"),
    [(401, "AuthenticationError (status 401)"), (404, "NotFoundError (status 404)")],
    ids=["401", "404"],
)
async def test_a_refused_model_request_is_quoted_with_its_log_line(
    stub: s.StubLLM, caplog: pytest.LogCaptureFixture, status: int, logged: str
) -> None:
    stub.fallback = s.error(status, "refused")
    llm = FunctionCallLLM(
        model="qwen2.5:7b", base_url=stub.base_url, registry=_weather_tools(), transport_retries=0
    )
    with caplog.at_level(logging.WARNING, logger="groupmate.llm"):
        error = await _error_of(llm)
    assert error is not None and error in TROUBLESHOOTING and error in MODELS
    line = f"LLM request failed: {logged}"
    assert line in caplog.messages and line in TROUBLESHOOTING and line in MODELS


async def test_an_unreachable_model_server_is_quoted_with_its_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    llm = FunctionCallLLM(
        model="qwen2.5:7b",
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        transport_retries=0,
        http_backend="httpx",  # the pages name the aiohttp transport's error beside it
    )
    with caplog.at_level(logging.WARNING, logger="groupmate.llm"):
        error = await _error_of(llm)
    assert error is not None and error in TROUBLESHOOTING and error in MODELS
    line = "LLM request failed: APIConnectionError (status None)"
    assert line in caplog.messages and line in TROUBLESHOOTING and line in MODELS


async def test_the_switch_to_prompt_mode_is_quoted_as_logged(
    stub: s.StubLLM, caplog: pytest.LogCaptureFixture
) -> None:
    stub.script(s.error(400, "registry.ollama.ai/library/gemma:2b does not support tools"))
    stub.fallback = s.text("It is 18 °C in Graz.")
    llm = FunctionCallLLM(model="gemma:2b", base_url=stub.base_url, registry=_weather_tools())
    with caplog.at_level(logging.INFO, logger="groupmate.llm"):
        assert await _error_of(llm) is None
    line = "model gemma:2b rejected native tools; switching to prompt mode"
    assert line in caplog.messages and line in MODELS


async def test_a_window_learned_from_a_refusal_is_quoted_as_logged(
    stub: s.StubLLM, caplog: pytest.LogCaptureFixture
) -> None:
    stub.window = 4096
    stub.fallback = s.text("Sure.")
    llm = FunctionCallLLM(
        model="qwen2.5:7b",
        base_url=stub.base_url,
        context_tokens=8192,
        context_source="llm.context_tokens",
    )
    with caplog.at_level(logging.WARNING, logger="groupmate.llm"):
        async with llm:
            await llm.run(make_ctx(), "please read this: " + "lorem ipsum " * 1200)
    assert stub.refused, "the stub refused nothing: the window was never exceeded"
    learned = [m for m in caplog.messages if m.startswith("LLM context window: the server")]
    assert learned and learned[0] in MODELS


def test_a_model_the_server_does_not_list_is_quoted_as_check_warns() -> None:
    config = parse_config({"llm": {"base_url": PAGE_SERVER, "model": "qwen2.5:7b"}}, {})
    warning = model_warning(config, ("qwen2.5:3b",))
    assert f"groupmate: warning: {warning}" in TROUBLESHOOTING
    assert f"groupmate: warning: {warning}" in MODELS


def test_a_port_in_use_is_quoted_as_serve_prints_it(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = groupmate(tmp_path, storage(tmp_path), "serve", "--port", str(port))
    assert done.returncode == 2, done.stderr
    printed = done.stderr.strip().replace(f"127.0.0.1:{port}", f"127.0.0.1:{PAGE_PORT}")
    assert printed in TROUBLESHOOTING
    # Without "groupmate: ", as the llama.cpp page quotes it inside a sentence.
    said = printed.removeprefix("groupmate: ")
    assert said in (MODEL_PAGES / "llama-cpp-server.md").read_text(encoding="utf-8")


def test_the_http_api_without_a_token_is_quoted_as_serve_and_the_image_refuse(
    tmp_path: Path,
) -> None:
    config = storage(tmp_path) + "adapters:\n  webhook:\n    host: 0.0.0.0\n"
    done = groupmate(tmp_path, config, "serve")
    assert done.returncode == 2 and done.stderr.strip() in TROUBLESHOOTING
    assert NO_TOKEN in TROUBLESHOOTING


async def test_a_call_without_the_token_is_quoted_as_the_api_answers(servers: Servers) -> None:
    api = await servers.start()  # with adapters.webhook.token set
    async with httpx.AsyncClient(base_url=api.base_url) as stranger:
        denied = await stranger.get("/v1/info")
    assert denied.status_code == 401 and denied.text in TROUBLESHOOTING


def test_a_database_a_newer_groupmate_upgraded_is_quoted_as_the_command_prints_it(
    tmp_path: Path,
) -> None:
    assert groupmate(tmp_path, storage(tmp_path), "db", "upgrade").returncode == 0
    head = head_revision()
    assert head is not None
    newer = f"{int(head) + 1:04d}"
    with sqlite3.connect(tmp_path / "bot.db") as db:
        db.execute("UPDATE alembic_version SET version_num = ?", (newer,))
    done = groupmate(tmp_path, storage(tmp_path), "db", "upgrade")
    assert done.returncode == 2, done.stderr
    # The page's revisions are 0016 (this groupmate) and 0017 (the newer one).
    printed = done.stderr.strip().replace(newer, "NEWER").replace(head, "0016")
    assert printed.replace("NEWER", "0017") in TROUBLESHOOTING


def test_an_unreachable_database_is_quoted_as_the_command_prints_it(tmp_path: Path) -> None:
    config = f"storage:\n  url: postgresql://groupmate:x@127.0.0.1:{free_port()}/groupmate\n"
    done = groupmate(tmp_path, config, "db", "current")
    assert done.returncode == 2 and done.stderr.strip() in TROUBLESHOOTING
    assert STORAGE_DOWN.english in TROUBLESHOOTING


def test_a_plugin_that_does_not_load_is_quoted_as_check_prints_it(tmp_path: Path) -> None:
    config = storage(tmp_path) + "plugins:\n  - groupmate_weathr\n"
    done = groupmate(tmp_path, config, "check")
    assert done.returncode == 1
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("groupmate: plugin ")]
    assert line in TROUBLESHOOTING


@pytest.mark.parametrize(
    ("reply", "request_timeout"),
    [
        (s.error(429, "slow down"), 60.0),
        (s.error(500, "oops"), 60.0),
        (s.error(400, "bad request"), 60.0),
        (s.text("late", delay=2), 0.3),
    ],
    ids=["429", "500", "400", "timeout"],
)
async def test_each_model_reply_in_the_models_table_is_the_clients(
    stub: s.StubLLM, reply: s.Reply, request_timeout: float
) -> None:
    stub.fallback = reply
    llm = FunctionCallLLM(
        model="qwen2.5:7b",
        base_url=stub.base_url,
        registry=_weather_tools(),
        transport_retries=0,
        request_timeout=request_timeout,
    )
    error = await _error_of(llm)
    assert error is not None and error in MODELS


def test_the_window_replies_are_quoted_on_the_models_page() -> None:
    assert MISCONFIGURED.english in MODELS and MESSAGE_TOO_LONG.english in MODELS


async def test_a_window_the_server_does_not_say_is_quoted_as_logged_and_checked(
    stub: s.StubLLM, caplog: pytest.LogCaptureFixture
) -> None:
    stub.context_tokens = None  # as llama-cpp-python's server: no /props
    with caplog.at_level(logging.INFO, logger="groupmate.llm"):
        window = await context_window(None, base_url=stub.base_url, model="qwen2.5:7b")
    assert window.tokens == 4096
    logged = [m for m in caplog.messages if m.startswith("LLM context window: the server did")]
    assert logged and logged[0] in MODELS
    llm = {"base_url": PAGE_SERVER, "model": "qwen2.5:7b", "tool_mode": "native"}
    lines = config_lines(parse_config({"llm": llm}, {}), "sqlite://", None, context=window)
    (checked,) = [line for line in lines if line.startswith("llm: ")]
    assert checked in MODELS


@pytest.mark.parametrize(
    ("page", "base_url", "model"),
    [
        ("openai.md", None, "gpt-4o-mini"),
        ("deepseek.md", "https://api.deepseek.com/v1", "deepseek-chat"),
        ("qwen.md", "https://dashscope.aliyuncs.com/compatible-mode/v1", "qwen-plus"),
    ],
)
async def test_a_hosted_apis_window_is_quoted_as_check_shows_it(
    page: str, base_url: str | None, model: str
) -> None:
    window = await context_window(None, base_url=base_url, model=model, within=0.01)
    shown = f"context {window.tokens} tokens ({window.source})"
    assert shown in (MODEL_PAGES / page).read_text(encoding="utf-8")


async def test_a_failed_warm_up_is_quoted_as_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = {
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "llm": {"base_url": f"http://127.0.0.1:{free_port()}/v1", "model": "qwen2.5:7b"},
    }
    with caplog.at_level(logging.WARNING, logger="groupmate.bot.app"):
        async with Bot(parse_config(data, {})) as bot:
            await eventually(lambda: bot.llm_status == "warm-up failed", within=30)
    logged = [m for m in caplog.messages if m.startswith("LLM warm-up failed")]
    assert logged and logged[0] in MODELS
