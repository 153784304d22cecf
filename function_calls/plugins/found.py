"""Finding a plugin: its module (by module name or entry-point name), its `Plugin`
declaration, name and version, its validated settings and its marked handlers."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata as metadata
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType

from pydantic import BaseModel, ValidationError

from groupmate.function_calls.errors import ToolDefinitionError
from groupmate.function_calls.plugins.declare import Plugin, Service
from groupmate.function_calls.plugins.spec import ENTRY_POINT_GROUP, PluginSpec
from groupmate.function_calls.registry import Handler, tool_options
from groupmate.function_calls.settings_keys import undeclared_keys, unknown_setting
from groupmate.storage.exceptions import GroupmateError

log = logging.getLogger(__name__)
# Errors whose message says what is missing or broken in the code (a module's name, a
# file and line), never data: a reason may quote them. Others are named by class only,
# since a plugin's own message may hold what it read (a key in a URL, say).
_QUOTABLE = (ImportError, SyntaxError)


class PluginError(GroupmateError):
    """Why one plugin cannot load; `str()` is the reason, for the log and the status."""

    def __init__(
        self, reason: str, name: str | None = None, commands: tuple[str, ...] = ()
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.name = name
        # The slash commands the plugin declares, when it got as far as declaring them:
        # the bot answers them with "unavailable" rather than not knowing them.
        self.commands = commands


def declared_commands(handlers: tuple[Handler, ...]) -> tuple[str, ...]:
    """The slash commands `handlers` declare (`@tool_function(command=...)`)."""
    options = (tool_options(handler) for handler in handlers)
    return tuple(found.command for found in options if found is not None and found.command)


def described(exc: BaseException) -> str:
    """An exception as a plugin's status may show it (see `_QUOTABLE`)."""
    if isinstance(exc, _QUOTABLE):
        return f"{type(exc).__name__}: {exc}"
    return f"{type(exc).__name__} (the log at DEBUG level has the details)"


@dataclass(frozen=True, slots=True)
class Found:
    """A plugin imported and its settings validated; its tools not yet built."""

    name: str
    spec: PluginSpec
    version: str | None
    plugin: Plugin
    handlers: tuple[Handler, ...]
    settings: BaseModel | None
    services: tuple[Service, ...]
    builtin: bool


def entry_points() -> dict[str, metadata.EntryPoint]:
    """The installed plugins: entry points of group `groupmate.plugins`, by name."""
    return {point.name: point for point in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _entry_point(
    configured: str, installed: Mapping[str, metadata.EntryPoint]
) -> metadata.EntryPoint | None:
    """The entry point the config names, or the one that points at the module it names
    (so that a plugin has one name, its entry point's, however it is enabled)."""
    if configured in installed:
        return installed[configured]
    for point in installed.values():
        if point.value.partition(":")[0].strip() == configured:
            return point
    return None


def _version(module: str, point: metadata.EntryPoint | None) -> str | None:
    if point is not None and point.dist is not None:
        return point.dist.version
    top = module.split(".", 1)[0]
    if top in ("function_calls", "bot"):
        return None  # groupmate's own
    found = _installed(top)  # the usual case: the distribution is named as its package
    for dist in _distributions().get(top, []) if found is None else ():
        found = _installed(dist)
        if found is not None:
            break
    return found


@functools.cache
def _installed(distribution: str) -> str | None:
    # A scan of every installed distribution's metadata (4 ms): once for each name, not
    # once for each of groupmate's own families.
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    # Reads every installed distribution's metadata (a third of a second): once.
    return metadata.packages_distributions()


def _import(
    spec: PluginSpec, installed: Mapping[str, metadata.EntryPoint]
) -> tuple[ModuleType, Plugin | None, str, str | None]:
    """The plugin's module, its `Plugin` (if it declares one), its name and version."""
    point = _entry_point(spec.module, installed)
    target = point.value if point is not None else spec.module
    module_name, _, attribute = (part.strip() for part in target.partition(":"))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a plugin's import may raise anything; it fails alone
        log.debug("plugin %s: import failed", spec.module, exc_info=True)
        raise PluginError(f"cannot import {module_name}: {described(exc)}") from None
    declared: Plugin | None = None
    if attribute:
        found = getattr(module, attribute, None)
        if not isinstance(found, Plugin):
            raise PluginError(f"entry point {spec.module!r}: {target} is not a Plugin")
        declared = found
    else:
        plugins = [value for value in vars(module).values() if isinstance(value, Plugin)]
        if len(plugins) > 1:
            raise PluginError(f"{module_name} declares {len(plugins)} Plugins; one at most")
        declared = plugins[0] if plugins else None
    name = (
        (declared.name if declared is not None else None)
        or (point.name if point is not None else None)
        or module_name.rsplit(".", 1)[-1]
    )
    return module, declared, name.lower().replace(".", "_"), _version(module_name, point)


def _settings(plugin: Plugin, spec: PluginSpec, where: str) -> BaseModel | None:
    if plugin.settings is None:
        if spec.settings:
            raise PluginError(f"{where}.settings: this plugin takes no settings")
        return None
    # Refused whatever the model's `extra` says: a misspelt key would load unused.
    undeclared = undeclared_keys(plugin.settings, spec.settings)
    if undeclared:
        raise PluginError(
            "; ".join(
                f"{where}.settings.{'.'.join(str(part) for part in loc)}: "
                f"{unknown_setting(plugin.settings, loc)}"
                for loc in undeclared
            )
        )
    try:
        return plugin.settings.model_validate(spec.settings)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_input=False, include_context=False):
            path = ".".join(str(part) for part in error["loc"])
            message = error["msg"].removeprefix("Value error, ")
            if error["type"] == "extra_forbidden":
                message = unknown_setting(plugin.settings, error["loc"])
            problems.append(f"{where}.settings{'.' + path if path else ''}: {message}")
        raise PluginError("; ".join(problems)) from None


def _handlers(module: ModuleType, plugin: Plugin | None) -> tuple[Handler, ...]:
    """The plugin's tools: those it lists, then the marked handlers in its module's
    namespace (its own and those it imports, as a package's __init__ does), in order."""
    found: list[Handler] = list(plugin.handlers) if plugin is not None else []
    for value in vars(module).values():
        if callable(value) and tool_options(value) is not None and value not in found:
            found.append(value)
    return tuple(found)


def find(
    spec: PluginSpec, where: str, installed: Mapping[str, metadata.EntryPoint], builtin: bool
) -> Found:
    """Import the plugin `spec` names and read it; PluginError says why not."""
    module, declared, name, version = _import(spec, installed)
    plugin = declared if declared is not None else Plugin()
    handlers = _handlers(module, declared)
    if not handlers:
        raise PluginError(f"{spec.module} has no @tool_function handlers", name)
    commands = declared_commands(handlers)
    try:
        settings = _settings(plugin, spec, where)
        services = tuple(plugin.services())
    except ToolDefinitionError as exc:
        raise PluginError(str(exc), name, commands) from None
    except PluginError as exc:
        raise PluginError(exc.reason, name, commands) from None
    return Found(name, spec, version, plugin, handlers, settings, services, builtin)
