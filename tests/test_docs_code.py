"""Every code block of the documentation does what it shows.

The convention (docs/developers/plugins.md says it to plugin authors too):
- ```python blocks run. One whose first line is `# file: NAME.py` is written into a fresh
  project as that file (a plugin and its tests are two blocks); the project's `test_*.py`
  files are run by pytest with the test kit's fixtures. A page's other python blocks run
  together, in order, as one script, against a model server (the test kit's stub) named
  by OPENAI_BASE_URL and OPENAI_API_KEY.
- ```yaml blocks that are groupmate configs (their top-level keys are sections of
  `config.yaml`) load with `parse_config`; `${NAME}` references get placeholder values.
- ```console and ```sh lines that run `groupmate X` name a command `groupmate` has.
- A block marked `# not run: why` on its first line is skipped, and counted: few may be.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from groupmate.bot.cli import parser
from groupmate.bot.config import Config, ConfigError, parse_config
from groupmate.testing.stub_llm import Reply, StubLLM
from tests.docs_pages import ROOT, Block, blocks, pages

pytestmark = pytest.mark.slow

_FILE = re.compile(r"# file: (?P<name>[\w/]+\.py)\s*$")
_NOT_RUN = "# not run:"
_ENV = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)")
_MOST_NOT_RUN = 3
# Writes the API reference's entries from groupmate.__all__ (mkdocs.yml's hooks)
API_HOOK = "docs/hooks/api_reference.py"


def _named(kind: str) -> list[Path]:
    return [path for path in pages() if blocks(path, kind)]


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _env(stub: StubLLM, folder: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(folder),
        "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)]),
        "OPENAI_BASE_URL": stub.base_url,
        "OPENAI_API_KEY": "sk-docs",
    }


@pytest.mark.parametrize("path", _named("python"), ids=_id)
def test_the_python_blocks_run(path: Path, stub: StubLLM, tmp_path: Path) -> None:
    # Whatever a script asks the model, it gets a plain answer: the blocks show the API
    # at work, and what a scripted model makes of them is the kit's pages' own tests.
    stub.fallback = Reply(content="Done.")
    script: list[str] = []
    for block in blocks(path, "python"):
        named = _FILE.match(block.first_line)
        if named:
            target = tmp_path / named["name"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.body)
        elif not block.first_line.startswith(_NOT_RUN):
            script.append(block.body)
    env = _env(stub, tmp_path)
    tests = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("test_*.py"))
    if tests:
        run = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
        done = subprocess.run(
            [*run, "-o", "asyncio_mode=auto", *tests],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
        assert " passed" in done.stdout and " skipped" not in done.stdout, done.stdout[-2000:]
    if script:
        (tmp_path / "page_script.py").write_text("\n\n".join(script))
        done = subprocess.run(
            [sys.executable, "page_script.py"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert tests or script, f"{_id(path)}: every python block is marked not run"


def _is_config(block: Block) -> bool:
    if block.first_line.startswith(_NOT_RUN):
        return False
    try:
        data = yaml.safe_load(block.body)
    except yaml.YAMLError:
        return block.first_line.strip() == "# config"
    if block.first_line.strip() == "# config":
        return True
    return isinstance(data, dict) and bool(data) and set(data) <= set(Config.model_fields)


@pytest.mark.parametrize("path", _named("yaml"), ids=_id)
def test_the_config_blocks_load(path: Path) -> None:
    configs = [block for block in blocks(path, "yaml") if _is_config(block)]
    for block in configs:
        environ = {match["name"]: "placeholder" for match in _ENV.finditer(block.body)}
        try:
            parse_config(yaml.safe_load(block.body), environ)
        except ConfigError as exc:
            pytest.fail(f"{_id(path)}: a config block does not load: {exc}\n{block.body}")


def _commands() -> set[str]:
    subcommands = parser()._subparsers  # argparse keeps its actions only here
    assert subcommands is not None
    names: set[str] = set()
    for action in subcommands._group_actions:
        names |= set(getattr(action, "choices", {}) or {})
    return names


def test_the_commands_shown_are_groupmates() -> None:
    known = _commands()
    shown: list[tuple[str, str]] = []
    for path in pages():
        for block in [*blocks(path, "console"), *blocks(path, "sh"), *blocks(path, "bash")]:
            # A command continued on the next line (`\` at the end) is one line.
            for line in block.body.replace("\\\n", " ").splitlines():
                line = line.removeprefix("$ ").strip()
                words = shlex.split(line, comments=True) if line else []
                # Past any VAR=value the line sets first.
                while words and re.match(r"^[A-Z_]+=", words[0]):
                    words.pop(0)
                if len(words) < 2 or words[0] != "groupmate":
                    continue
                rest = [w for w in words[1:] if not w.startswith("-")]
                options = words[1:]
                # `groupmate --config FILE serve`: the command follows the option's value.
                if "--config" in options:
                    at = options.index("--config")
                    rest = [w for w in options[:at] + options[at + 2 :] if not w.startswith("-")]
                if rest:
                    shown.append((_id(path), rest[0]))
    assert shown, "no page shows a groupmate command"
    unknown = [(page, name) for page, name in shown if name not in known]
    assert unknown == [], f"commands groupmate does not have: {unknown}"


def test_few_blocks_are_left_unrun() -> None:
    skipped = [
        _id(path)
        for path in pages()
        for block in blocks(path)
        if block.lang in ("python", "yaml") and block.first_line.startswith(_NOT_RUN)
    ]
    assert len(skipped) <= _MOST_NOT_RUN, skipped


def _nav_pages(entries: object) -> list[str]:
    if isinstance(entries, str):
        return [entries]
    if isinstance(entries, list):
        return [page for entry in entries for page in _nav_pages(entry)]
    if isinstance(entries, dict):
        return [page for value in entries.values() for page in _nav_pages(value)]
    return []


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    # mkdocs.yml's theme tags (!!python/name) are not used: plain YAML reads it.
    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"])
    written = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(set(nav)) == written
    assert len(nav) == len(set(nav)), "a page is in the nav twice"


def test_the_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_the_api_reference_documents_every_public_name() -> None:
    """mkdocstrings cannot follow `groupmate`'s lazy exports: the build's hook
    (docs/hooks/api_reference.py) names each public name where it is defined, at
    docs/reference/api.md's marker."""
    import importlib.util

    import groupmate

    spec = importlib.util.spec_from_file_location("api_reference", ROOT / API_HOOK)
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    api = SimpleNamespace(file=SimpleNamespace(src_uri="reference/api.md"))
    page = hook.on_page_markdown((ROOT / "docs" / "reference" / "api.md").read_text(), api)
    targets = re.findall(r"^::: (\S+)$", page, re.M)
    documented = {}
    for target in targets:
        module, _, name = target.rpartition(".")
        if module.startswith("groupmate."):
            documented[name] = getattr(importlib.import_module(module), name, None)
    assert sorted(set(groupmate.__all__) - set(documented)) == []
    for name in groupmate.__all__:
        assert documented[name] is getattr(groupmate, name), f"{name}: not the public object"
    assert "groupmate.testing" in targets
