"""`groupmate --help` answers without importing the bot: no model client, database,
scheduler or web framework is loaded to print the usage (bench/start.py times it)."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from groupmate.function_calls.handlers import BUILTIN_MODULES
from groupmate.testing.stub_llm import StubLLM
from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
HEAVY = (
    "openai",
    "sqlalchemy",
    "apscheduler",
    "fastapi",
    "uvicorn",
    "groupmate.bot.app",
    "groupmate.bot.config",
)

# The CLI's own main, as `groupmate --help` runs it; then which heavy modules it loaded.
_PROBE = """
import sys
from groupmate.bot.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = {heavy!r}
print("LOADED", *[name for name in heavy if name in sys.modules])
"""


def _loaded(*args: str) -> tuple[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=HEAVY), *args],
        env={"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    *usage, loaded = done.stdout.strip().splitlines()
    assert loaded.startswith("LOADED"), done.stdout
    return "\n".join(usage) + done.stderr, loaded.split()[1:]


def test_help_imports_none_of_the_bot() -> None:
    usage, loaded = _loaded("--help")
    assert "usage: groupmate" in usage and "check" in usage
    assert loaded == []


def test_a_commands_help_and_a_mistyped_command_import_none_of_the_bot() -> None:
    usage, loaded = _loaded("serve", "--help")
    assert "--port" in usage
    assert loaded == []
    usage, loaded = _loaded("serv")
    assert "invalid choice: 'serv'" in usage
    assert loaded == []


def test_the_package_still_exports_the_runtime() -> None:
    from groupmate import bot

    assert bot.Bot.__name__ == "Bot" and bot.load_config.__name__ == "load_config"
    assert all(getattr(bot, name) is not None for name in bot.__all__)


# The packages whose names are imported when first asked for (storage.lazy).
LAZY = (
    "groupmate",
    "groupmate.bot",
    "groupmate.function_calls",
    "groupmate.function_calls.handlers",
    "groupmate.function_calls.links",
    "groupmate.function_calls.plugins",
    "groupmate.function_calls.remote",
    "groupmate.function_calls.search",
    "groupmate.function_calls.toolsets",
    "groupmate.storage",
)


def test_each_lazy_package_exports_every_name_it_lists() -> None:
    for name in LAZY:
        package = importlib.import_module(name)
        for export in package.__all__:
            value = getattr(package, export)
            assert value is not None and not isinstance(value, ModuleType), (name, export)
            assert vars(package)[export] is value  # kept: asked once, imported once
        assert not hasattr(package, "Nonexistent")  # an AttributeError, as without laziness


# What `check` on a config of SQLite and no model, search, MCP server or plugin needs
# none of: the model client, MCP, the web server, the scheduler and the built-in tools;
# nor Alembic and SQLAlchemy: a SQLite database's revision is read with sqlite3
# (storage.revisions), its URL shown as written (storage.location).
CHECK_UNUSED = (
    "openai",
    "alembic",
    "sqlalchemy",
    "mcp",
    "fastapi",
    "uvicorn",
    "apscheduler",
    *BUILTIN_MODULES.values(),
)


def _check(config: Path, heavy: tuple[str, ...]) -> tuple[list[str], list[str], str]:
    """`groupmate check` of `config`: its report, which of `heavy` it loaded, all it said."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=heavy), "--config", str(config), "check"],
        env={"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    *report, loaded = done.stdout.strip().splitlines()
    return report, loaded.split()[1:], done.stdout + done.stderr


def test_check_of_a_minimal_config_imports_only_what_it_reports(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(f"storage: {{url: 'sqlite:///{tmp_path}/bot.db'}}\n")
    report, loaded, said = _check(config, CHECK_UNUSED)
    assert "plugins: none configured" in report, said
    assert loaded == []


# Each chat platform's library; a settings section is checked without loading it.
PLATFORM_SDKS = (
    "telegram",
    "nio",
    "slack_sdk",
    "slack_bolt",
    "discord",
    "lark_oapi",
    "dingtalk_stream",
    "prompt_toolkit",
)
EVERY_PLATFORM = """
storage: {{url: 'sqlite:///{folder}/bot.db'}}
adapters:
  telegram: {{token: t}}
  matrix: {{homeserver: 'http://127.0.0.1:9', user_id: '@bot:local', access_token: a}}
  onebot: {{}}
  slack: {{bot_token: xoxb-1, signing_secret: s}}
  discord: {{token: t}}
  lark: {{app_id: cli_1, app_secret: s, verification_token: v}}
  dingtalk: {{client_id: c, client_secret: s}}
"""


def test_check_of_every_platform_imports_no_platform_library(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(EVERY_PLATFORM.format(folder=tmp_path))
    report, loaded, said = _check(config, PLATFORM_SDKS)
    assert "plugins: none configured" in report, said
    assert loaded == []


# Imported only where used: the MCP SDK with an MCP server configured or served,
# readability (and lxml) on the first page read, icalendar on the first calendar feed
# read, the terminal's prompt_toolkit in `chat`.
ONLY_WHERE_USED = ("mcp", "mcp_types", "readability", "lxml", "icalendar", *PLATFORM_SDKS)
# What `check` of a config with a model needs none of: the running bot (its router,
# scheduler and metrics) and the web server; the model's window and the prompt's tokens
# come from the tools and the model's settings alone, the served models from one GET
# (no request through the model's SDK, which is imported with the first one sent).
CHECK_NEVER = (
    *ONLY_WHERE_USED,
    "openai",
    "alembic",
    "fastapi",
    "starlette",
    "uvicorn",
    "prometheus_client",
    "apscheduler",  # the reminders' timers: the service's types name no timer
    "groupmate.storage.timers",
    "groupmate.bot.app",
    "groupmate.bot.runtime",
    "groupmate.bot.router",
)


def _minimal(folder: Path, model_port: int) -> Path:
    """The README's minimal config (base_url, model, tool_mode), on SQLite in `folder`."""
    config = folder / "config.yaml"
    config.write_text(
        f"storage: {{url: 'sqlite:///{folder}/bot.db'}}\n"
        f"llm: {{base_url: 'http://127.0.0.1:{model_port}/v1', model: stub, tool_mode: auto}}\n"
    )
    return config


def test_check_of_the_minimal_config_imports_no_server_and_no_unused_sdk(
    tmp_path: Path, stub: StubLLM
) -> None:
    report, loaded, said = _check(_minimal(tmp_path, stub.port), CHECK_NEVER)
    assert any(line.startswith("prompt: ") for line in report), said
    assert loaded == []


# `serve` as the command line runs it; once /healthz is green, which of `heavy` it has
# loaded, and then it is stopped as a service manager stops it.
_SERVING = """
import os, signal, sys, threading, time, urllib.request
from groupmate.bot.cli import main

def watch(url):
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1) as answer:
                if answer.status == 200:
                    break
        except OSError:
            time.sleep(0.05)
    print("LOADED", *[name for name in {heavy!r} if name in sys.modules], flush=True)
    os.kill(os.getpid(), signal.SIGTERM)

threading.Thread(target=watch, args=(sys.argv[1],), daemon=True).start()
main(sys.argv[2:])
"""


def test_serve_of_the_minimal_config_imports_no_unused_sdk(tmp_path: Path, stub: StubLLM) -> None:
    port = free_port()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _SERVING.format(heavy=ONLY_WHERE_USED),
            f"http://127.0.0.1:{port}/healthz",
            "--config",
            str(_minimal(tmp_path, stub.port)),
            "serve",
            "--port",
            str(port),
        ],
        env={"PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    loaded = [line for line in done.stdout.splitlines() if line.startswith("LOADED")]
    assert loaded, done.stdout + done.stderr
    assert loaded[0].split()[1:] == []


# The reminder grammar's patterns are compiled when it first parses, not when a tool's
# module imports it: `check` builds the tools and parses nothing (function_calls.lazy_re).
GRAMMAR = (
    "groupmate.function_calls.grammar.request",
    "groupmate.function_calls.grammar.chinese",
)


def test_the_grammar_compiles_no_pattern_at_import() -> None:
    for name in GRAMMAR:
        module = importlib.import_module(name)
        compiled = [key for key, value in vars(module).items() if isinstance(value, re.Pattern)]
        assert compiled == [], name
