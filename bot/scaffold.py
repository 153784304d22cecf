"""`groupmate plugin new NAME`: a plugin project to start from.

`groupmate plugin new weather` writes `./groupmate-weather/`: a pyproject that advertises
the plugin (entry point group `groupmate.plugins`), the package `groupmate_weather` with
one typed tool (settings, per-chat storage, a slash command; no network), its test with
the test kit, and a README. The generated code passes `ruff check`, `ruff format --check`
and `mypy --strict` for any valid name: every line that holds the name is short enough,
and calls that could grow past the line length are already split one item a line.
"""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from groupmate.bot.command_words import COMMAND_ALIASES, COMMAND_USAGE, DECLARED_ALIASES
from groupmate.function_calls.handlers import BUILTIN_MODULES, BUILTIN_ORDER
from groupmate.storage.exceptions import GroupmateError

# As a tool's command (function_calls.registry.COMMAND_NAME): the name is the plugin's,
# its tool's and its command's, and the module's after "groupmate_".
PLUGIN_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


# Names the plugin can't have: its tool, command and plugin name would clash with the
# bot's own (a plugin with them would not load, or lose its command), or its function
# would replace a name the generated module defines.
_TAKEN: dict[str, str] = {
    **dict.fromkeys(("plugin", "tool_function"), "the generated module uses that name"),
    **dict.fromkeys(BUILTIN_MODULES, "a built-in tool family has that name"),
    **dict.fromkeys(BUILTIN_ORDER, "a built-in tool has that name"),
    **dict.fromkeys(
        (*COMMAND_USAGE, *COMMAND_ALIASES, *DECLARED_ALIASES), "a built-in command has that name"
    ),
}


class ScaffoldError(GroupmateError, ValueError):
    """The name or the target directory is refused; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class PluginNames:
    """Every spelling of one plugin's name in the files written."""

    name: str  # weather: the plugin, its tool, its command and its entry point
    project: str  # groupmate-weather: the distribution and the default directory
    module: str  # groupmate_weather: the package
    camel: str  # Weather: the arguments model is WeatherArgs

    @classmethod
    def of(cls, raw: str) -> PluginNames:
        """The names for NAME as typed ("weather", "my-tool"); raises ScaffoldError."""
        name = raw.strip().replace("-", "_")
        if not PLUGIN_NAME.fullmatch(name):
            raise ScaffoldError(
                f"invalid plugin name {raw!r}: use 1 to 32 lowercase letters, digits, '_' "
                "or '-', starting with a letter (e.g. weather, dice_roll)"
            )
        if keyword.iskeyword(name):
            raise ScaffoldError(
                f"invalid plugin name {raw!r}: it is a Python keyword, which cannot name "
                "the tool's function"
            )
        if name in _TAKEN:
            raise ScaffoldError(
                f"invalid plugin name {raw!r}: {_TAKEN[name]}; choose another (e.g. {name}_plus)"
            )
        camel = "".join(part.capitalize() for part in name.split("_"))
        return cls(name, f"groupmate-{name.replace('_', '-')}", f"groupmate_{name}", camel)


def new_plugin(raw_name: str, directory: Path | None = None) -> tuple[Path, list[Path]]:
    """Write the plugin project for `raw_name` into `directory` (default:
    ./groupmate-NAME); returns the directory and the files written. Raises
    ScaffoldError for an invalid name or a directory that exists and is not empty."""
    names = PluginNames.of(raw_name)
    target = directory if directory is not None else Path(names.project)
    if target.exists():
        if not target.is_dir():
            raise ScaffoldError(f"{target} exists and is not a directory")
        if any(target.iterdir()):
            raise ScaffoldError(f"{target} exists and is not empty; choose another --dir")
    files = render(names)
    written: list[Path] = []
    for relative, text in files.items():
        path = target / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return target, written


def render(names: PluginNames) -> dict[str, str]:
    """The project's files (relative path -> text)."""
    values = {
        "name": names.name,
        "project": names.project,
        "module": names.module,
        "camel": names.camel,
    }
    return {
        "pyproject.toml": Template(_PYPROJECT).substitute(values),
        "README.md": Template(_README).substitute(values),
        f"{names.module}/__init__.py": Template(_MODULE).substitute(values),
        f"{names.module}/py.typed": "",
        f"tests/test_{names.name}.py": Template(_TEST).substitute(values),
    }


# The templates: string.Template, so `$name` is replaced and `$$` is a dollar sign.

_PYPROJECT = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "$project"
version = "0.1.0"
description = "A groupmate plugin: $name"
readme = "README.md"
requires-python = ">=3.11"
dependencies = ["groupmate"]

