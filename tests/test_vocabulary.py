"""Walls for issue 39's "one vocabulary": each word has one definition, and the
modules use it rather than a second way of their own. Read from the source (AST)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("bot", "function_calls", "storage")


def sources(*packages: str) -> list[Path]:
    return sorted(path for package in packages for path in (ROOT / package).rglob("*.py"))


def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_storage_dataclasses_type_their_chat_type() -> None:
    # A plain `str` chat type sends every reader to coerce it ("private" if … else
    # "group"); storage narrows the column once, where its rows are read.
    loose = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in sources("storage")
        for node in ast.walk(parsed(path))
        if isinstance(node, ast.AnnAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id == "chat_type"
        and "ChatType" not in ast.unparse(node.annotation)
        and "Mapped" not in ast.unparse(node.annotation)  # the column itself is a string
    ]
    assert loose == []
