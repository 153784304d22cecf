"""What to say of a settings key no setting has (config.yaml's sections, a plugin's
settings): "no such setting; did you mean timezone?", not pydantic's wording."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from types import UnionType
from typing import Any, Union, cast, get_args, get_origin

from pydantic import BaseModel

from groupmate.function_calls.sections import is_section


def unknown_setting(model: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """The message for the unknown key at `loc` of `model`'s document: the setting it
    was likely meant to be, else the settings there are."""
    known = _settings_at(model, loc[:-1])
    meant = difflib.get_close_matches(str(loc[-1]), known, n=1, cutoff=0.6)
    if meant:
        return f"no such setting; did you mean {meant[0]}?"
    return "no such setting" + (f" (here: {', '.join(known)})" if known else "")


def undeclared_keys(
    model: type[BaseModel], data: Any, loc: tuple[int | str, ...] = ()
) -> list[tuple[int | str, ...]]:
    """Where `data` has a key `model` declares no setting for, at any depth of its
    sections, even where the model lets extra keys in (`extra="allow"`): a misspelt
    setting must not load quietly as an unused one. A field's alias counts as its name;
    a mapping field (`dict[str, X]`) is free-form: its keys are not looked at."""
    if not isinstance(data, Mapping):
        return []
    declared: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        for key in (name, field.alias, field.validation_alias):
            if isinstance(key, str):
                declared[key] = field.annotation
    found: list[tuple[int | str, ...]] = []
    for key, value in data.items():
        if key not in declared:
            found.append((*loc, key))
            continue
        section = None if _is_mapping(declared[key]) else _section_of(declared[key])
        if section is None:
            continue
        items = enumerate(value) if isinstance(value, list) else [(None, value)]
        for index, item in items:
            where = (*loc, key) if index is None else (*loc, key, index)
            found += undeclared_keys(section, item, where)
    return found


def _is_mapping(annotation: Any) -> bool:
    """A `dict[...]` or `Mapping[...]` field, also as `X | None`."""
    origin = get_origin(annotation)
    if isinstance(origin, type) and issubclass(origin, Mapping):
        return True
    if origin in (Union, UnionType):
        return any(_is_mapping(argument) for argument in get_args(annotation))
    return False


def _settings_at(model: type[BaseModel], path: tuple[int | str, ...]) -> list[str]:
    """The setting names of the section at `path` of `model` (none when it is no
    section: a free-form mapping)."""
    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue  # an item of a list: its section is the list's
        found = current.model_fields.get(part) if is_section(current) else None
        if found is None:
            return []
        current = _section_of(found.annotation)
        if current is None:
            return []
    return list(current.model_fields) if is_section(current) else []


def _section_of(annotation: Any) -> type[BaseModel] | None:
    """The settings model an annotation holds (in `X | None`, `list[X]`, ...), if one."""
    if is_section(annotation):
        return cast(type[BaseModel], annotation)
    for argument in get_args(annotation):
        found = _section_of(argument)
        if found is not None:
            return found
    return None
