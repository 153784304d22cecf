"""`groupmate`'s public names are listed once: the subpackages' own (and the storage
errors) come from their `__all__`, and `__all__` and the lazy imports are derived from
one table (issue 39)."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import groupmate
from groupmate import bot, function_calls, storage

INIT = Path(groupmate.__file__)


def _literals() -> Counter[str]:
    tree = ast.parse(INIT.read_text(encoding="utf-8"))
    return Counter(
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def test_the_subpackages_names_are_theirs_not_written_again() -> None:
    theirs = set(bot.__all__) | set(function_calls.__all__) | set(storage.errors.__all__)
    assert theirs <= set(groupmate.__all__)
    assert set(_literals()) & theirs == set()


def test_every_other_name_is_written_once() -> None:
    literals = _literals()
    assert {name: literals[name] for name in groupmate.__all__ if literals[name] > 1} == {}
