"""The tool-selection data: labelled chat messages and the tools they may be offered.

The question measured: given one message in a group chat (and the lines before it),
which of the bot's tools should the language model be shown? The tools are

- the built-ins the model sees (`builtin_tools()` with `for_model`),
- two plugins written for this: `tests.selection.plugins.home_pack` (English) and
  `tests.selection.plugins.office_pack` (Chinese descriptions), see `PLUGIN_MODULES`,
- six real MCP servers' tools as they list them (`mcp_tools.json`, written by
  `python -m tests.selection.capture_mcp_tools`), exposed as `<server>__<name>`.

`corpus.yaml` holds the messages, about half English and half Chinese, each labelled
with every tool that can rightly serve it (`[]` for small talk and questions the model
answers by itself); `history` holds the earlier chat lines ("Name: text") that a
follow-up such as "and snooze it 10 minutes" depends on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

from groupmate.function_calls.remote.naming import default_prefix, exposed_name

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus.yaml"
MCP_TOOLS = HERE / "mcp_tools.json"
PLUGIN_MODULES = ("tests.selection.plugins.home_pack", "tests.selection.plugins.office_pack")

Lang = Literal["en", "zh"]


@dataclass(frozen=True, slots=True)
class CorpusEntry:
    """One labelled message: `tools` are the exposed names of every tool that can serve
    it (empty: none is needed), `history` the chat lines before it, oldest first."""

    text: str
    lang: Lang
    tools: tuple[str, ...]
    history: tuple[str, ...] = ()


def _entry(raw: Any, index: int) -> CorpusEntry:
    where = f"{CORPUS.name}[{index}]"
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: an entry is a mapping")
    unknown = set(raw) - {"text", "lang", "tools", "history"}
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    text, lang = raw.get("text"), raw.get("lang")
    tools, history = raw.get("tools"), raw.get("history") or []
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{where}: text is a non-empty string")
    if lang not in ("en", "zh"):
        raise ValueError(f"{where}: lang is en or zh, not {lang!r}")
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        raise ValueError(f"{where}: tools is a list of tool names")
    if not isinstance(history, list) or not all(isinstance(h, str) for h in history):
        raise ValueError(f"{where}: history is a list of chat lines")
    return CorpusEntry(text, lang, tuple(tools), tuple(history))


@cache
def _corpus() -> tuple[CorpusEntry, ...]:
    raw = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    if not isinstance(raw, list):
        raise ValueError(f"{CORPUS.name}: a list of entries")
    return tuple(_entry(item, index) for index, item in enumerate(raw))


def load_corpus() -> list[CorpusEntry]:
    """Every labelled message of corpus.yaml, in its order."""
    return list(_corpus())


def mcp_tool_lists() -> dict[str, list[dict[str, Any]]]:
    """Each MCP server's tools as it listed them: {"time": [{"name", "description",
    "inputSchema"}, …], …}, the names as the server has them (not yet prefixed)."""
    loaded: dict[str, list[dict[str, Any]]] = json.loads(MCP_TOOLS.read_text(encoding="utf-8"))
    return loaded


def mcp_exposed_names() -> dict[str, list[str]]:
    """Each server's tools by the names the model sees them under: `<server>__<name>`."""
    return {
        server: [exposed_name(default_prefix(server), tool["name"]) for tool in tools]
        for server, tools in mcp_tool_lists().items()
    }
