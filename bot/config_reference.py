"""docs/reference/configuration.md, generated from the settings models: every key that
bot.config.Config holds, found by walking the models (never a list kept by hand), with
its type, allowed values, default, environment variable and description (the setting's
docstring). tests/test_config_reference.py fails when the committed page is stale.

    python -m groupmate.bot.config_reference > docs/reference/configuration.md
"""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from groupmate.bot.config import ENV_FORMS, ENVIRONMENT_SETTINGS, Config
from groupmate.function_calls.sections import is_section

REGENERATE = "python -m groupmate.bot.config_reference > docs/reference/configuration.md"
# The steps of a key path that stand for any key of a mapping, and any item of a list.
ANY_KEY = "<name>"
ANY_ITEM = "[]"
_SCALARS = {bool: "boolean", int: "integer", float: "number", str: "string"}


@dataclass(frozen=True, slots=True)
class Setting:
    """One key of the configuration: `path` is its steps from the top, with ANY_KEY and
    ANY_ITEM for a mapping's keys and a list's items; `section` is the model it opens
    (a heading in the page), None for a value (a row)."""

    path: tuple[str, ...]
    field: FieldInfo
    section: type[BaseModel] | None
    # The steps between this key and its section's keys: (ANY_KEY,) for a mapping of
    # sections, (ANY_ITEM,) for a list of them.
    steps: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return dotted(self.path)

    @property
    def description(self) -> str:
        return " ".join((self.field.description or "").split())


def dotted(path: Sequence[str]) -> str:
    """`mcp.servers.<name>.command`, `openapi.servers[].url`."""
    text = ""
    for step in path:
        text += step if step == ANY_ITEM or not text else f".{step}"
    return text


def settings(model: type[BaseModel] = Config, path: tuple[str, ...] = ()) -> Iterator[Setting]:
    """Every key under `model`, depth first, in the order the models declare them."""
    for name, field in model.model_fields.items():
        here = (*path, name)
        steps, section = _opens(field.annotation)
        yield Setting(here, field, section, steps)
        if section is not None:
            yield from settings(section, (*here, *steps))


def setting_at(path: Sequence[str | int]) -> Setting | None:
    """The setting a key of a document names (`("mcp", "servers", "time", "command")`),
    or the free-form mapping it lies in (a plugin's `settings`); None: no such key."""
    known = {setting.path: setting for setting in settings()}
    # A list's item or a mapping's entry, by the path of the keys inside it.
    inside = {(*s.path, *s.steps): s for s in known.values() if s.section is not None}
    current: tuple[str, ...] = ()
    for step in path:
        if current in known and known[current].section is None:
            return known[current]  # a key inside a mapping of values
        if isinstance(step, int) and (*current, ANY_ITEM) in inside:
            current = (*current, ANY_ITEM)
        elif isinstance(step, str) and (*current, step) in known:
            current = (*current, step)
        elif isinstance(step, str) and (*current, ANY_KEY) in inside:
            current = (*current, ANY_KEY)
        else:
            return None
    return known.get(current) or inside.get(current)


def _opens(annotation: Any) -> tuple[tuple[str, ...], type[BaseModel] | None]:
    """The section a field's type opens, and the steps to its keys."""
    inner = _unwrap(annotation)
    if is_section(inner):
        return (), inner
    origin, args = get_origin(inner), get_args(inner)
    if origin in (list, tuple) and args and is_section(_unwrap(args[0])):
        return (ANY_ITEM,), _unwrap(args[0])
    if origin is dict and is_section(_unwrap(args[1])):
        return (ANY_KEY,), _unwrap(args[1])
    return (), None


def _unwrap(annotation: Any) -> Any:
    """`X` of `Annotated[X, ...]` and of `X | None`."""
    if get_origin(annotation) is Annotated:
        return _unwrap(get_args(annotation)[0])
    if _is_union(annotation):
        kept = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(kept) == 1:
            return _unwrap(kept[0])
    return annotation


