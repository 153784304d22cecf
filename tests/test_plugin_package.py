"""A plugin that lives outside the repo (tests/fixtures/echo_plugin), installed into a
fresh venv as a user would install it: listed when installed, loaded only when the
config names it (by module or by entry-point name), answering through the model and
its slash command, reading its settings and its store, and keeping its data across a
restart of `groupmate serve`."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from groupmate.testing.stub_llm import StubLLM, calls, text
from tests.processes import serve

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "tests" / "fixtures" / "echo_plugin"
TOKEN = "t0k-plugin"

pytestmark = pytest.mark.slow


def fresh_venv(folder: Path) -> Path:
    """A new venv that sees this project's installed packages (groupmate and what it
    needs) through a .pth file, as a venv with groupmate installed would; its python."""
    venv.EnvBuilder(with_pip=False).create(folder)  # pip: the project's, below
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = sysconfig.get_paths()["purelib"]
    # addsitedir, not a bare path: the .pth files there (groupmate's editable install) run.
    (Path(purelib) / "groupmate_dev.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return python


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("plugin-venv")
    python = fresh_venv(folder / "venv")
    source = folder / "echo_plugin"
    shutil.copytree(PACKAGE, source)  # the build writes next to the source
    install = [str(python), "-m", "pip", "install", "--quiet"]  # setuptools from PyPI
    done = subprocess.run(
        [*install, "--no-deps", str(source)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return str(python)


def _run(python: str, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [python, "-m", "groupmate.bot.cli", "--config", str(config), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=config.parent)


def test_installed_is_listed_but_not_enabled(python: str, tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({"storage": {"url": f"sqlite:///{tmp_path / 'b.db'}"}}))
    listed = _run(python, config, "plugins")
    assert listed.returncode == 0, listed.stderr
    assert "plugin echo 1.2.3 (groupmate_echo): available" in listed.stdout
    # The project's own interpreter has no such package: nothing listed there.
    ours = _run(sys.executable, config, "plugins")
    assert "echo" not in ours.stdout


@pytest.mark.parametrize("name", ["echo", "groupmate_echo"])  # entry point, module
def test_an_installed_plugin_runs_in_groupmate_serve(
    python: str, tmp_path: Path, name: str
) -> None:
    stub = StubLLM()
    stub.start()
    try:
        config: dict[str, Any] = {
            "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
            "llm": {"base_url": stub.base_url, "api_key": "sk-test", "tool_mode": "native",
                    "context_tokens": 8192, "warm_up": False},
            "adapters": {"console": {"enabled": False}, "webhook": {"token": TOKEN}},
            "plugins": [{"module": name, "settings": {"prefix": "ECHO"}}],
        }  # fmt: skip
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        checked = _run(python, path, "check")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "plugin echo 1.2.3 (" in checked.stdout and "tools echo" in checked.stdout
        with serve(config, python=python) as base:
            assert _say(base, "/echo hello") == ["ECHO #1 for Alice: hello"]
            stub.script(calls(("echo", {"text": "from the model"})), text("unused"))
            assert _say(base, "please echo 'from the model'") == [
                "ECHO #2 for Alice: from the model"
            ]
            status = httpx.get(f"{base}/v1/status", headers=_auth(), timeout=10).json()
            echo = next(p for p in status["plugins"] if p["name"] == "echo")
            assert (echo["state"], echo["version"]) == ("loaded", "1.2.3")
        with serve(config, python=python) as base:  # a restart: the store kept its count
            assert _say(base, "/echo again") == ["ECHO #3 for Alice: again"]
    finally:
        stub.stop()


def test_a_broken_installed_plugin_leaves_serve_serving(python: str, tmp_path: Path) -> None:
    config: dict[str, Any] = {
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "adapters": {"console": {"enabled": False}, "webhook": {"token": TOKEN}},
        "plugins": [{"module": "echo", "settings": {"prefix": ""}}],
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    checked = _run(python, path, "check")
    assert checked.returncode == 1
    assert "plugin echo does not load: plugins[0].settings.prefix: String should have" in (
        checked.stderr
    )
    with serve(config, python=python) as base:
        health = httpx.get(f"{base}/healthz", timeout=10).json()
        assert health["plugins"]["echo"] == "failed"
        status = httpx.get(f"{base}/v1/status", headers=_auth(), timeout=10).json()
        echo = next(p for p in status["plugins"] if p["name"] == "echo")
        assert echo["error"].startswith("plugins[0].settings.prefix: String should have")
        assert _say(base, "/echo hello")  # answered: an unknown command, not a crash


def _auth() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


def _say(base: str, words: str) -> list[str]:
    body = {"chat_id": "g1", "chat_type": "group", "sender_id": "u1", "sender_name": "Alice",
            "text": words, "mentions_bot": True}  # fmt: skip
    response = httpx.post(f"{base}/v1/messages", json=body, headers=_auth(), timeout=60)
    assert response.status_code == 200, response.text
    return [reply["text"] for reply in response.json()["replies"]]
