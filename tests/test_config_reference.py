"""docs/reference/configuration.md is what the settings models say, config.yaml.template
names only settings the models have (its commented-out examples too), and every setting
has a description; the environment variables the reference names do what it says."""

from __future__ import annotations

import difflib
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import Field, SecretStr

from groupmate.bot.cli import main
from groupmate.bot.config import ENVIRONMENT_SETTINGS, load_config
from groupmate.bot.config_reference import (
    REGENERATE,
    default_text,
    render,
    setting_at,
    settings,
    type_text,
)
from groupmate.function_calls.sections import Section

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "configuration.md"
TEMPLATE = ROOT / "config.yaml.template"
# A commented line that is YAML, not prose: `# key: value`, `#   key:`, `#   - item`.
_EXAMPLE = re.compile(r"^(\s*)# ((\s*)(- |[a-z_][a-z0-9_]*:(\s|$)))")


def test_the_committed_page_is_what_the_models_say() -> None:
    page = PAGE.read_text(encoding="utf-8")
    fresh = render()
    diff = "".join(
        list(difflib.unified_diff(page.splitlines(True), fresh.splitlines(True), n=0))[:20]
    )
    assert page == fresh, (
        f"{PAGE.relative_to(ROOT)} is stale; regenerate with\n  {REGENERATE}\n{diff}"
    )


