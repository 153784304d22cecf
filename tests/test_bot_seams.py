"""The seams `bot/` is split along (issue 39): each part imports only what it is built
on, so that the one it serves can change without it; and what the running bot uses is
built once (`bot.runtime`). Read from the source, as `test_module_seams` does."""

from __future__ import annotations

import ast
import dataclasses

from groupmate.bot.runtime import Runtime
from tests.test_module_seams import ROOT, imports


def imported(path: str) -> set[str]:
    return {module for module, _ in imports(path)}


def test_calling_a_tool_from_chat_does_not_know_the_command_table() -> None:
    # Answering, offers and actions call tools through it; the table is built on it.
    assert "groupmate.bot.commands" not in imported("bot/tool_calls.py")


def test_the_trigger_neither_logs_nor_orders_messages() -> None:
    # "Is this message for me" reads the message and the chat's settings only: the log,
    # the chat locks and the ordering are the router's.
    crossing = {"groupmate.bot.router", "groupmate.storage.chatlog", "groupmate.storage.chat_locks"}
    assert not crossing & imported("bot/trigger.py")


def test_the_runtime_is_frozen_and_built_in_one_place() -> None:
    # What the running bot uses is built by `build_runtime` and never rebound: the Bot
    # binds it once when it starts, and sets none of its parts itself.
    assert Runtime.__dataclass_params__.frozen  # type: ignore[attr-defined]
    parts = {field.name for field in dataclasses.fields(Runtime)}
    tree = ast.parse((ROOT / "bot/app.py").read_text(encoding="utf-8"))
    bound: list[str] = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            targets = node.targets if isinstance(node, ast.Assign) else []
            targets += [node.target] if isinstance(node, ast.AnnAssign | ast.AugAssign) else []
            for target in targets:
                bound += [
                    f"{function.name}:{name.attr}"
                    for name in ast.walk(target)
                    if isinstance(name, ast.Attribute)
                    and isinstance(name.value, ast.Name)
                    and name.value.id == "self"
                ]
    assert not [b for b in bound if b.split(":")[1] in parts]
    assert [b for b in bound if b.endswith(":_runtime")] == ["__init__:_runtime", "_open:_runtime"]
