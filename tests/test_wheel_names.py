"""The wheel holds one top-level package, `groupmate`, and one command: the folders bot/,
function_calls/ and storage/ go in as groupmate.bot, groupmate.function_calls and
groupmate.storage. (tests/test_install.py installs it into a fresh venv, with the image
tests, and checks what lands in site-packages.)"""

from __future__ import annotations

import configparser
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("pyproject.toml", "README.md", "bot", "function_calls", "storage", "groupmate")


def test_the_wheel_installs_one_package_and_one_command(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for part in SOURCES:  # as they are in a checkout: groupmate/bot is a link to bot/
        if (ROOT / part).is_dir():
            shutil.copytree(ROOT / part, source / part, symlinks=True)
        else:
            shutil.copy(ROOT / part, source / part)
    assert (source / "groupmate" / "bot").is_symlink()
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", tmp_path / "dist", source],
        check=True,
        timeout=300,
    )  # fmt: skip
    (wheel,) = (tmp_path / "dist").glob("groupmate-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    info = next(name.split("/")[0] for name in names if name.endswith(".dist-info/METADATA"))
    assert {name.split("/")[0] for name in names} == {"groupmate", info}
    # Every module of the three folders, the web pages and the type marker, as copies.
    for folder in ("bot", "function_calls", "storage"):
        for path in (ROOT / folder).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                assert f"groupmate/{path.relative_to(ROOT).as_posix()}" in names, path
    scripts = configparser.ConfigParser()
    scripts.read_string(zipfile.ZipFile(wheel).read(f"{info}/entry_points.txt").decode())
    assert dict(scripts["console_scripts"]) == {"groupmate": "groupmate.bot.cli:main"}
