"""The tool-selection corpus (tests/selection) is well-formed: its labels name tools that
exist, both languages are there in number, every tool is somebody's right answer, and
there are enough tools for selection to matter."""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from groupmate.function_calls.handlers import builtin_tools
from groupmate.function_calls.plugins import PluginSet, PluginSpec, load_plugins
from tests.selection.capture_mcp_tools import SERVERS, list_tools, server_params
from tests.selection.catalog import (
    PLUGIN_MODULES,
    load_corpus,
    mcp_exposed_names,
    mcp_tool_lists,
)

HISTORY_LINE = re.compile(r"[^:\n]{1,40}: \S", re.DOTALL)


def plugins() -> PluginSet:
    taken = {tool.name: "a built-in tool" for tool in builtin_tools()}
    return load_plugins([PluginSpec(module=module) for module in PLUGIN_MODULES], taken=taken)


def model_tools() -> dict[str, set[str]]:
    """Every tool the model may be offered, by where it comes from."""
    return {
        "builtin": {tool.name for tool in builtin_tools() if tool.for_model},
        **{plugin.name: {tool.name for tool in plugin.tools} for plugin in plugins().loaded},
        **{f"mcp:{server}": set(names) for server, names in mcp_exposed_names().items()},
    }


def test_the_plugins_load_beside_the_builtins() -> None:
    loaded = plugins()
    assert loaded.failed == []
    assert {plugin.name for plugin in loaded.loaded} == {"home_pack", "office_pack"}
    for plugin in loaded.loaded:
        assert len(plugin.tools) >= 40, plugin.name
        assert all(tool.description for tool in plugin.tools)
    office = next(plugin for plugin in loaded.loaded if plugin.name == "office_pack")
    assert all(re.search(r"[\u4e00-\u9fff]", tool.description) for tool in office.tools)


def test_the_mcp_tool_lists_are_the_servers_answers() -> None:
    lists = mcp_tool_lists()
    assert list(lists) == list(SERVERS)
    for server, tools in lists.items():
        assert tools, server
        for tool in tools:
            assert set(tool) == {"name", "description", "inputSchema"}, (server, tool)
            assert tool["inputSchema"].get("type") == "object", (server, tool["name"])
    assert mcp_exposed_names()["time"] == ["time__get_current_time", "time__convert_time"]


def test_tool_names_are_unique_across_sources() -> None:
    counted = Counter(name for names in model_tools().values() for name in names)
    assert [name for name, n in counted.items() if n > 1] == []
    everything = {tool.name for tool in builtin_tools()}  # the hidden built-ins too
    for source, names in model_tools().items():
        if source != "builtin":
            assert not names & everything, source


def test_there_are_enough_tools() -> None:
    sizes = {source: len(names) for source, names in model_tools().items()}
    assert sum(sizes.values()) >= 150, sizes
    assert len(builtin_tools()) + sum(n for s, n in sizes.items() if s != "builtin") >= 150


def test_the_corpus_is_well_formed() -> None:
    corpus = load_corpus()
    assert len(corpus) >= 320
    languages = Counter(entry.lang for entry in corpus)
    assert languages["en"] >= 140 and languages["zh"] >= 140, languages
    texts = Counter((entry.history, entry.text) for entry in corpus)
    assert [text for text, n in texts.items() if n > 1] == []
    for entry in corpus:
        assert len(entry.tools) <= 3, entry
        assert len(set(entry.tools)) == len(entry.tools), entry
        for line in entry.history:
            assert HISTORY_LINE.match(line), (entry.text, line)
        if entry.lang == "zh":
            assert re.search(r"[\u4e00-\u9fff]", entry.text) or not entry.tools, entry
    assert sum(1 for entry in corpus if not entry.tools) >= 25  # small talk
    assert sum(1 for entry in corpus if entry.history) >= 15  # follow-ups


def test_every_label_exists_and_every_tool_is_labelled() -> None:
    known = set().union(*model_tools().values())
    labelled = Counter(name for entry in load_corpus() for name in entry.tools)
    assert sorted(set(labelled) - known) == []
    assert sorted(known - set(labelled)) == []


@pytest.mark.slow
def test_the_servers_still_list_those_tools() -> None:
    """The stored lists against the installed servers: same servers, same tool names
    (rerun `python -m tests.selection.capture_mcp_tools` after an upgrade)."""

    async def names(server: str, work: Path) -> list[str]:
        tools: list[dict[str, Any]] = await list_tools(server_params(server, work))
        return [tool["name"] for tool in tools]

    stored = {
        server: [tool["name"] for tool in tools] for server, tools in mcp_tool_lists().items()
    }
    with tempfile.TemporaryDirectory() as tmp:
        for server in SERVERS:
            work = Path(tmp) / server
            work.mkdir()
            assert asyncio.run(names(server, work)) == stored[server], server


async def test_a_tool_of_each_plugin_runs_in_the_bot(groupmate_bot: Any) -> None:
    bot = await groupmate_bot(plugins=list(PLUGIN_MODULES))
    bot.model.calls("lights_set", {"room": "kitchen", "power": "off"})
    assert await bot.say("@groupmate kitchen lights off") == ["✅ lights in kitchen updated"]
    bot.model.calls("meeting_room_book", {"start": "明天 10:00", "people": 6})
    assert await bot.say("@groupmate 明天上午10点订个6人会议室") == ["✅ 会议室已预订"]
