"""Walls for issue 39's "one vocabulary": each word has one definition, and the
modules use it rather than a second way of their own. Read from the source (AST)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import groupmate
from groupmate.function_calls import vocabulary
from groupmate.function_calls.language import PlainSentence, is_chinese

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


# Functions that turn an exception into a string for another job than the log: a
# plugin's status (`described`), and an MCP server's failure with its own configured
# secrets blanked out (its text is quoted, unlike `safe_error`'s).
NOT_FOR_THE_LOG = {
    ("function_calls/plugins/found.py", "described"),
    ("function_calls/remote/mcp_client.py", "_describe"),
}


def test_one_helper_makes_an_error_loggable() -> None:
    # One rule (storage.outgoing.safe_error) for which error texts are safe to quote; a
    # platform adds its codes through `code=`, not through a helper of its own.
    helpers = []
    for path in sources(*PACKAGES):
        where = str(path.relative_to(ROOT))
        for node in ast.walk(parsed(path)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            takes_error = any(
                arg.annotation is not None
                and ast.unparse(arg.annotation) in ("Exception", "BaseException")
                for arg in node.args.args
            )
            returns = ast.unparse(node.returns) if node.returns is not None else ""
            if takes_error and returns == "str" and (where, node.name) not in NOT_FOR_THE_LOG:
                helpers.append(f"{where}:{node.name}")
    assert helpers == ["storage/outgoing.py:safe_error"]


def test_one_rule_says_who_is_an_admin() -> None:
    # `bot.contexts.rights` is the rule; every other place that says whether a caller is
    # an admin (of the chat, or of the bot) takes its answer from a `Rights`.
    written = []
    for path in sources("bot"):
        if path == ROOT / "bot" / "contexts.py":
            continue
        for node in ast.walk(parsed(path)):
            if not isinstance(node, ast.keyword) or node.arg not in ("is_admin", "bot_admin"):
                continue
            if not (isinstance(node.value, ast.Attribute) and node.value.attr == node.arg):
                written.append(f"{path.relative_to(ROOT)}:{node.value.lineno}")
    assert written == []


TOOL_WORDS = {"Effect", "EFFECTS", "CallSource", "AuthMethod", "InvocationOutcome"}


def test_the_tool_calling_words_live_beside_the_tools() -> None:
    # Storage records an audit row's effect, source, auth and outcome as plain strings;
    # their meaning is the tools' (function_calls.vocabulary), one layer up.
    in_storage = []
    for path in sources("storage"):
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Name):
                names = [node.id]
            elif isinstance(node, ast.ImportFrom):
                names = [alias.asname or alias.name for alias in node.names]
            else:
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            in_storage += [f"{where} {name}" for name in names if name in TOOL_WORDS]
    assert in_storage == []
    assert set(vars(vocabulary)) >= TOOL_WORDS


def test_one_kind_of_allow_and_deny_list() -> None:
    # A config's allow/deny lists (tools, a policy rule's chats, the bot's groups) are
    # one kind, `function_calls.filters.Filter`, with one default and globs everywhere.
    others = [
        f"{path.relative_to(ROOT)}:{node.name}"
        for path in sources(*PACKAGES)
        for node in ast.walk(parsed(path))
        if isinstance(node, ast.ClassDef)
        and node.name != "Filter"
        and "Filter" not in [ast.unparse(base) for base in node.bases]
        and any(
            isinstance(item, ast.AnnAssign)
            and isinstance(item.target, ast.Name)
            and item.target.id in ("allow", "deny")
            and "str" in ast.unparse(item.annotation)  # names; not an address's networks
            for item in node.body
        )
    ]
    assert others == []


# Raised and caught inside one module, for its own control flow: not the API.
INTERNAL_ERRORS = {
    "groupmate.bot.edit_words.AmbiguousEdit",
    "groupmate.function_calls.handlers.audience.AudienceRefused",
    "groupmate.function_calls.handlers.reminder_actions.ActionRefused",
    "groupmate.storage.deliveries.ClaimConflictError",
    "groupmate.storage.overview.NotRetryableError",
    "groupmate.storage.transfer_rows.RowError",
    "groupmate.bot.container.TemplateChanged",
    "groupmate.bot.adapters.http_calls.Refused",
    "groupmate.bot.adapters.lark_events.Refused",
    "groupmate.bot.adapters.lark_events.Malformed",
}


def defined_exceptions() -> list[type[BaseException]]:
    """Every exception class the three packages define, imported as the bot imports it."""
    found = []
    for path in sources(*PACKAGES):
        if "migrations" in path.parts:
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        module = importlib.import_module(".".join(("groupmate", *parts)))
        for node in parsed(path).body:
            if isinstance(node, ast.ClassDef):
                cls = getattr(module, node.name, None)
                if isinstance(cls, type) and issubclass(cls, BaseException):
                    found.append(cls)
    return found


def test_one_exception_tree_exported_from_groupmate() -> None:
    # One root (groupmate.GroupmateError, documented in storage/exceptions.py) and each
    # public class importable from `groupmate`, as httpx's are from `httpx`.
    classes = defined_exceptions()
    assert len(classes) > 50
    rootless = [
        f"{cls.__module__}.{cls.__name__}"
        for cls in classes
        if not issubclass(cls, groupmate.GroupmateError) and not cls.__name__.startswith("_")
    ]
    assert rootless == []
    unexported = [
        f"{cls.__module__}.{cls.__name__}"
        for cls in classes
        if not cls.__name__.startswith("_")
        and f"{cls.__module__}.{cls.__name__}" not in INTERNAL_ERRORS
        and getattr(groupmate, cls.__name__, None) is not cls
    ]
    assert unexported == []


def test_one_way_to_choose_the_language() -> None:
    # function_calls.language decides whether a text is Chinese (is_chinese,
    # language_of, chat_language): no module matches CJK characters itself, or picks
    # "zh" or "en" on its own, to choose what a user reads.
    language = ROOT / "function_calls" / "language.py"
    second_ways = []
    for path in sources(*PACKAGES):
        if path == language:
            continue
        for node in ast.walk(parsed(path)):
            where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "search"
                and ast.unparse(node.value).endswith("CJK")
            ):
                second_ways.append(f"{where} CJK.search")
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value == r"[\u3400-\u9fff]"  # language.CJK, defined again
            ):
                second_ways.append(f"{where} a CJK pattern")
            if isinstance(node, ast.IfExp) and {
                ast.unparse(node.body),
                ast.unparse(node.orelse),
            } == {"'zh'", "'en'"}:
                second_ways.append(f"{where} zh or en")
    assert second_ways == []


def test_the_bots_own_sentences_come_in_the_chats_language() -> None:
    from groupmate.bot.router import INTERNAL_ERROR
    from groupmate.bot.tool_calls import NOT_HERE, UNUSABLE_WORDS

    for sentence in (INTERNAL_ERROR, NOT_HERE, UNUSABLE_WORDS):
        assert isinstance(sentence, PlainSentence)
        assert sentence.for_message("/summary please") == sentence.english
        assert sentence.for_message("/summary 今天") == sentence.chinese
        assert is_chinese(sentence.chinese) and not is_chinese(sentence.english)
