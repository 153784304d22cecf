"""How well per-message tool selection serves the corpus: recall (a right tool is among
those offered), small talk offered nothing, and the size of what is sent.

Every message goes through `FunctionCallLLM.first_request` with the defaults a new
user gets (no `context_tokens`: the 4,096-token window assumed for a server that says
nothing, 512 tokens for the answer), as an ordinary member of a group chat, with all
157 tools of the corpus: nothing is sent, what would be sent is measured.

    .venv/bin/python -m tests.selection.measure            # both modes, a table
    .venv/bin/python -m tests.selection.measure --misses   # and each one missed of the
                                                           # half tuned on (--misses all)

With the llama-cpp-python venv that `make eval` builds (.cache/llama-venv) and the
Qwen2.5 GGUF in its cache, the prompts are also counted by Qwen2.5's own tokenizer.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from groupmate.function_calls import ChatTurn, FunctionCallLLM, MessageContext, ToolRegistry
from groupmate.function_calls._shaping import BOT_NAME
from groupmate.function_calls.deps import Deps
from groupmate.function_calls.handlers import BUILTIN_MODULES, builtin_tools
from groupmate.function_calls.plugins import PluginSpec, load_plugins
from groupmate.function_calls.provided import BUILTIN_TYPES
from groupmate.function_calls.remote.external import external_tool
from groupmate.function_calls.remote.naming import default_prefix, exposed_name
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.selection import FIND_TOOLS
from groupmate.function_calls.server_info import DEFAULT_CONTEXT_TOKENS
from groupmate.function_calls.usage import estimate_tokens
from tests.selection.catalog import PLUGIN_MODULES, CorpusEntry, load_corpus, mcp_tool_lists
from tests.tool_venv import ROOT

Mode = str  # "native" | "prompt"


async def _unused(ctx: MessageContext, arguments: dict[str, Any]) -> FunctionResult:
    raise RuntimeError("the measurement runs no tool")


@cache
def corpus_tools() -> ToolRegistry:
    """Every tool of the corpus: the built-ins the model sees, both plugins, and the MCP
    servers' tools as they listed them (their schemas, exposed names and effects)."""
    registry = ToolRegistry([tool for tool in builtin_tools() if tool.for_model])
    loaded = load_plugins([PluginSpec(module=module) for module in PLUGIN_MODULES])
    if loaded.failed:
        raise RuntimeError(f"the corpus plugins do not load: {loaded.failed}")
    for tool in loaded.toolset():
        registry.register(tool)
    for server, listed in mcp_tool_lists().items():
        for item in listed:
            name = exposed_name(default_prefix(server), item["name"])
            description = item.get("description") or item["name"]
            registry.register(external_tool(name, description, item["inputSchema"], _unused))
    return registry


@cache
def _every_service() -> Deps:
    """A stand-in for every service a corpus tool asks for, so that each is offered
    (web_search as with a search provider configured): no tool runs here, so none is
    ever used."""
    kinds = {dep.kind for tool in corpus_tools() for dep in tool.deps} | BUILTIN_TYPES
    return Deps({kind: object() for kind in kinds})


def member(chat_id: str = "measure") -> MessageContext:
    """An ordinary member of a group chat, not an admin."""
    return MessageContext(
        chat_id=chat_id,
        chat_type="group",
        sender_id="u-member",
        sender_name="Member",
        timezone="Asia/Shanghai",
        deps=_every_service(),
    )


@dataclass(frozen=True, slots=True)
class Measured:
    entry: CorpusEntry
    offered: tuple[str, ...]  # the tools shown, the finder left out
    finder: bool
    request_text: str  # the request's messages and tools, as JSON
    estimated: int

    for_member: bool  # a labelled tool is one an ordinary member may use

    @property
    def hit(self) -> bool:
        if not self.entry.tools:
            return not self.offered
        return bool(set(self.entry.tools) & set(self.offered))


@cache
def _plugin_of() -> dict[str, str]:
    return {tool.name: tool.plugin for tool in corpus_tools()}


def family(name: str) -> str:
    """The row of the recall table a tool counts in."""
    if "__" in name:
        return f"mcp: {name.split('__', 1)[0]}"
    plugin = _plugin_of().get(name, "")
    return f"built-in: {plugin}" if plugin in BUILTIN_MODULES else f"plugin: {plugin}"


@asynccontextmanager
async def _llm(mode: Mode, tools: ToolRegistry) -> Any:
    llm = FunctionCallLLM(
        model="measure",
        base_url="http://127.0.0.1:9/v1",  # never asked: nothing is sent
        api_key="unused",
        registry=tools,
        tool_mode="native" if mode == "native" else "prompt",
        context_tokens=DEFAULT_CONTEXT_TOKENS,
        http_backend="httpx",
    )
    try:
        yield llm
    finally:
        await llm.aclose()


