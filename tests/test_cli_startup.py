"""`groupmate --help` answers without importing the bot: no model client, database,
scheduler or web framework is loaded to print the usage (bench/cli_startup.py times it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("openai", "sqlalchemy", "apscheduler", "fastapi", "uvicorn", "bot.app", "bot.config")

# The CLI's own main, as `groupmate --help` runs it; then which heavy modules it loaded.
_PROBE = """
import sys
from bot.cli import main
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
    import bot

    assert bot.Bot.__name__ == "Bot" and bot.load_config.__name__ == "load_config"
    assert all(getattr(bot, name) is not None for name in bot.__all__)
