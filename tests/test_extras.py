"""A platform configured without its extra's SDK: `check` and `serve` name it with the
exact pip line, and neither shows a traceback. The SDK is hidden honestly: a subprocess
whose sitecustomize makes its import system unable to find it, as if never installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import yaml

from tests.ports import free_port

ROOT = Path(__file__).resolve().parent.parent

# Each finder on sys.meta_path is wrapped: the hidden top-level packages (and everything
# under them) are not found, so find_spec returns None and import raises
# ModuleNotFoundError, just as without the distribution.
_HIDE = """
import sys

HIDDEN = {hidden!r}


class _Hiding:
    def __init__(self, inner):
        self.inner = inner

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in HIDDEN:
            return None
        find = getattr(self.inner, "find_spec", None)
        return None if find is None else find(name, path, target)

    def __getattr__(self, attribute):
        return getattr(self.inner, attribute)


sys.meta_path[:] = [_Hiding(finder) for finder in sys.meta_path]
"""


def without(tmp_path: Path, hidden: set[str]) -> dict[str, str]:
    """The environment of a Python that can't find the `hidden` packages."""
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(textwrap.dedent(_HIDE.format(hidden=hidden)))
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
        "USER": "tester",
    }


def _run(tmp_path: Path, hidden: set[str], *args: str) -> subprocess.CompletedProcess[str]:
    env = without(tmp_path, hidden)
    return subprocess.run(
        [sys.executable, "-m", "groupmate.bot.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _config(tmp_path: Path) -> Path:
    data = {
        "bot": {"timezone": "Europe/Berlin"},
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "adapters": {
            "webhook": {"host": "127.0.0.1", "port": free_port()},
            "telegram": {"token": "123:abc"},
            "discord": {"token": "x"},
        },
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_platform_without_its_sdk_is_named_with_the_pip_line(tmp_path: Path) -> None:
    config = _config(tmp_path)
    line = (
        "adapters.telegram, adapters.discord: not installed; "
        'pip install "groupmate[telegram,discord]"'
    )
    for command in ("check", "serve"):
        done = _run(tmp_path, {"telegram", "discord"}, "--config", str(config), command)
        assert line in done.stderr, (command, done.stdout, done.stderr)
        assert done.returncode != 0, command
        assert "Traceback" not in done.stderr, command


def test_a_platform_with_its_sdk_is_not_named(tmp_path: Path) -> None:
    config = _config(tmp_path)
    done = _run(tmp_path, {"discord"}, "--config", str(config), "check")
    assert 'adapters.discord: not installed; pip install "groupmate[discord]"' in done.stderr
    assert "telegram" not in done.stderr


def test_postgresql_without_its_driver_is_named_with_the_pip_line(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"storage": {"url": "postgresql://bot@127.0.0.1:9/bot"}}))
    line = 'storage.url: PostgreSQL\'s driver is not installed; pip install "groupmate[postgres]"'
    for command in (("check",), ("db", "current"), ("serve",)):
        done = _run(tmp_path, {"psycopg"}, "--config", str(config), *command)
        assert line in done.stderr, (command, done.stdout, done.stderr)
        assert done.returncode != 0, command
        assert "Traceback" not in done.stderr, command
