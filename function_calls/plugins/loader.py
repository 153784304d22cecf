"""Loading plugins: import each configured module, validate its settings, read its
services and build its tools, so that one bad plugin fails alone.

A plugin fails (state "failed", with the reason) when its module does not import, its
settings are invalid, a tool does not build, a tool or service name is taken by an
earlier plugin (the built-ins come first), or (when the bot starts) a service does
not start. Every other plugin loads as if it were not there.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.metadata as metadata
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ValidationError

from function_calls.errors import ToolDefinitionError
from function_calls.plugins.declare import Plugin, Service
from function_calls.plugins.spec import ENTRY_POINT_GROUP, PluginSpec
from function_calls.registry import Handler, Tool, ToolRegistry, tool_from, tool_options
from function_calls.tools import builtin_provides
from function_calls.vocabulary import PluginState

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PluginStatus:
    """What `groupmate plugins`, `check`, /v1/status, /healthz and the dashboard show of
    a plugin: never its settings."""

    name: str
    module: str
    state: PluginState
    version: str | None = None
    tools: tuple[str, ...] = ()
    error: str | None = None
    builtin: bool = False


@dataclass(frozen=True, slots=True)
class LoadedPlugin:
    """A plugin whose tools built: what the bot needs to run it."""

    name: str
    module: str
    version: str | None
    settings: BaseModel | None
    services: tuple[Service, ...]
    tools: tuple[Tool, ...]
    builtin: bool = False

    def status(self) -> PluginStatus:
        tools = tuple(tool.name for tool in self.tools)
        return PluginStatus(
            self.name, self.module, "loaded", self.version, tools, None, self.builtin
        )


class PluginError(Exception):
    """Why one plugin cannot load; `str()` is the reason, for the log and the status."""

    def __init__(self, reason: str, name: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.name = name


@dataclass(frozen=True, slots=True)
class _Imported:
    """A plugin imported and its settings validated; its tools not yet built."""

    name: str
    spec: PluginSpec
    version: str | None
    plugin: Plugin
    handlers: tuple[Handler, ...]
    settings: BaseModel | None
    services: tuple[Service, ...]
    builtin: bool


@dataclass(frozen=True, slots=True)
class PluginSet:
    """Every configured plugin: those that loaded, and the status of each."""

    loaded: tuple[LoadedPlugin, ...]
    statuses: tuple[PluginStatus, ...]

    @classmethod
    def combined(cls, *sets: PluginSet) -> PluginSet:
        """The plugins of all `sets`, in order (their tool names must not clash)."""
        return cls(
            tuple(plugin for one in sets for plugin in one.loaded),
            tuple(status for one in sets for status in one.statuses),
        )

    def tool_names(self) -> set[str]:
        return {tool.name for plugin in self.loaded for tool in plugin.tools}

    def registry(self, order: Callable[[Tool], int] | None = None) -> ToolRegistry:
        """The loaded plugins' tools: the built-ins first (in `order`, the order the model
        is shown them), then each plugin's, in the config's order."""
        builtin = [tool for plugin in self.loaded if plugin.builtin for tool in plugin.tools]
        if order is not None:
            builtin.sort(key=order)
        added = [tool for plugin in self.loaded if not plugin.builtin for tool in plugin.tools]
        return ToolRegistry([*builtin, *added])

    @property
    def failed(self) -> list[PluginStatus]:
        return [status for status in self.statuses if status.state == "failed"]

    def without(self, name: str, reason: str) -> PluginSet:
        """This set with plugin `name` failed for `reason` (a service that did not start)."""
        return PluginSet(
            tuple(plugin for plugin in self.loaded if plugin.name != name),
            tuple(
                dataclasses.replace(status, state="failed", error=reason, tools=())
                if status.name == name
                else status
                for status in self.statuses
            ),
        )

    def settings_values(self) -> dict[type[Any], object]:
        """Each loaded plugin's settings, by the type its handlers ask for."""
        return {type(p.settings): p.settings for p in self.loaded if p.settings is not None}