def _is_union(annotation: Any) -> bool:
    return get_origin(annotation) in (Union, types.UnionType)


def _constraints(metadata: Sequence[Any]) -> str:
    """`1 to 64 characters`, `over 0, at most 50`, `matching ...`, from the field's
    ge/gt/le/lt, lengths and pattern."""
    bounds: dict[str, Any] = {}
    for item in metadata:
        for name in ("ge", "gt", "le", "lt", "min_length", "max_length", "pattern"):
            value = getattr(item, name, None)
            if value is not None:
                bounds[name] = value
    unit = " characters" if "min_length" in bounds or "max_length" in bounds else ""
    low = bounds.get("ge", bounds.get("min_length"))
    high = bounds.get("le", bounds.get("max_length"))
    parts = []
    if low is not None and high is not None:
        parts.append(f"{_yaml(low)} to {_yaml(high)}{unit}")
    elif low is not None:
        parts.append(f"at least {_yaml(low)}{unit}")
    if "gt" in bounds:
        parts.append(f"over {_yaml(bounds['gt'])}")
    if high is not None and low is None:
        parts.append(f"at most {_yaml(high)}{unit}")
    if "lt" in bounds:
        parts.append(f"under {_yaml(bounds['lt'])}")
    if "pattern" in bounds:
        parts.append(f"matching `{bounds['pattern']}`")
    return ", ".join(parts)


def type_text(field: FieldInfo) -> str:
    """What a value of the field is, for a person: `integer, 0 to 500`, "one of `a`,
    `b`", `duration`, `list of strings`; `null` named only where it is no default."""
    annotation = field.annotation
    nullable = _is_union(annotation) and type(None) in get_args(annotation)
    text = _kind(annotation)
    limits = _constraints(field.metadata)
    if limits:
        text += f", {limits}"
    default = field.get_default(call_default_factory=True)
    return text + (", or `null`" if nullable and default is not None else "")


def _kind(annotation: Any) -> str:
    annotation = _unwrap(annotation)
    values = _literals(annotation)
    if values:
        return "one of " + ", ".join(f"`{value}`" for value in values)
    if annotation is timedelta:
        return "duration: `30s`, `15m`, `6h`, `1d`, or a number of seconds"
    if annotation is date:
        return "date: `2026-02-14`"
    if annotation is SecretStr:
        return "secret string"
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (list, tuple):
        return f"list of {_plural(args[0])}"
    if origin is dict:
        keys = _literals(args[0])
        named = ", ".join(f"`{key}`" for key in keys) if keys else _kind(args[0])
        value = "any value" if args[1] is Any else _kind(args[1])
        return f"mapping of {named} to {value}"
    if _is_union(annotation):
        return " or ".join(_kind(arg) for arg in args)
    # A type the page has no words for must get them, not a wrong guess.
    raise TypeError(f"bot.config_reference has no wording for {annotation!r}")


def _plural(annotation: Any) -> str:
    kind = _kind(annotation)
    return kind + "s" if kind in _SCALARS.values() or kind == "secret string" else kind


def _literals(annotation: Any) -> list[Any]:
    """The values of a Literal, or of a union of Literals (`ProviderName | "none"`)."""
    if get_origin(annotation) is Literal:
        return list(get_args(annotation))
    if _is_union(annotation):
        parts = [_literals(arg) for arg in get_args(annotation)]
        if all(parts):
            return [value for part in parts for value in part]
    return []


def default_text(setting: Setting) -> str:
    """The default as YAML would spell it; a secret's value never, `unset` for None,
    `required` when there is none."""
    field = setting.field
    if field.default is PydanticUndefined and field.default_factory is None:
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if _holds_secret(field.annotation) and value:
        return "set, not shown"
    return f"`{_yaml(value)}`"


def _holds_secret(annotation: Any) -> bool:
    return annotation is SecretStr or any(_holds_secret(arg) for arg in get_args(annotation))


def _yaml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, timedelta):
        return _duration(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_quoted(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_yaml(item)}" for key, item in value.items()) + "}"
    if isinstance(value, str) and not value:
        return '""'
    return str(value)


