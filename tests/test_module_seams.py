"""The seams along which the tool-calling loop, tool selection, the prompt-mode parser,
the reminder scheduler and the modules that did two jobs were split (issue 39): each part
imports only what lies below it. Read from the source, so a crossing fails here even
where it would import without a cycle. (That no part reaches into another's private
names is test_private_names', for every module.)"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# A module -> the modules it must not import: the one it was split from, or the one that
# uses it (the split-off part lies below; importing back up would tie the halves again).
BELOW = {
    "function_calls/reply_text.py": {"prompt_parser", "tolerant_json"},
    "function_calls/tolerant_json.py": {"prompt_parser", "reply_text"},
    "function_calls/tool_index.py": {"selection"},
    "function_calls/_prompting.py": {"llm", "_asking", "_answers"},
    "function_calls/_asking.py": {"llm", "_answers"},
    "function_calls/_answers.py": {"llm", "_asking", "_prompting"},
    "storage/timers.py": {"scheduler"},
    "bot/command_words.py": {"commands"},
    "function_calls/tools.py": {"tool_building"},
    "bot/adapters/discord_people.py": {"discord"},
    # Read with the config, which must not import the MCP server (nor the SDK it needs).
    "bot/adapters/mcp_server_settings.py": {"mcp_server", "config"},
    "storage/chat_rows.py": {"repository"},
    "storage/delivery_outcomes.py": {"deliveries", "outcome_writer"},
    "storage/dialect.py": {"repository", "deliveries", "chat_rows", "delivery_outcomes"},
}


def imports(path: str) -> list[tuple[str, str]]:
    """(module, name) of each `from groupmate… import name` in the file; (module, "")
    for each `import groupmate…`."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("groupmate"):
            found += [(node.module or "", alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(a.name, "") for a in node.names if a.name.startswith("groupmate")]
    return found


@pytest.mark.parametrize("path", sorted(BELOW))
def test_a_split_off_part_does_not_import_what_it_was_split_from(path: str) -> None:
    crossings = []
    for module, name in imports(path):
        # `from groupmate.function_calls import _shaping` names the module in `name`.
        last = module.rsplit(".", 1)[-1]
        if last in BELOW[path] or name in BELOW[path]:
            crossings.append(f"{module} {name}".strip())
    assert crossings == [], f"{path} imports upward: {crossings}"