def entry_points() -> dict[str, metadata.EntryPoint]:
    """The installed plugins: entry points of group `groupmate.plugins`, by name."""
    return {point.name: point for point in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _version(module: str, point: metadata.EntryPoint | None) -> str | None:
    if point is not None and point.dist is not None:
        return point.dist.version
    top = module.split(".", 1)[0]
    if top in ("function_calls", "bot"):
        return None  # groupmate's own
    try:  # the usual case: the distribution is named as its package (`-` or `_`)
        return metadata.version(top)
    except metadata.PackageNotFoundError:
        pass
    for dist in _distributions().get(top, []):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    # Reads every installed distribution's metadata (a third of a second): once.
    return metadata.packages_distributions()


def _import(
    spec: PluginSpec, installed: Mapping[str, metadata.EntryPoint]
) -> tuple[ModuleType, Plugin | None, str, str | None]:
    """The plugin's module, the `Plugin` its entry point names (if it does), its name
    and version."""
    point = installed.get(spec.module)
    target = point.value if point is not None else spec.module
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name.strip())
    except Exception as exc:  # a plugin's import may raise anything; it fails alone
        log.debug("plugin %s: import failed", spec.module, exc_info=True)
        raise PluginError(
            f"cannot import {module_name.strip()}: {type(exc).__name__}: {exc}"
        ) from None
    declared: Plugin | None = None
    if attribute:
        found = getattr(module, attribute.strip(), None)
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
    try:
        return plugin.settings.model_validate(spec.settings)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_input=False, include_context=False):
            path = ".".join(str(part) for part in error["loc"])
            message = error["msg"].removeprefix("Value error, ")
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


def _read(
    spec: PluginSpec, where: str, installed: Mapping[str, metadata.EntryPoint], builtin: bool
) -> _Imported:
    module, declared, name, version = _import(spec, installed)
    plugin = declared if declared is not None else Plugin()
    try:
        settings = _settings(plugin, spec, where)
        services = tuple(plugin.services())
    except ToolDefinitionError as exc:
        raise PluginError(str(exc), name) from None
    except PluginError as exc:
        raise PluginError(exc.reason, name) from None
    handlers = _handlers(module, declared)
    if not handlers:
        raise PluginError(f"{spec.module} has no @tool_function handlers", name)
    return _Imported(name, spec, version, plugin, handlers, settings, services, builtin)


def _narrowed(tool: Tool, spec: PluginSpec) -> Tool:
    """The config's options on one tool: `scope` narrows, `admin_only` adds."""
    changes: dict[str, Any] = {}
    if spec.scope != "both" and tool.scope != spec.scope:
        changes["scope"] = spec.scope
    if spec.admin_only and not tool.admin_only:
        changes["admin_only"] = True
    return dataclasses.replace(tool, **changes) if changes else tool


def _build(
    imported: _Imported, provides: Callable[[type[Any]], bool], where: str
) -> tuple[Tool, ...]:
    spec = imported.spec
    tools: list[Tool] = []
    for handler in imported.handlers:
        try:
            tool = tool_from(handler, provides=provides, plugin=imported.name)
        except ToolDefinitionError as exc:
            raise PluginError(str(exc), imported.name) from None
        if spec.tools.admits(tool.name):
            tools.append(_narrowed(tool, spec))
    for pattern in (*(spec.tools.allow or ()), *spec.tools.deny):
        if not any(_matches(pattern, handler) for handler in imported.handlers):
            log.warning("%s.tools: %r names none of the plugin's tools", where, pattern)
    if not tools:
        raise PluginError(f"{where}.tools leaves none of the plugin's tools", imported.name)
    return tuple(tools)


def _matches(pattern: str, handler: Handler) -> bool:
    from fnmatch import fnmatchcase

    options = tool_options(handler)
    name = (options.name if options else None) or str(getattr(handler, "__name__", ""))
    return fnmatchcase(name, pattern)


