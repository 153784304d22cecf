"""`groupmate plugin new NAME`: a plugin project to start from.

`groupmate plugin new weather` writes `./groupmate-weather/`: a pyproject that advertises
the plugin (entry point group `groupmate.plugins`), the package `groupmate_weather` with
three typed tools (settings, per-chat storage, slash commands taking text, a number and
a list; no network), their tests with the test kit, and a README. The generated code
passes `ruff check`, `ruff format --check` and `mypy --strict` for any valid name: every
line that holds the name is short enough, and calls that could grow past the line length
are already split one item a line.
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
# its first tool's and command's, and the module's after "groupmate_". The other two
# commands add "_last" and "_drop", and a command has at most 32 characters: 27 here.
# Nor may it end in "_": the project's name would end in "-", which PEP 508 refuses.
PLUGIN_NAME = re.compile(r"[a-z](?:[a-z0-9_]{0,25}[a-z0-9])?")


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
                f"invalid plugin name {raw!r}: use 1 to 27 lowercase letters, digits, '_' "
                "or '-', starting with a letter and not ending in '_' or '-' (e.g. weather, "
                "dice_roll)"
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
# What the checks in the README need: `pip install -e '.[dev]'`.
dev = ["$project[test]", "ruff>=0.6", "mypy>=1.11"]

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

It greets a city and remembers the cities greeted in each chat. The model can call its
tools, and so can slash commands, whose words are read by the arguments' types:

    /$name Berlin: the text field takes the words
    /${name}_last 3: a whole number, 1 to 10
    /${name}_drop Berlin, Oslo: a list ("a, b", "a | b" or words apart)

Replace the bodies with your own; a client for another server goes in a `@plugin.service`.
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


async def remembered(store: PluginStore) -> list[str]:
    """The cities greeted in this chat, the latest first."""
    cities = await store.get("cities", [])
    return [str(city) for city in cities] if isinstance(cities, list) else []


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
    cities = await remembered(store)
    await store.set("cities", [args.city, *(c for c in cities if c != args.city)][:10])
    text = f"{settings.greeting}, {args.city}!"
    if cities and cities[0] != args.city:
        text += f" (Last time: {cities[0]}.)"
    return FunctionResult.direct(text)


class ${camel}LastArgs(BaseModel):
    count: int = Field(ge=1, le=10, description="How many cities")


@tool_function(
    description="The cities greeted last in this chat",
    examples=["which cities did you greet?"],
    command="${name}_last",
    effect="read",
)
async def ${name}_last(
    args: ${camel}LastArgs,
    store: PluginStore,
) -> FunctionResult:
    cities = (await remembered(store))[: args.count]
    return FunctionResult.direct(", ".join(cities) or "No city yet.")


class ${camel}DropArgs(BaseModel):
    cities: list[str] = Field(
        min_length=1,
        max_length=10,
        description="The cities to forget",
    )


@tool_function(
    description="Forget cities greeted in this chat",
    examples=["forget Berlin and Oslo"],
    command="${name}_drop",
    effect="write",
)
async def ${name}_drop(
    args: ${camel}DropArgs,
    store: PluginStore,
) -> FunctionResult:
    cities = await remembered(store)
    kept = [city for city in cities if city not in args.cities]
    await store.set("cities", kept)
    return FunctionResult.direct(f"Forgot {len(cities) - len(kept)} of them.")
'''

_TEST = '''\
"""The plugin in a real bot, with groupmate's test kit: a scripted model, no network."""

from groupmate.testing import BotFactory

PLUGIN = {"module": "$module", "settings": {"greeting": "Hi"}}


async def test_the_commands(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(plugins=[PLUGIN])
    replies = await bot.say("/$name Berlin")
    assert replies == ["Hi, Berlin!"]
    replies = await bot.say("/$name Paris")
    assert replies == ["Hi, Paris! (Last time: Berlin.)"]
    await bot.say("/$name Oslo")
    # A whole number, bare or by its name; a list, apart by commas, bars or spaces.
    replies = await bot.say("/${name}_last 2")
    assert replies == ["Oslo, Paris"]
    replies = await bot.say("/${name}_last count=3")
    assert replies == ["Oslo, Paris, Berlin"]
    replies = await bot.say("/${name}_drop Berlin, Oslo")
    assert replies == ["Forgot 2 of them."]
    store = bot.store("$name", chat="group-1")
    assert await store.get("cities") == ["Paris"]


async def test_words_that_dont_fit_are_answered_in_words(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot(plugins=[PLUGIN])
    misfit = "\\u201cmany\\u201d doesn't fit count: it takes a whole number from 1 to 10."
    assert await bot.say("/${name}_last many") == [misfit]
    usage = "Usage: /${name}_last <count: 1\\u201310>"
    assert await bot.say("/${name}_last") == [usage]


async def test_the_model_calls_the_tool(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(plugins=[PLUGIN])
    # The tool answers the chat itself (FunctionResult.direct): the turn ends there, so
    # the model is scripted to call it and nothing after.
    bot.model.calls("$name", {"city": "Berlin"})
    assert await bot.say("say hello to Berlin") == ["Hi, Berlin!"]
    assert "$name" in bot.model.offered_tools()
    store = bot.store("$name", chat="group-1")
    assert await store.get("cities") == ["Berlin"]


async def test_a_bad_setting_is_named(groupmate_bot: BotFactory) -> None:
    bot = await groupmate_bot(plugins=[{**PLUGIN, "settings": {"greeting": ""}}])
    [status] = [p for p in bot.plugins if p.name == "$name"]
    assert status.state == "failed"  # the bot runs on without it
    assert status.error is not None
    assert status.error.startswith("plugins[0].settings.greeting:")
'''

_README = """\
# $project

A [groupmate](https://pypi.org/project/groupmate/) plugin: the tools `$name`,
`${name}_last` and `${name}_drop`, also the slash commands `/$name CITY`,
`/${name}_last COUNT` and `/${name}_drop CITY, CITY`.

## Install

In the environment groupmate runs in:

```sh
pip install -e '.[dev]'     # the tests, ruff and mypy (the tests alone: '.[test]')
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
mypy --strict $module tests
```

The tests run the plugin in a real bot in memory with a scripted model (the
`groupmate_bot` fixture of groupmate's test kit); nothing reaches the network.
"""
