"""Installed as a new user would: the wheel, into a fresh venv whose pip is the oldest we
support (23.0.1, the oldest Debian 12 ships), then `groupmate serve` to a green /healthz.

Pip before 23.3 installed jusText (through trafilatura) without `lxml[html_clean]`'s
extra, and `groupmate serve` died at start on `lxml.html.clean`; `make test` and `make
run` upgrade pip first, so only this test sees what an old pip does. Versions are those of
requirements.lock (as constraints: the same wheels as the rest of the run, whatever PyPI
published since)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.processes import serve

# With the image tests (minutes of installing): `make test-images`, which CI runs too.
pytestmark = pytest.mark.image
ROOT = Path(__file__).resolve().parent.parent
OLDEST_PIP = "23.0.1"
SOURCES = ("pyproject.toml", "README.md", "bot", "function_calls", "storage", "groupmate")
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+==[^\s\\]+(?: ; [^\\]+)?)", re.MULTILINE)


def run(*command: str | Path, cwd: Path = ROOT) -> str:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done.stdout


def test_the_wheel_installs_with_the_oldest_pip_and_serves(tmp_path: Path) -> None:
    # Built from a copy of what the wheel is made of: setuptools leaves build/ behind.
    source = tmp_path / "source"
    source.mkdir()
    for part in SOURCES:
        copy = shutil.copytree if (ROOT / part).is_dir() else shutil.copy
        copy(ROOT / part, source / part)
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", tmp_path / "dist", source)
    (wheel,) = (tmp_path / "dist").glob("groupmate-*.whl")
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv)
    pip: list[str | Path] = [venv / "bin" / "python", "-m", "pip"]
    run(*pip, "install", "--quiet", f"pip=={OLDEST_PIP}")
    assert f"pip {OLDEST_PIP} " in run(*pip, "--version")
    constraints = tmp_path / "constraints.txt"
    lock = (ROOT / "requirements.lock").read_text()
    constraints.write_text("\n".join(_PIN.findall(lock)) + "\n")
    run(*pip, "install", "--quiet", "--constraint", constraints, wheel)
    run(venv / "bin" / "python", "-c", "import lxml.html.clean, trafilatura")
    # groupmate adds one top-level name and one command: a plugin's own `bot/` or
    # `storage.py` can't shadow it, nor it a plugin's.
    (record,) = venv.glob("lib/python3*/site-packages/groupmate-*.dist-info/RECORD")
    installed = {line.split(",")[0] for line in record.read_text().splitlines()}
    assert {path.split("/")[0] for path in installed if not path.startswith("..")} == {
        "groupmate",
        record.parent.name,
    }
    assert {Path(path).name for path in installed if path.startswith("..")} == {"groupmate"}
    for other in ("bot", "function_calls", "storage"):
        # From a folder of its own, without the checkout on the path: as a user runs it.
        alone = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        done = subprocess.run(
            [venv / "bin" / "python", "-c", f"import {other}"], cwd=tmp_path, env=alone
        )
        assert done.returncode != 0, other
    config = {
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "adapters": {"webhook": {"token": "install-test-token"}},
    }
    with serve(config, program=[str(venv / "bin" / "groupmate")]) as base_url:
        health = httpx.get(f"{base_url}/healthz", timeout=10)
    assert health.status_code == 200