[project.optional-dependencies]
test = ["pytest>=8", "pytest-asyncio>=0.24"]

# How groupmate finds the plugin once it is installed: `groupmate plugins` lists it, and
# `plugins: [$name]` in config.yaml enables it.
[project.entry-points."groupmate.plugins"]
$name = "$module"

[tool.setuptools.packages.find]
include = ["$module*"]

[tool.setuptools.package-data]
$module = ["py.typed"]

[tool.pytest.ini_options]
testpaths = ["tests"]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"

[tool.ruff]
line-length = 100
target-version = "py311"

[tool.ruff.lint]
select = ["E", "F", "W", "I", "B", "UP", "SIM", "RUF", "ASYNC"]

[tool.mypy]
python_version = "3.11"
strict = true
plugins = ["pydantic.mypy"]
"""

_MODULE = '''\
"""A groupmate plugin, and an example to start from.

The tool answers with the greeting from the plugin's settings and remembers the city for
the chat. The model can call it, and so can a slash command:

    /$name Berlin

Replace its body with your own; a client for another server goes in a `@plugin.service`.
"""

from groupmate import FunctionResult, Plugin, PluginStore, tool_function
from pydantic import BaseModel, Field


class Settings(BaseModel):
    """This plugin's `settings:` in config.yaml, validated when the bot starts."""

    greeting: str = Field(default="Hello", min_length=1, max_length=40)


plugin = Plugin("$name", settings=Settings)


class ${camel}Args(BaseModel):
    """The schema the model sees, and what the slash command fills."""

    city: str = Field(min_length=1, max_length=80, description="The city")


@tool_function(
    description="Greet a city and remember it for this chat",
    examples=["say hello to Berlin"],
    command="$name",
    effect="write",
)
async def $name(
    args: ${camel}Args,
    settings: Settings,
    store: PluginStore,
) -> FunctionResult:
    """Each parameter is given by its type (a `MessageContext` too, when you need the
    chat or the sender); the store is this plugin's, in this chat."""
    previous = await store.get("last_city")
    await store.set("last_city", args.city)
    text = f"{settings.greeting}, {args.city}!"
    if isinstance(previous, str) and previous != args.city:
        text += f" (Last time: {previous}.)"
    return FunctionResult.direct(text)
'''

_TEST = '''\
"""The plugin in a real bot, with groupmate's test kit: a scripted model, no network."""

from groupmate.testing import BotFactory

PLUGIN = {"module": "$module", "settings": {"greeting": "Hi"}}


async def test_the_command(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(plugins=[PLUGIN])
    replies = await bot.say("/$name Berlin")
    assert replies == ["Hi, Berlin!"]
    store = bot.store("$name", chat="group-1")
    assert await store.get("last_city") == "Berlin"
    replies = await bot.say("/$name Paris")
    assert replies == ["Hi, Paris! (Last time: Berlin.)"]


async def test_the_model_calls_the_tool(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(plugins=[PLUGIN])
    # The tool answers the chat itself (FunctionResult.direct): the turn ends there, so
    # the model is scripted to call it and nothing after.
    bot.model.calls("$name", {"city": "Berlin"})
    assert await bot.say("say hello to Berlin") == ["Hi, Berlin!"]
    assert "$name" in bot.model.offered_tools()
    store = bot.store("$name", chat="group-1")
    assert await store.get("last_city") == "Berlin"


async def test_a_bad_setting_is_named(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(plugins=[{**PLUGIN, "settings": {"greeting": ""}}])
    [status] = [p for p in bot.plugins if p.name == "$name"]
    assert status.state == "failed"  # the bot runs on without it
    assert status.error is not None
    assert status.error.startswith("plugins[0].settings.greeting:")
'''

_README = """\
# $project

A [groupmate](https://pypi.org/project/groupmate/) plugin: the tool `$name`, also the
slash command `/$name CITY`.

## Install

In the environment groupmate runs in:

```sh
pip install -e '.[test]'
```

## Enable

Installed is not enabled: name the plugin in groupmate's `config.yaml` (by its entry
point, `$name`, or its module, `$module`):

```yaml
plugins:
  - module: $module
    settings:
      greeting: Hello   # a secret can come from the environment: $${MY_API_KEY}
```

`groupmate check` validates the settings and names what is wrong;
`groupmate plugins` lists the plugins installed and whether they are enabled.

## Test

```sh
pytest
ruff check . && ruff format --check .
mypy $module tests
```

The tests run the plugin in a real bot in memory with a scripted model (the
`groupmate_bot` fixture of groupmate's test kit); nothing reaches the network.
"""