def test_the_command_the_page_names_writes_it(tmp_path: Path) -> None:
    module = REGENERATE.split(" > ")[0].split()
    assert module[:2] == ["python", "-m"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LC_ALL": "C", "PYTHONIOENCODING": "ascii"}
    done = subprocess.run(
        [sys.executable, *module[1:]], capture_output=True, env=env, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode("utf-8") == render()


def test_every_setting_has_a_description() -> None:
    missing = [setting.key for setting in settings() if not setting.description]
    assert missing == [], "give these settings a docstring: " + ", ".join(missing)


def uncommented(template: str) -> str:
    """The template with its commented-out examples (`# telegram:`, `#   token: …`)
    turned into YAML, indented where they stand; prose comments stay comments."""
    return "\n".join(
        _EXAMPLE.sub(r"\1\2", line) if _EXAMPLE.match(line) else line
        for line in template.splitlines()
    )


class _NoDuplicates(yaml.SafeLoader):
    """A key given twice would hide the first one from the check."""


def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    keys = [loader.construct_object(key) for key, _ in node.value]
    twice = {key for key in keys if keys.count(key) > 1}
    assert not twice, f"config.yaml.template line {node.start_mark.line + 1}: {twice} twice"
    return loader.construct_mapping(node)


_NoDuplicates.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def key_paths(document: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """The path of every key of a mapping in the document, and of every list item."""
    if isinstance(document, dict):
        for key, value in document.items():
            yield (*path, str(key))
            yield from key_paths(value, (*path, str(key)))
    elif isinstance(document, list):
        for index, item in enumerate(document):
            yield from key_paths(item, (*path, index))


def test_every_key_of_the_template_is_a_setting_its_examples_too() -> None:
    document = yaml.load(uncommented(TEMPLATE.read_text(encoding="utf-8")), _NoDuplicates)
    paths = list(key_paths(document))
    unknown = [".".join(map(str, path)) for path in paths if setting_at(path) is None]
    assert unknown == [], "config.yaml.template has keys no setting has: " + ", ".join(unknown)
    # The commented-out examples were read, not skipped as prose.
    for example in (
        ("adapters", "telegram", "token"),
        ("adapters", "dingtalk", "robot_code"),
        ("mcp", "servers", "time", "command"),
        ("mcp", "serve", "chat_id"),
        ("openapi", "servers", 0, "url"),
        ("search", "providers", 1, "api_key"),
        ("llm", "context_tokens"),
        ("llm", "budget", "tokens_per_day"),
        ("plugins", 1, "settings"),
        ("plugins", 1, "tools", "deny"),
        ("metrics", "port"),
    ):
        assert example in paths, example


def test_a_key_no_setting_has_is_found_as_such() -> None:
    # What the template check relies on: a typo, a key of the wrong section, a key in a
    # list item or under a mapping's own name are all told apart from real settings.
    assert setting_at(("bot", "timezone")) is not None
    assert setting_at(("bot", "time_zone")) is None
    assert setting_at(("llm", "host")) is None
    assert setting_at(("mcp", "servers", "any-name", "command")) is not None
    assert setting_at(("mcp", "servers", "any-name", "comand")) is None
    assert setting_at(("plugins", 0, "module")) is not None
    assert setting_at(("plugins", 0, "modules")) is None
    # Inside a plugin's own settings anything goes: its own model checks them on load.
    found = setting_at(("plugins", 0, "settings", "sides"))
    assert found is not None and found.key == "plugins[].settings"


def test_a_commented_prose_line_stays_a_comment() -> None:
    text = "llm:\n  # Empty base_url means the OpenAI API. Ollama: http://x\n  # model: m\n"
    assert yaml.safe_load(uncommented(text)) == {"llm": {"model": "m"}}


def test_a_secret_default_is_never_shown() -> None:
    class WithSecrets(Section):
        key: SecretStr = SecretStr("hunter2")
        """A key."""
        headers: dict[str, SecretStr] = Field(default_factory=lambda: {"a": SecretStr("s3")})
        """Headers."""
        none: SecretStr | None = None
        """Unset."""

    shown = {setting.key: default_text(setting) for setting in settings(WithSecrets)}
    assert shown == {"key": "set, not shown", "headers": "set, not shown", "none": "unset"}
    for setting in settings():
        if setting.section is None and "secret" in type_text(setting.field):
            assert default_text(setting) in ("unset", "`{}`", "set, not shown"), setting.key


def test_the_reference_says_what_a_setting_takes() -> None:
    rows = {setting.key: setting for setting in settings()}
    level = rows["logging.level"]
    assert type_text(level.field) == "one of `DEBUG`, `INFO`, `WARNING`, `ERROR`"
    assert "DEBUG" in level.description
    assert type_text(rows["bot.history.max_messages"].field) == "integer, 0 to 500"
    assert type_text(rows["llm.temperature"].field) == "number, 0 to 2, or `null`"
    assert default_text(rows["reminders.lease"]) == "`2m`"
    assert default_text(rows["openapi.servers[].url"]) == "required"
    assert "| `logging.level`{ #logging-level } |" in render()


def test_the_documented_environment_variables_are_what_groupmate_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    documented = {(e.key, e.variable) for e in ENVIRONMENT_SETTINGS}
    assert documented == {
        ("llm.api_key", "OPENAI_API_KEY"),
        ("llm.base_url", "OPENAI_BASE_URL"),
        ("storage.url", "GROUPMATE_STORAGE_URL"),
        ("logging.level", "GROUPMATE_LOG_LEVEL"),
    }, "a variable added or removed: test what it does here"
    env = {"OPENAI_API_KEY": "sk-from-env", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    config = load_config(None, environ=env)
    assert config.llm.api_key is not None
    assert config.llm.api_key.get_secret_value() == "sk-from-env"
    assert config.llm.base_url == "http://127.0.0.1:9/v1"


# What groupmate's code reads from the environment that is no setting: the container
# image's folders, and its check of the token its own config names (bot.container); the
# terminal's user name (the console); HOME, which the image sets.
NOT_SETTINGS = {"GROUPMATE_DATA", "GROUPMATE_TEMPLATE", "GROUPMATE_TOKEN", "USER", "HOME"}
_READ = re.compile(r'(?:environ(?:\.get)?\(|environ\[|getenv\()\s*"([A-Z][A-Z0-9_]*)"')


def test_every_variable_the_code_reads_for_a_setting_is_on_the_page() -> None:
    read = {
        name
        for folder in ("bot", "function_calls", "storage")
        for path in (ROOT / folder).rglob("*.py")
        for name in _READ.findall(path.read_text(encoding="utf-8"))
    }
    assert {"GROUPMATE_LOG_LEVEL", "GROUPMATE_DATA"} <= read  # the search finds them
    documented = {e.variable for e in ENVIRONMENT_SETTINGS}
    assert read - NOT_SETTINGS - documented == set(), "add them to ENVIRONMENT_SETTINGS"


def test_the_storage_and_log_level_variables_override_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"storage:\n  url: sqlite:///{tmp_path}/file.db\nlogging:\n  level: ERROR\n")
    monkeypatch.setenv("GROUPMATE_STORAGE_URL", f"sqlite:///{tmp_path}/env.db")
    monkeypatch.setenv("GROUPMATE_LOG_LEVEL", "DEBUG")
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        main(["--config", str(path), "check"])
        assert root.level == logging.DEBUG
    finally:
        root.handlers[:], root.level = handlers, level
    assert f"storage: sqlite:///{tmp_path}/env.db" in capsys.readouterr().out


@pytest.mark.parametrize(("given", "level"), [("info", logging.INFO), ("NOPE", None)])
def test_the_log_level_variable_is_read_as_the_config_reads_its_level(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    given: str,
    level: int | None,
) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"storage:\n  url: sqlite:///{tmp_path}/file.db\n")
    monkeypatch.setenv("GROUPMATE_LOG_LEVEL", given)
    root = logging.getLogger()
    handlers, before = root.handlers[:], root.level
    try:
        status = main(["--config", str(path), "check"])
        if level is not None:
            assert root.level == level
    finally:
        root.handlers[:], root.level = handlers, before
    if level is None:
        assert status == 2
        assert capsys.readouterr().err == (
            "groupmate: GROUPMATE_LOG_LEVEL='NOPE' is no log level; "
            "use DEBUG | INFO | WARNING | ERROR\n"
        )


def test_bounds_and_patterns_are_said() -> None:
    class Bounded(Section):
        code: str = Field("ab", pattern=r"^[a-z]+$", max_length=8)
        """A code."""
        wait: float = Field(1, gt=0, le=50)
        """A wait."""

    said = {setting.key: type_text(setting.field) for setting in settings(Bounded)}
    assert said == {
        "code": "string, at most 8 characters, matching `^[a-z]+$`",
        "wait": "number, over 0, at most 50",
    }


def test_a_type_the_page_has_no_words_for_stops_the_generator() -> None:
    class Odd(Section):
        where: Path = Path(".")
        """A folder."""

    (setting,) = settings(Odd)
    with pytest.raises(TypeError, match="no wording"):
        type_text(setting.field)
