from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from groupmate.testing import stub_llm as s
from tests.docs_pages import page

ROOT = Path(__file__).resolve().parent.parent


def _python_blocks(name: str = "developers/handlers.md") -> list[str]:
    return re.findall(r"```python\n(.*?)```", page(name), re.S)


def _embedding_block() -> str:
    [block] = [b for b in _python_blocks("platforms/index.md") if "Bot.from_config" in b]
    return block


def test_handler_example_is_at_most_15_lines() -> None:
    handler = _python_blocks()[0]
    assert "@tool_function" in handler
    assert len(handler.strip().splitlines()) <= 15


def test_readme_example_runs_end_to_end(stub) -> None:
    stub.script(s.calls(("split_bill", {"total": 90, "people": 4})))
    script = "\n".join(_python_blocks()[:2])
    env = {
        "PATH": os.environ.get("PATH", ""),
        "OPENAI_BASE_URL": stub.base_url,
        "OPENAI_API_KEY": "sk-readme",
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Ana, that's 22.50 each."
    [request] = stub.requests
    [tool] = request["tools"]
    assert tool["function"]["name"] == "split_bill"
    assert "split 90 € between 4" in json.dumps(tool, ensure_ascii=False)
    assert tool["function"]["parameters"]["properties"]["people"]["minimum"] == 2


def test_embedding_example_runs(tmp_path: Path) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _embedding_block()],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "every Monday at 09:00: send the report" in done.stdout
    assert (tmp_path / "data" / "groupmate.db").exists()


def test_the_mcp_and_openapi_example_is_a_valid_config() -> None:
    import yaml

    from groupmate.bot.config import parse_config

    section = page("developers/mcp-and-openapi.md")
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    config = parse_config(yaml.safe_load(block.group(1)), environ={"DOCS_MCP_TOKEN": "t"})
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
    import yaml

    from groupmate.bot.config import parse_config

    section = page("guide/search-and-links.md")
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block is not None
    config = parse_config(yaml.safe_load(block.group(1)), environ={"BRAVE_API_KEY": "k"})
    search = config.search
    assert [p.label() for p in search.providers] == [
        "searxng (http://127.0.0.1:8888)",
        "brave (https://api.search.brave.com)",
    ]
    assert search.cache_ttl == 600 and search.per_chat_per_hour == 30
    assert search.fetch.enabled and search.fetch.max_bytes == 2_000_000
