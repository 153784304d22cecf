"""`groupmate plugin new NAME`: the project it writes, checked as its author would check
it (ruff, mypy --strict) and, in a fresh venv, installed and tested (slow)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

from groupmate.bot.cli import main
from groupmate.bot.scaffold import PluginNames, ScaffoldError, new_plugin, render
from tests.docs_pages import page

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LONGEST = "a_name_of_the_longest_kind7"  # 27 characters: every line still fits


def _scaffold(tmp_path: Path, name: str) -> Path:
    target, _ = new_plugin(name, tmp_path / f"groupmate-{name}")
    return target


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", str(cwd)), **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_plugin_new_writes_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["plugin", "new", "weather"]) == 0
    project = tmp_path / "groupmate-weather"
    assert sorted(str(p.relative_to(project)) for p in project.rglob("*") if p.is_file()) == [
        "README.md",
        "groupmate_weather/__init__.py",
        "groupmate_weather/py.typed",
        "pyproject.toml",
        "tests/test_weather.py",
    ]
    out = capsys.readouterr().out
    assert "groupmate-weather" in out and "pip install -e '.[test]'" in out

    meta = tomllib.loads((project / "pyproject.toml").read_text())
    assert meta["build-system"]["build-backend"] == "setuptools.build_meta"
    assert meta["project"]["name"] == "groupmate-weather"
    assert meta["project"]["version"] == "0.1.0"
    assert meta["project"]["dependencies"] == ["groupmate"]
    assert meta["project"]["optional-dependencies"]["test"] == [
        "pytest>=8",
        "pytest-asyncio>=0.24",
    ]
    # The checks the README names (ruff, mypy --strict) come with the dev extra.
    assert meta["project"]["optional-dependencies"]["dev"] == [
        "groupmate-weather[test]",
        "ruff>=0.6",
        "mypy>=1.11",
    ]
    assert meta["project"]["entry-points"]["groupmate.plugins"] == {"weather": "groupmate_weather"}
    assert meta["tool"]["setuptools"]["packages"]["find"]["include"] == ["groupmate_weather*"]
    assert meta["tool"]["setuptools"]["package-data"] == {"groupmate_weather": ["py.typed"]}
    assert meta["tool"]["pytest"]["ini_options"]["asyncio_mode"] == "auto"

    module = (project / "groupmate_weather" / "__init__.py").read_text()
    tree = ast.parse(module)
    tools = [
        node.name
        for node in tree.body
        if isinstance(node, ast.AsyncFunctionDef)
        and any("tool_function" in ast.unparse(d) for d in node.decorator_list)
    ]
    assert tools == ["weather", "weather_last", "weather_drop"]
    assert "class Settings(BaseModel):" in module
    assert 'plugin = Plugin("weather", settings=Settings)' in module
    assert 'command="weather"' in module
    # A command taking a whole number, and one taking a list.
    assert 'command="weather_last"' in module and "count: int = Field(ge=1, le=10" in module
    assert 'command="weather_drop"' in module and "cities: list[str] = Field(" in module
    assert "store: PluginStore" in module
    assert "httpx" not in module and "http" not in module  # no network: its test is offline

    test = (project / "tests" / "test_weather.py").read_text()
    assert "groupmate_bot" in test
    assert 'await bot.say("/weather Berlin")' in test
    assert 'bot.model.calls("weather", {"city": "Berlin"})' in test
    assert 'bot.store("weather", chat="group-1")' in test

    readme = (project / "README.md").read_text()
    assert "pip install -e '.[dev]'" in readme
    assert "plugins:\n  - module: groupmate_weather" in readme
    assert "${MY_API_KEY}" in readme  # the template's `$$` came out as one `$`
    assert "pytest" in readme


def test_a_hyphenated_name_becomes_a_module_name(tmp_path: Path) -> None:
    names = PluginNames.of("dice-roll")
    assert (names.name, names.project, names.module, names.camel) == (
        "dice_roll",
        "groupmate-dice-roll",
        "groupmate_dice_roll",
        "DiceRoll",
    )
    target, _ = new_plugin("dice-roll", tmp_path / "out")
    meta = tomllib.loads((target / "pyproject.toml").read_text())
    assert meta["project"]["entry-points"]["groupmate.plugins"] == {
        "dice_roll": "groupmate_dice_roll"
    }
    assert (target / "groupmate_dice_roll" / "__init__.py").exists()
    assert (target / "tests" / "test_dice_roll.py").exists()


@pytest.mark.parametrize(
    "name",
    [
        *("", "9lives", "Weather", "two words", "a" * 28, "dots.bad", "_private", "for"),
        *("ünï", "ends_"),
        # The bot's own names: a plugin with them would not load or would lose its command.
        *("plugin", "tool_function", "summary", "core", "help", "budget", "remind", "start"),
        *("web_search", "reminder_set", "tz", "read"),
    ],
)
def test_an_invalid_name_is_refused_in_one_line(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["plugin", "new", name]) == 2
    err = capsys.readouterr().err
    assert err.startswith("groupmate: invalid plugin name")
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_a_directory_with_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    assert main(["plugin", "new", "weather", "--dir", str(taken)]) == 2
    err = capsys.readouterr().err
    assert err == f"groupmate: {taken} exists and is not empty; choose another --dir\n"
    assert [p.name for p in taken.iterdir()] == ["notes.txt"]

    a_file = tmp_path / "a-file"
    a_file.write_text("")
    assert main(["plugin", "new", "weather", "--dir", str(a_file)]) == 2
    assert capsys.readouterr().err == f"groupmate: {a_file} exists and is not a directory\n"

    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["plugin", "new", "weather", "--dir", str(empty)]) == 0
    assert (empty / "groupmate_weather" / "__init__.py").exists()


def test_the_refusal_is_the_command_s_exit_status_without_a_traceback(tmp_path: Path) -> None:
    done = _run(
        [sys.executable, "-m", "groupmate.bot.cli", "plugin", "new", "Not-Valid"],
        tmp_path,
        PYTHONPATH=str(ROOT),
    )
    assert done.returncode == 2
    assert done.stderr.startswith("groupmate: invalid plugin name 'Not-Valid'")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_scaffold_error_is_a_value_error() -> None:
    with pytest.raises(ScaffoldError, match="Python keyword"):
        PluginNames.of("class")
    assert issubclass(ScaffoldError, ValueError)


def test_the_readme_says_how_to_write_a_plugin() -> None:
    # The developer's guide: handlers, then plugins.
    nav = (ROOT / "mkdocs.yml").read_text()
    assert nav.index("developers/handlers.md") < nav.index("developers/plugins.md")
    section = page("developers/plugins.md")
    assert "groupmate plugin new weather" in section
    for block in re.findall(r"```python\n(.*?)```", section, re.S):
        ast.parse(block)
    # The kit's example is the generated test, in short.
    generated = render(PluginNames.of("weather"))["tests/test_weather.py"]
    assert 'PLUGIN = {"module": "groupmate_weather", "settings": {"greeting": "Hi"}}' in generated
    assert 'PLUGIN = {"module": "groupmate_weather", "settings": {"greeting": "Hi"}}' in section
    assert 'assert await bot.say("say hello to Berlin") == ["Hi, Berlin!"]' in generated
    assert 'assert await bot.say("say hello to Berlin") == ["Hi, Berlin!"]' in section


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.mark.parametrize("name", ["weather", "x", LONGEST])
def test_the_generated_code_passes_ruff_and_mypy_strict(
    name: str, tmp_path: Path, mypy_cache: Path
) -> None:
    project = _scaffold(tmp_path, name)
    for check in (["ruff", "check", "."], ["ruff", "format", "--check", "."]):
        done = _run([str(BIN / check[0]), *check[1:]], project)
        assert done.returncode == 0, done.stdout + done.stderr
    # groupmate is installed in this venv as an editable install, which mypy cannot
    # follow: it finds the package in the repository instead, and, as for an installed
    # package, checks only the plugin's own files strictly.
    done = _run(
        [
            str(BIN / "mypy"),
            "--strict",
            "--follow-imports=silent",
            "--cache-dir",
            str(mypy_cache),
            ".",
        ],
        project,
        MYPYPATH=str(ROOT),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in 2 source files" in done.stdout


def test_the_generated_projects_own_tests_pass(tmp_path: Path) -> None:
    """Its tests, with nothing installed: groupmate from this checkout and the plugin
    from the project's folder (PYTHONPATH), the kit's fixtures from groupmate's pytest
    plugin."""
    project = _scaffold(tmp_path, "weather")
    tests = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        project,
        PYTHONPATH=os.pathsep.join([str(project), str(ROOT)]),
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "4 passed" in tests.stdout


@pytest.mark.slow
def test_the_generated_plugin_installs_and_its_tests_pass(tmp_path: Path) -> None:
    """In a fresh venv that sees this one's packages (groupmate and its dependencies,
    pytest) through a .pth file, as a plugin author's venv would have them installed."""
    project = _scaffold(tmp_path, "weather")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        tmp_path,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    # addsitedir (not a bare path line) so the .pth files there run too: the editable
    # install of groupmate is one.
    (Path(purelib) / "groupmate_dev.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    # groupmate and its dependencies from this venv (--no-deps); the build backend from
    # PyPI, as for any author (with --no-build-isolation, this venv's setuptools 65 would
    # need the `wheel` package, which it does not have, to make an editable install).
    install = _run(
        [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "-e", str(project)],
        tmp_path,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    listed = _run(
        [
            str(python),
            "-c",
            "from importlib.metadata import entry_points;"
            "print([(e.name, e.value) for e in entry_points(group='groupmate.plugins')])",
        ],
        tmp_path,
    )
    assert "('weather', 'groupmate_weather')" in listed.stdout, listed.stderr
    tests = _run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"], project)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "4 passed" in tests.stdout