def load_plugins(
    specs: Sequence[PluginSpec],
    *,
    builtins: Sequence[PluginSpec] = (),
    taken: Mapping[str, str] | None = None,
    where: str = "plugins",
) -> PluginSet:
    """Load the built-in families (`builtins`), then the configured `specs`, each on its
    own: see the module's docstring. `taken` are tool names already in use (a test's own
    tools). `where` names the config key in reasons (`plugins[1].settings.sides: …`)."""
    installed = entry_points()
    imported: list[_Imported] = []
    statuses: dict[int, PluginStatus] = {}
    names: set[str] = set()
    everything = [(spec, True) for spec in builtins] + [(spec, False) for spec in specs]
    for index, (spec, builtin) in enumerate(everything):
        place = f"builtins.{spec.module}" if builtin else f"{where}[{index - len(builtins)}]"
        if spec.disabled:
            statuses[index] = PluginStatus(spec.module, spec.module, "disabled", builtin=builtin)
            continue
        try:
            one = _read(spec, place, installed, builtin)
            if one.name in names:
                raise PluginError(f"another plugin is named {one.name!r}", one.name)
        except PluginError as exc:
            statuses[index] = _failed(spec, exc, builtin)
            continue
        names.add(one.name)
        imported.append(one)
        statuses[index] = PluginStatus(one.name, spec.module, "loaded", one.version)
    # Handlers may ask for any service a plugin provides (one plugin per type).
    providers: dict[type[Any], str] = {}
    for one in list(imported):
        clash = next((s.kind for s in one.services if s.kind in providers), None)
        if clash is not None:
            reason = f"{clash.__name__} is already provided by plugin {providers[clash]!r}"
            statuses[_index_of(everything, one)] = _failed(
                one.spec, PluginError(reason, one.name), one.builtin
            )
            imported.remove(one)
            continue
        providers.update({service.kind: one.name for service in one.services})
    loaded: list[LoadedPlugin] = []
    used: dict[str, str] = dict(taken or {})
    for one in imported:
        own = type(one.settings) if one.settings is not None else None

        def provides(kind: type[Any], own: type[Any] | None = own) -> bool:
            return builtin_provides(kind) or kind in providers or kind is own

        index = _index_of(everything, one)
        try:
            tools = _build(one, provides, f"{where}[{index - len(builtins)}]")
            taken_name = next((tool.name for tool in tools if tool.name in used), None)
            if taken_name is not None:
                holder = used[taken_name]
                raise PluginError(f"tool name {taken_name!r} is taken by {holder}", one.name)
        except PluginError as exc:
            statuses[index] = _failed(one.spec, exc, one.builtin)
            continue
        used.update(dict.fromkeys((tool.name for tool in tools), f"plugin {one.name!r}"))
        plugin = LoadedPlugin(
            one.name, one.spec.module, one.version, one.settings, one.services, tools, one.builtin
        )
        loaded.append(plugin)
        statuses[index] = plugin.status()
    ordered = tuple(statuses[index] for index in sorted(statuses))
    return PluginSet(tuple(loaded), ordered)


def _index_of(everything: Sequence[tuple[PluginSpec, bool]], one: _Imported) -> int:
    return next(
        i
        for i, (spec, builtin) in enumerate(everything)
        if spec is one.spec and builtin == one.builtin
    )


def _failed(spec: PluginSpec, exc: PluginError, builtin: bool) -> PluginStatus:
    name = exc.name or spec.module
    return PluginStatus(name, spec.module, "failed", error=exc.reason, builtin=builtin)


def available(configured: Iterable[str]) -> list[PluginStatus]:
    """Installed plugins (entry points) the config does not name: listed, not loaded."""
    named = set(configured)
    found = []
    for name, point in sorted(entry_points().items()):
        if name in named or point.value.partition(":")[0] in named:
            continue
        version = point.dist.version if point.dist is not None else None
        found.append(PluginStatus(name, point.value, "available", version))
    return found