def _quoted(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else _yaml(value)


def _duration(value: timedelta) -> str:
    seconds = value.total_seconds()
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def _environment(key: str) -> str:
    found = [e for e in ENVIRONMENT_SETTINGS if e.key == key]
    return "".join(f" Environment: `{e.variable}`, {e.when}." for e in found)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _anchor(path: Sequence[str]) -> str:
    """`mcp-servers-name-command`: the key, as an id a link can name."""
    words = "".join(c if c.isalnum() else " " for c in dotted(path))
    return "-".join(words.split())


def _table(rows: list[Setting]) -> list[str]:
    lines = ["| Key | Type | Default | Description |", "| --- | --- | --- | --- |"]
    for row in rows:
        text = row.description + _environment(row.key)
        kind = type_text(row.field)
        lines.append(
            f"| `{row.key}`{{ #{_anchor(row.path)} }} | {_cell(kind)} "
            f"| {_cell(default_text(row))} | {_cell(text)} |"
        )
    return lines


def _section(setting: Setting, children: list[Setting]) -> list[str]:
    path = (*setting.path, *setting.steps)
    level = "##" if len(setting.path) == 1 else "###"
    title = setting.key if len(setting.path) == 1 else f"`{dotted(path)}`"
    lines = [f"{level} {title} {{ #{_anchor(path)} }}", "", setting.description]
    if setting.steps == (ANY_ITEM,):
        lines[-1] += " A list: each item has the keys below."
    elif setting.steps == (ANY_KEY,):
        lines[-1] += f" A mapping: each `{ANY_KEY}` you choose has the keys below."
    values = [child for child in children if child.section is None]
    return [*lines, "", *([*_table(values), ""] if values else [])]


_INTRO = f"""\
<!-- Generated from the settings models by bot/config_reference.py: do not edit.
     Regenerate with: {REGENERATE} -->

# Configuration reference

groupmate reads one YAML file: the one `--config PATH` names, else `config.yaml` in the
folder it starts in; without one, every setting below has its default. The
repository's `config.yaml.template` is a commented config to start from (`make run`
copies it to `config.yaml`). Check a config before you start the bot with it:

```console
$ groupmate check --config config.yaml
```

`check` prints what is on, or names each key that is wrong and why (exit status 2). A
key that no setting has is refused, with the nearest setting it may have meant. A
section whose lines are all commented out means its defaults.

## Values from the environment

Any value can come from the environment: write `${{NAME}}`, as a shell does. The forms
are {", ".join(f"`{form.strip()}`" for form in ENV_FORMS.split(","))}. A
`${{NAME}}` whose variable is unset leaves the value empty, which for a secret or an
address means unset; `${{NAME:?message}}` refuses to start instead. Secrets are never
logged.

groupmate itself also reads these variables:

| Variable | Setting | When |
| --- | --- | --- |
{chr(10).join(f"| `{e.variable}` | `{e.key}` | {e.when} |" for e in ENVIRONMENT_SETTINGS)}

For example, to see why the bot did something, turn on debug logging, in the file:

```yaml
logging:
  level: DEBUG
```

or for one run: `GROUPMATE_LOG_LEVEL=DEBUG groupmate serve`.
"""


def render() -> str:
    """The whole page."""
    everything = list(settings())
    parts = [_INTRO]
    for setting in everything:
        if setting.section is None:
            if len(setting.path) == 1:  # a top-level value: none yet, but keep it listed
                parts.append("\n".join([f"## {setting.key}", "", *_table([setting]), ""]))
            continue
        inside = (*setting.path, *setting.steps)
        children = [s for s in everything if s.path[:-1] == inside]
        parts.append("\n".join(_section(setting, children)))
    return "\n".join(parts).rstrip("\n") + "\n"


if __name__ == "__main__":
    # UTF-8 whatever the terminal's locale: the page is committed as UTF-8.
    sys.stdout.buffer.write(render().encode("utf-8"))
