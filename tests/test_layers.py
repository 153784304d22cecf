"""The walls between the three layers: storage imports neither the tools nor the bot, and
the tools (function_calls) never import the bot. Dependencies point inward (adapters ->
router -> function_calls -> storage), so a storage change can't break on a bot module's
import, and the tools run without the runtime (a plugin's tests, the MCP server).

Every import counts: at the top, inside functions and under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Each layer and the layers it must never import (as installed: groupmate.<folder>).
WALLS = {
    "storage": ("groupmate.bot", "groupmate.function_calls", "groupmate.testing"),
    "function_calls": ("groupmate.bot", "groupmate.testing"),
}


def imported(path: Path, module: str) -> Iterator[tuple[int, str]]:
    """Each module `path` (the module `module`) imports: line and absolute name."""
    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, absolute(node, package)


def absolute(node: ast.ImportFrom, package: str) -> str:
    """The absolute name of the module a `from … import` in `package` reads from."""
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        anchor = ".".join(parts[: len(parts) - node.level + 1])
        base = f"{anchor}.{base}" if base else anchor
    return base


def crossings(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(("groupmate", *parts)).removesuffix(".__init__")
        for line, name in imported(path, module):
            if name.startswith(forbidden) or name.split(".")[0] in {"bot", "function_calls"}:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    return found


@pytest.mark.parametrize("folder", sorted(WALLS))
def test_a_layer_never_imports_an_outer_one(folder: str) -> None:
    assert crossings(folder, WALLS[folder]) == []


def test_the_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    module = tmp_path / "late.py"
    module.write_text(
        "def f():\n    from groupmate.bot.app import Bot\n    from ..bot import config\n"
    )
    names = [name for _, name in imported(module, "groupmate.storage.late")]
    assert names == ["groupmate.bot.app", "groupmate.bot"]
