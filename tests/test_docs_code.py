"""Every code block in the docs runs (issue 40), README.md's and docs/**/*.md's:

- ```python: a page's blocks run together, in order, as one script in a fresh folder
  (with the stub LLM's address in OPENAI_BASE_URL), except a block whose first line is
  `# file: NAME.py`, written there as that file for the others to import, and a block
  that defines `test_*` functions, run by pytest (the test kit's fixtures) in one
  subprocess per page. A block that must not run says so on its first line,
  `# not run: <why>`; those are counted, and kept few.
- ```yaml that is a groupmate config (its first key is one the config knows, or its
  first line is `# config`) loads with parse_config, every `${NAME}` given a value.
- ```sh/```console: each `groupmate SUBCOMMAND` named exists (its --help works).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from groupmate.bot.cli import parser
from groupmate.bot.config import Config, parse_config
from groupmate.testing import stub_llm as s
from groupmate.testing.stub_llm import StubLLM
from tests.docs_pages import ROOT, Block, blocks, code, page, pages

NOT_RUN = "# not run:"
FILE = re.compile(r"^# file: (?P<name>\w+\.py)$")
TEST = re.compile(r"^(async )?def test_\w+", re.M)
# The blocks that must not run, at most: a reason each, and few of them.
MOST_NOT_RUN = 5


def every_block() -> Iterator[Block]:
    for path in pages():
        yield from blocks(path)


def python_pages() -> list[str]:
    found = {b.page for b in every_block() if b.lang == "python" and not is_skipped(b)}
    return sorted(found)


def is_skipped(block: Block) -> bool:
    return block.first_line.startswith(NOT_RUN)


def run_page(name: str, stub: StubLLM, folder: Path) -> subprocess.CompletedProcess[str]:
    """Runs a page's python blocks in `folder`: the test blocks with pytest (failing the
    test if one fails), then the script; the script's run."""
    python = [b for b in blocks(ROOT / name) if b.lang == "python" and not is_skipped(b)]
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(folder),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(folder)]),
        "OPENAI_BASE_URL": stub.base_url,
        "OPENAI_API_KEY": "sk-docs",
    }
    tests: list[str] = []
    script: list[str] = []
    for index, block in enumerate(python):
        named = FILE.match(block.first_line)
        if named:
            (folder / named["name"]).write_text(block.code)
        elif TEST.search(block.code):
            tests.append(f"test_docs_block_{index}.py")
            (folder / tests[-1]).write_text(block.code)
        else:
            script.append(block.code)
    if tests:
        options = ["-q", "-p", "no:cacheprovider", "-o", "asyncio_mode=auto"]
        command = [sys.executable, "-m", "pytest", *options, "--rootdir", str(folder), *tests]
        ran = subprocess.run(
            command, cwd=folder, env=env, capture_output=True, text=True, timeout=300
        )
        assert ran.returncode == 0, f"{name}'s test blocks:\n{ran.stdout}\n{ran.stderr}"
    (folder / "page_script.py").write_text("\n\n".join(script))
    return subprocess.run(
        [sys.executable, "page_script.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("name", python_pages())
def test_a_pages_python_blocks_run(name: str, stub: StubLLM, tmp_path: Path) -> None:
    done = run_page(name, stub, tmp_path)
    assert done.returncode == 0, f"{name}:\n{done.stderr}"


def test_blocks_that_do_not_run_say_why_and_are_few() -> None:
    skipped = [b for b in every_block() if is_skipped(b)]
    for block in skipped:
        assert block.first_line.removeprefix(NOT_RUN).strip(), f"{block.page}: no reason"
    assert len(skipped) <= MOST_NOT_RUN, [b.page for b in skipped]


def config_blocks() -> list[Block]:
    found = []
    for block in every_block():
        if block.lang != "yaml":
            continue
        loaded = yaml.safe_load(block.code)
        known = isinstance(loaded, dict) and next(iter(loaded), None) in Config.model_fields
        if known or block.first_line == "# config":
            found.append(block)
    return found


@pytest.mark.parametrize("block", config_blocks(), ids=lambda b: b.page)
def test_a_config_in_the_docs_loads(block: Block) -> None:
    # Every referenced variable set: the config's shape is what is checked, not secrets
    names = re.findall(r"\$\{(\w+)", block.code)
    parse_config(yaml.safe_load(block.code) or {}, environ=dict.fromkeys(names, "x"))


def commanded(before: list[str]) -> bool:
    """Whether a word after these is a command, not an argument (`podman build -t
    groupmate .` names an image): first, or after `&&`, `;`, `|`, `exec` (in a container,
    after its name too), or after environment assignments only."""
    if all("=" in word and not word.startswith("-") for word in before):
        return True
    last = before[-1]
    return last in ("&&", "||", "|", ";", "exec", "sudo") or (
        len(before) >= 2 and before[-2] == "exec"
    )


def named_subcommands() -> set[str]:
    """The subcommands the sh and console blocks run: `groupmate [--config F] NAME …`."""
    named = set()
    for block in every_block():
        if block.lang not in ("sh", "console", "bash", "shell"):
            continue
        for line in block.code.replace("\\\n", " ").splitlines():
            words = shlex.split(line.removeprefix("$ "), comments=True)
            for at, word in enumerate(words):
                if word.rsplit("/", 1)[-1] != "groupmate" or not commanded(words[:at]):
                    continue
                rest = words[at + 1 :]
                while rest and rest[0].startswith("-"):
                    rest = rest[2:] if rest[0] in ("--config", "-c") else rest[1:]
                if rest:
                    named.add(rest[0])
    return named


def test_the_commands_the_docs_name_exist(capsys: pytest.CaptureFixture[str]) -> None:
    named = named_subcommands()
    assert {"serve", "check", "backup"} <= named  # the docs' own commands are found
    for subcommand in sorted(named):
        with pytest.raises(SystemExit) as stopped:
            parser().parse_args([subcommand, "--help"])
        assert stopped.value.code == 0, f"groupmate {subcommand}: {capsys.readouterr().err}"
        capsys.readouterr()


# What particular pages show, beyond running: the handler example, short and answering
# as written; the embedding example; the MCP, OpenAPI and search configs.


def test_the_handler_example_is_at_most_15_lines() -> None:
    for name in ("developers/handlers.md", "README.md"):
        handler = code(name, "python")[0]
        assert "@tool_function" in handler
        assert len(handler.strip().splitlines()) <= 15


def test_the_handler_example_runs_end_to_end(stub: StubLLM, tmp_path: Path) -> None:
    stub.script(s.calls(("split_bill", {"total": 90, "people": 4})))
    done = run_page("docs/developers/handlers.md", stub, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Ana, that's 22.50 each."
    [request] = stub.requests
    [tool] = request["tools"]
    assert tool["function"]["name"] == "split_bill"
    assert "split 90 € between 4" in json.dumps(tool, ensure_ascii=False)
    assert tool["function"]["parameters"]["properties"]["people"]["minimum"] == 2


def test_the_embedding_example_runs(stub: StubLLM, tmp_path: Path) -> None:
    done = run_page("docs/platforms/index.md", stub, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "every Monday at 09:00: send the report" in done.stdout
    assert (tmp_path / "data" / "groupmate.db").exists()


def test_the_mcp_and_openapi_example_is_a_valid_config() -> None:
    [block] = code("developers/mcp-and-openapi.md", "yaml")[:1]
    config = parse_config(yaml.safe_load(block), environ={"DOCS_MCP_TOKEN": "t"})
    servers = config.mcp.servers
    assert [servers[name].kind for name in ("time", "sqlite", "docs", "legacy")] == [
        "stdio",
        "stdio",
        "http",
        "sse",
    ]
    assert servers["docs"].plain_headers() == {"Authorization": "Bearer t"}
    assert config.mcp.serve.chat_id == "tg:-1001234567890"
    assert config.openapi.servers[0].tools.admits("get_current_local_time")


def test_the_search_example_is_a_valid_config() -> None:
    [block] = code("guide/search-and-links.md", "yaml")[:1]
    config = parse_config(yaml.safe_load(block), environ={"BRAVE_API_KEY": "k"})
    search = config.search
    assert [p.label() for p in search.providers] == [
        "searxng (http://127.0.0.1:8888)",
        "brave (https://api.search.brave.com)",
    ]
    assert search.cache_ttl == 600 and search.per_chat_per_hour == 30
    assert search.fetch.enabled and search.fetch.max_bytes == 2_000_000
    assert "web_search" in page("guide/search-and-links.md")