def _history(entry: CorpusEntry) -> list[ChatTurn]:
    turns = []
    for line in entry.history:
        name, _, said = line.partition(": ")
        role: Literal["user", "assistant"] = "assistant" if name == BOT_NAME else "user"
        turns.append(ChatTurn(role, said, name))
    return turns


async def measure(mode: Mode, entries: Sequence[CorpusEntry] | None = None) -> list[Measured]:
    """Each corpus entry's first request in `mode`."""
    tools = corpus_tools()
    results = []
    async with _llm(mode, tools) as llm:
        for number, entry in enumerate(entries if entries is not None else load_corpus()):
            ctx = member(f"measure-{number}")  # no chat's recent tool use carries over
            first = llm.first_request(ctx, entry.text, _history(entry))
            shown = [c.tool.name for c in first.offer.choices] if first.offer else []
            text = json.dumps(first.messages, ensure_ascii=False)
            if first.tools:
                text += json.dumps(first.tools, ensure_ascii=False, separators=(",", ":"))
            finder = FIND_TOOLS in first.shown
            available = {tool.name for tool in llm.invoker.offered(ctx)}
            for_member = not entry.tools or bool(set(entry.tools) & available)
            results.append(
                Measured(entry, tuple(shown), finder, text, estimate_tokens(text), for_member)
            )
    return results


def qwen_counts(texts: Sequence[str]) -> list[int] | None:
    """Each text's tokens by Qwen2.5's tokenizer, where `make eval` has built it."""
    python = ROOT / ".cache" / "llama-venv" / "bin" / "python"
    from tests.llama_server import QWEN_0_5B

    if not python.exists() or not QWEN_0_5B.path.exists():
        return None
    script = (
        "import json,sys\nfrom llama_cpp import Llama\n"
        "m=Llama(model_path=sys.argv[1],vocab_only=True,verbose=False)\n"
        "print(json.dumps([len(m.tokenize(t.encode(),add_bos=False,special=True))"
        " for t in json.load(sys.stdin)]))"
    )
    done = subprocess.run(
        [str(python), "-c", script, str(QWEN_0_5B.path)],
        input=json.dumps(list(texts)),
        capture_output=True,
        text=True,
        check=True,
    )
    counted: list[int] = json.loads(done.stdout)
    return counted


def _rows(results: Sequence[Measured]) -> Iterator[tuple[str, int, int]]:
    by: dict[str, list[bool]] = defaultdict(list)
    for number, result in enumerate(results):
        if not result.for_member:
            by["left out: only an admin may use the tool"].append(True)
            continue
        # The lexicon was tuned on the even-numbered messages only: the odd ones are
        # the held-out half, the fair figure for messages nobody tuned for.
        half = "tuned on (even)" if number % 2 == 0 else "held out (odd)"
        if not result.entry.tools:
            by["small talk, offered nothing"].append(result.hit)
            by[f"small talk, {half}"].append(result.hit)
            continue
        by[f"recall, {half}"].append(result.hit)
        by[f"all tool-needing, {result.entry.lang}"].append(result.hit)
        for name in {family(tool) for tool in result.entry.tools}:
            by[name].append(result.hit)
    for name in sorted(by):
        yield name, sum(by[name]), len(by[name])


def report(mode: Mode, results: Sequence[Measured], misses: str | None) -> None:
    needing = [r for r in results if r.entry.tools and r.for_member]
    recall = sum(r.hit for r in needing) / len(needing)
    print(f"\n## {mode} mode: {len(results)} messages, recall {100 * recall:.1f} %")
    print("| rows | right tool offered | of |\n| --- | --- | --- |")
    for name, hits, count in _rows(results):
        print(f"| {name} | {hits} ({100 * hits / count:.1f} %) | {count} |")
    sizes = [r.estimated for r in needing]
    offered = [len(r.offered) for r in needing]
    print(
        f"tools offered to a tool-needing message: median {statistics.median(offered)}, "
        f"max {max(offered)}; the finder beside them in {sum(r.finder for r in needing)}"
    )
    print(f"request size, estimated: median {statistics.median(sizes)}, max {max(sizes)} tokens")
    counted = qwen_counts([r.request_text for r in needing])
    if counted is not None:
        print(
            f"request size, Qwen2.5's tokenizer: median {statistics.median(counted)}, "
            f"p95 {sorted(counted)[int(len(counted) * 0.95)]}, max {max(counted)} tokens"
        )
    if misses:
        for number, r in enumerate(results):
            if not r.hit and r.for_member and (misses == "all" or number % 2 == 0):
                print(f"  miss [{r.entry.lang}] {r.entry.text!r}: wanted {list(r.entry.tools)}, "
                      f"offered {list(r.offered)}")  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--misses",
        nargs="?",
        const="tuned",
        choices=("tuned", "all"),
        help="list each message missed: of the half the lexicon is tuned on, or all",
    )
    parser.add_argument("--mode", choices=("native", "prompt"), action="append")
    options = parser.parse_args(argv)
    for mode in options.mode or ("native", "prompt"):
        report(mode, asyncio.run(measure(mode)), options.misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
