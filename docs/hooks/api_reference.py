"""A MkDocs hook: writes the API reference's entries (docs/reference/api.md, at its
marker) from `groupmate.__all__` at build time, one `::: module.Name` per public name,
where the name is defined. mkdocstrings can't follow the package's lazy exports (PEP 562
`__getattr__`), and a list kept by hand falls behind when a name is added or moves."""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import Any

# The checkout's groupmate, as mkdocstrings reads it (`paths: ["."]`), not whichever one
# is installed; imported now, while the checkout leads sys.path (MkDocs changes it later)
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
groupmate = importlib.import_module("groupmate")

MARKER = "<!-- groupmate's public names -->"

# The sections, in reading order; a public name in none goes to Errors (an exception) or
# to More.
GROUPS: dict[str, tuple[str, ...]] = {
    "The bot": ("Bot", "Config", "load_config", "IncomingMessage", "Reply", "settle_heap"),
    "Writing tools": (
        "tool_function", "FunctionResult", "Touched", "Failure", "MessageContext",
        "CommandText", "Deps", "Progress", "TextCompleter", "Example", "NoArguments",
        "validation_context", "build_tool", "Tool",
    ),
    "Plugins": ("Plugin", "PluginStore", "JsonValue", "PluginTools"),
    "Toolsets, the invoker and the model": (
        "AbstractToolset", "FunctionToolset", "CombinedToolset", "ToolRegistry",
        "ToolInvoker", "ToolCall", "ValidatedToolCall", "ToolInvocation", "ArgumentIssue",
        "ToolPolicy", "ToolRule", "FunctionCallLLM", "ChatTurn", "TurnResult",
        "ToolCallRecord",
    ),
    "Vocabulary": (
        "ChatType", "ToolMode", "PromptFormat", "Effect", "Who", "Scope", "CallSource",
        "AuthMethod", "InvocationOutcome", "TurnEnding",
    ),
}  # fmt: skip


def home(name: str, value: Any) -> str:
    """The module that defines `name`: its `__module__` when that module has it under
    this name, else (an alias, a Literal) the groupmate module whose source assigns it."""
    module = getattr(value, "__module__", None)
    if module in sys.modules and getattr(sys.modules[module], name, None) is value:
        return str(module)
    defines = re.compile(rf"^(type |class )?{re.escape(name)}\b[^=\n]*[=:(]", re.M)
    for candidate in sorted(sys.modules):
        found = sys.modules[candidate]
        if not candidate.startswith("groupmate.") or vars(found).get(name) is not value:
            continue
        try:
            source = inspect.getsource(found)
        except (OSError, TypeError):
            continue
        if defines.search(source):
            return candidate
    raise LookupError(f"groupmate.{name}: no module defines it")


def entries() -> dict[str, list[str]]:
    """Each section's `::: module.Name` targets."""
    public = {name: getattr(groupmate, name) for name in groupmate.__all__}
    sections: dict[str, list[str]] = {title: [] for title in (*GROUPS, "More", "Errors")}
    placed = {name for names in GROUPS.values() for name in names}
    for title, names in GROUPS.items():
        sections[title] = [f"{home(name, public[name])}.{name}" for name in names if name in public]
    rest = sorted(
        (name for name in public if name not in placed),
        # The error tree: parents before children
        key=lambda name: (len(getattr(public[name], "__mro__", ())), name),
    )
    for name in rest:
        value = public[name]
        is_error = isinstance(value, type) and issubclass(value, BaseException)
        sections["Errors" if is_error else "More"].append(f"{home(name, value)}.{name}")
    return {title: targets for title, targets in sections.items() if targets}


def markdown() -> str:
    lines: list[str] = []
    for title, targets in entries().items():
        lines += [f"## {title}", ""]
        for target in targets:
            lines += [f"::: {target}", ""]
    return "\n".join(lines)


def on_page_markdown(text: str, page: Any, **_: Any) -> str:
    if page.file.src_uri == "reference/api.md":
        return text.replace(MARKER, markdown())
    return text
