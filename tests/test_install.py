"""Installed as a new user would: the wheel alone (the core: no extra), into a fresh venv
whose pip is the oldest we support (23.0.1, the oldest Debian 12 ships), then `groupmate
serve` to a green /healthz, and the install's size.

Pip before 23.3 matches an extra only as its package spells it: readability asks for
`lxml[html-clean]` (lxml.html.clean, which it imports), as lxml spells it. `make test`
and `make run` upgrade pip first, so only this test sees what an old pip does. Versions
are those of requirements.lock (as constraints: the same wheels as the rest of the run,
whatever PyPI published since)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from packaging.utils import canonicalize_name

from groupmate.testing.stub_llm import StubLLM, text
from tests.processes import serve
from tests.test_lock import required

# With the image tests (minutes of installing): `make test-images`, which CI runs too.
pytestmark = pytest.mark.image
ROOT = Path(__file__).resolve().parent.parent
OLDEST_PIP = "23.0.1"
SOURCES = ("pyproject.toml", "README.md", "bot", "function_calls", "storage", "groupmate")
_PIN = re.compile(r"^([A-Za-z0-9_.\-]+==[^\s\\]+(?: ; [^\\]+)?)", re.MULTILINE)
CORE_MIB = 150
# What the venv itself brings, not groupmate: the installer and its setuptools.
_INSTALLER = frozenset({"pip", "setuptools", "pkg_resources", "_distutils_hack", "distutils"})


def run(*command: str | Path, cwd: Path = ROOT) -> str:
    done = subprocess.run(
        [str(part) for part in command], cwd=cwd, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done.stdout


def _as_a_user() -> dict[str, str]:
    """This environment without the checkout on the path."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the oldest pip, and the core wheel installed in it."""
    tmp_path = tmp_path_factory.mktemp("install")
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
    return venv


def test_the_wheel_installs_with_the_oldest_pip_and_serves(venv: Path, tmp_path: Path) -> None:
    run(venv / "bin" / "python", "-c", "import lxml.html.clean, readability")
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
        done = subprocess.run(
            [venv / "bin" / "python", "-c", f"import {other}"], cwd=tmp_path, env=_as_a_user()
        )
        assert done.returncode != 0, other
    config = {
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "adapters": {"webhook": {"token": "install-test-token"}},
    }
    with serve(config, program=[str(venv / "bin" / "groupmate")]) as base_url:
        health = httpx.get(f"{base_url}/healthz", timeout=10)
    assert health.status_code == 200


# The LLM client as the bot makes it (its default transport, aiohttp), in the core venv.
_ASK = """
import asyncio, sys
from groupmate.function_calls.llm import FunctionCallLLM

async def main():
    async with FunctionCallLLM(model="m", base_url=sys.argv[1], api_key="k") as llm:
        print(await llm.complete_text("Answer briefly.", "hi"))

asyncio.run(main())
"""


def test_without_the_speed_extra_the_llm_is_asked_through_httpx(venv: Path, stub: StubLLM) -> None:
    stub.script(text("Hello from the model."))
    for absent in ("aiohttp", "uvloop", "httptools"):  # `groupmate serve` ran without both
        done = subprocess.run(
            [venv / "bin" / "python", "-c", f"import {absent}"], capture_output=True
        )
        assert done.returncode != 0, absent
    # The installed groupmate, not the checkout's: from the venv's folder, no PYTHONPATH.
    asked = subprocess.run(
        [venv / "bin" / "python", "-c", _ASK, stub.base_url],
        cwd=venv, env=_as_a_user(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert asked.stdout == "Hello from the model.\n", asked.stderr


def site_packages_mib(venv: Path) -> float:
    """What the install holds on disk, as `du -sm` counts it (blocks, MiB), without the
    venv's installer; pip's bytecode of every module included, as pip leaves it."""
    (site,) = venv.glob("lib/python3*/site-packages")
    size = 0
    for entry in site.iterdir():
        if entry.name.split("-")[0] in _INSTALLER:
            continue
        files = [entry] if not entry.is_dir() else [p for p in entry.rglob("*") if p.is_file()]
        size += sum(file.lstat().st_blocks * 512 for file in files)
    return size / 2**20


def test_the_core_install_is_at_most_150_mb_without_platform_sdks(venv: Path) -> None:
    (site,) = venv.glob("lib/python3*/site-packages")
    installed = {canonicalize_name(p.name.split("-")[0]) for p in site.glob("*.dist-info")}
    core = {canonicalize_name(r.name) for r in required()}
    extras = {canonicalize_name(r.name) for r in required("all", "speed")} - core
    # Babel: 36 MB of locale data that reading links once brought (trafilatura's courlan);
    # aiohttp: the LLM client's faster transport, through the `speed` extra's openai[aiohttp].
    mib = site_packages_mib(venv)
    print(f"the core install: {mib:.1f} MiB of site-packages (du -sm, without pip)")
    assert mib <= CORE_MIB
    assert installed & (extras | {"babel", "aiohttp"}) == set()
