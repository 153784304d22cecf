"""A private name (`_x`) is its module's own: no module of the package imports another's.

A private module (`_shaping.py`) is its package's own: its siblings may import it, no
module outside that package may. What two modules share is public in the module whose job
it is, so that renaming a private helper never breaks a module that was not looking.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.test_layers import ROOT, absolute

FOLDERS = ("bot", "function_calls", "storage")


def _module_name(path: Path, root: Path) -> tuple[str, bool]:
    """The dotted name a file is imported as, and whether it is a package's __init__."""
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__":
        return ".".join(("groupmate", *parts[:-1])), True
    return ".".join(("groupmate", *parts)), False


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_module(dotted: str, root: Path) -> bool:
    relative = root / Path(*dotted.split(".")[1:])
    return relative.with_suffix(".py").is_file() or relative.is_dir()


def _reaches_into(importer: str, target: str) -> str | None:
    """The private part of `target` (a dotted module path) that `importer` may not use."""
    parts = target.split(".")
    for index, part in enumerate(parts):
        if _is_private(part):
            owner = ".".join(parts[:index])  # the package whose own module it is
            if importer != owner and not importer.startswith(owner + "."):
                return ".".join(parts[: index + 1])
    return None


def violations(root: Path = ROOT) -> list[str]:
    found = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            importer, is_package = _module_name(path, root)
            package = importer if is_package else importer.rpartition(".")[0]
            where = path.relative_to(root)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Import | ast.ImportFrom):
                    continue
                targets: list[tuple[str, str | None]] = []
                if isinstance(node, ast.Import):
                    targets = [(alias.name, None) for alias in node.names]
                else:
                    base = absolute(node, package)
                    targets = [(base, alias.name) for alias in node.names]
                for module, name in targets:
                    if not module.startswith("groupmate."):
                        continue  # another project's privates are its business
                    if name is not None and _is_private(name):
                        if not _is_module(f"{module}.{name}", root):
                            found.append(f"{where}:{node.lineno}: {name} from {module}")
                            continue
                        module = f"{module}.{name}"
                    private = _reaches_into(importer, module)
                    if private is not None:
                        found.append(f"{where}:{node.lineno}: module {private}")
    return found


def test_no_module_imports_another_modules_private_name() -> None:
    assert violations() == []


def test_the_walk_sees_private_names_and_private_modules(tmp_path: Path) -> None:
    # The rule above also passes on a walk that sees nothing: it must see what it forbids.
    files = {
        "storage/rows.py": "_x = 1\n",
        "storage/_engine.py": "y = 1\n",
        "storage/ok.py": "from groupmate.storage import _engine\nfrom . import _engine as e\n",
        "bot/a.py": "from groupmate.storage.rows import _x\n",
        "bot/b.py": "from groupmate.storage._engine import y\n",
        "bot/c.py": "import groupmate.storage._engine\n",
        "bot/d.py": "from ..storage.rows import _x\n",
        "function_calls/e.py": "from groupmate.storage import _engine\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    assert violations(tmp_path) == [
        "bot/a.py:1: _x from groupmate.storage.rows",
        "bot/b.py:1: module groupmate.storage._engine",
        "bot/c.py:1: module groupmate.storage._engine",
        "bot/d.py:1: _x from groupmate.storage.rows",
        "function_calls/e.py:1: module groupmate.storage._engine",
    ]
