"""The image's `PLATFORMS` build argument (bot/image_build.py): of requirements.lock, the
lines the core and the chosen platforms need, as they are (versions and hashes); every
extra the lock has that is no platform always; an unknown platform refused by name. The
image tests (tests/test_image_platforms.py) build and run the results."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from groupmate.bot.adapters import PLATFORMS
from groupmate.bot.image_build import (
    chosen_extras,
    needed,
    platforms,
    read_lock,
    requirements,
)

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCK = (ROOT / "requirements.lock").read_text()
# Each platform's SDK distribution, as the lock names it
SDK_PACKAGES = {
    "telegram": "python-telegram-bot",
    "matrix": "matrix-nio",
    "slack": "slack-bolt",
    "discord": "discord-py",
    "lark": "lark-oapi",
    "dingtalk": "dingtalk-stream",
}


def names(lines: list[str]) -> set[str]:
    return set(read_lock("\n".join(lines)))


def test_the_platforms_are_the_adapters() -> None:
    assert platforms(PYPROJECT) == list(PLATFORMS)


def test_all_platforms_are_the_whole_lock_and_none_leaves_every_sdk_out() -> None:
    every = needed(LOCK, PYPROJECT, chosen_extras("all", PYPROJECT, LOCK))
    assert every == list(c.text for c in read_lock(LOCK).values())
    core = names(needed(LOCK, PYPROJECT, chosen_extras("", PYPROJECT, LOCK)))
    assert not core & {*SDK_PACKAGES.values(), "requests", "pycryptodome", "websockets"}
    assert {"fastapi", "sqlalchemy", "uvicorn", "psycopg", "psycopg-binary"} <= core
    assert "postgres" in chosen_extras("", PYPROJECT, LOCK)  # the lock's, no platform


@pytest.mark.parametrize("platform", list(SDK_PACKAGES))
def test_one_platform_adds_its_sdk_and_no_other(platform: str) -> None:
    chosen = names(needed(LOCK, PYPROJECT, chosen_extras(platform, PYPROJECT, LOCK)))
    assert {name for name in SDK_PACKAGES.values() if name in chosen} == {SDK_PACKAGES[platform]}


def test_an_unknown_platform_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(LookupError, match="unknown platform whatsapp; choose from telegram"):
        chosen_extras("telegram,whatsapp", PYPROJECT, LOCK)
    script = ROOT / "bot" / "image_build.py"
    done = subprocess.run(
        [sys.executable, script, "requirements", "whatsapp", "--output", tmp_path / "out"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode != 0 and "unknown platform whatsapp" in done.stderr
    assert "Traceback" not in done.stderr


def test_any_extra_the_lock_has_is_installed_and_the_lines_stay_as_they_are(
    tmp_path: Path,
) -> None:
    """Whatever extras pyproject and the lock come to have: here a `speed` extra."""
    (tmp_path / "pyproject.toml").write_text(
        textwrap.dedent("""\
            [project]
            name = "groupmate"
            dependencies = ["fastapi>=0.1"]
            [project.optional-dependencies]
            speed = ["uvloop>=0.1; sys_platform != 'win32'"]
            chat = ["chat-sdk>=1"]
            all = ["groupmate[chat]"]
            """)
    )
    (tmp_path / "requirements.lock").write_text(
        textwrap.dedent("""\
            #    pip-compile --extra=chat --extra=speed --generate-hashes pyproject.toml
            chat-sdk==1.0 \\
                --hash=sha256:aa
                # via groupmate (pyproject.toml)
            fastapi==0.2 \\
                --hash=sha256:bb
                # via groupmate (pyproject.toml)
            requests==2.0 \\
                --hash=sha256:cc
                # via
                #   chat-sdk
                #   other
            uvloop==0.2 ; sys_platform != "win32" \\
                --hash=sha256:dd
                # via groupmate (pyproject.toml)
            """)
    )
    output = tmp_path / "image.lock"
    assert requirements("", tmp_path, output) == "speed"
    written = output.read_text()
    assert "fastapi==0.2 \\\n    --hash=sha256:bb" in written
    assert 'uvloop==0.2 ; sys_platform != "win32"' in written
    assert "chat-sdk" not in written and "requests" not in written
    assert requirements("all", tmp_path, output) == "speed,chat"
    assert "requests==2.0" in output.read_text()


def test_a_requirement_the_lock_lacks_fails_the_build_with_make_lock() -> None:
    pyproject: dict[str, object] = {
        "project": {**PYPROJECT["project"], "dependencies": ["not-locked>=1"]}
    }
    with pytest.raises(LookupError, match="not-locked>=1 is not in the lock: run make lock"):
        needed(LOCK, pyproject, [])
