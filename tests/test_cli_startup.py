"""`groupmate --help` answers without importing the bot: no model client, database,
scheduler or web framework is loaded to print the usage (bench/start.py times it)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from groupmate.function_calls.handlers import BUILTIN_MODULES

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
# none of: the model client, MCP, the web server, the scheduler and the built-in tools.
CHECK_UNUSED = (
    "openai",
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
