"""Loading plugins: find each configured one (function_calls.plugins.found), check its
services and build its tools, so that one bad plugin fails alone.

A plugin fails (state "failed", with the reason) when its module does not import, its
settings are invalid, a tool or a service does not build, its name or a tool's name is
taken by an earlier plugin or a built-in, or (when the bot starts) a service does not
start. Every other plugin loads as if it were not there.

A plugin's settings and services are its own: its handlers (and its later services) ask
for them by type; another plugin never sees them, so two plugins may each have an
`httpx.AsyncClient`. A service may not stand in for one of the bot's own types.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata as metadata
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel

from groupmate.function_calls.errors import ToolDefinitionError
from groupmate.function_calls.plugins.declare import Service
from groupmate.function_calls.plugins.found import (
    Found,
    PluginError,
    declared_commands,
    entry_points,
    find,
)
from groupmate.function_calls.plugins.spec import PluginSpec
from groupmate.function_calls.provided import (
    BUILTIN_SERVICE_TYPES,
    BUILTIN_TYPES,
    SERVICE_TYPES,
    WRITE_TYPES,
)
from groupmate.function_calls.tool_building import tool_from, tool_options
from groupmate.function_calls.tools import Handler, Tool
from groupmate.function_calls.toolsets import (
    AbstractToolset,
    CombinedToolset,
    FunctionToolset,
    narrowed_scope,
)
from groupmate.function_calls.vocabulary import PluginState

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
    # Its slash commands; a failed plugin's too, when it got as far as declaring them.
    commands: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LoadedPlugin:
    """A plugin whose tools built: what the bot needs to run it. `toolset` is its tools
    under the config's options (allow and deny lists, scope, admin_only)."""

    name: str
    module: str
    version: str | None
    settings: BaseModel | None
    services: tuple[Service, ...]
    toolset: AbstractToolset
    builtin: bool = False

    @property
    def tools(self) -> tuple[Tool, ...]:
        """The tools it may offer anyone, as narrowed."""
        return tuple(self.toolset)

    def status(self) -> PluginStatus:
        tools = tuple(tool.name for tool in self.tools)
        commands = tuple(tool.command for tool in self.tools if tool.command)
        return PluginStatus(
            self.name, self.module, "loaded", self.version, tools, None, self.builtin, commands
        )


@dataclass(frozen=True, slots=True)
class PluginSet:
    """Every configured plugin: those that loaded, and the status of each."""

    loaded: tuple[LoadedPlugin, ...]
    statuses: tuple[PluginStatus, ...]

    @classmethod
    def combined(cls, *sets: PluginSet) -> PluginSet:
        """The plugins of all `sets`, in order (their names must not clash)."""
        return cls(
            tuple(plugin for one in sets for plugin in one.loaded),
            tuple(status for one in sets for status in one.statuses),
        )

    def tool_names(self) -> set[str]:
        return {tool.name for plugin in self.loaded for tool in plugin.tools}

    def names(self) -> set[str]:
        return {plugin.name for plugin in self.loaded}

    def toolset(self, order: Callable[[Tool], int] | None = None) -> CombinedToolset:
        """The loaded plugins' tools: the built-ins first, as one set in `order` (the
        order the model is shown them; see `handlers.in_model_order`), then each
        plugin's own set, in the config's order."""
        builtin = [tool for plugin in self.loaded if plugin.builtin for tool in plugin.tools]
        if order is not None:
            builtin.sort(key=order)
        added = [plugin.toolset for plugin in self.loaded if not plugin.builtin]
        return CombinedToolset([FunctionToolset(builtin, label="built-in tools"), *added])

    @property
    def failed(self) -> list[PluginStatus]:
        return [status for status in self.statuses if status.state == "failed"]

    def failed_commands(self) -> dict[str, str]:
        """The slash commands of the plugins that failed, each with its plugin's name
        (the first plugin's, when two declared one)."""
        found: dict[str, str] = {}
        for status in self.failed:
            for command in status.commands:
                found.setdefault(command, status.name)
        return found

    def without(self, plugin: LoadedPlugin, reason: str) -> PluginSet:
        """This set with `plugin` failed for `reason` (a service that did not start)."""
        return PluginSet(
            tuple(one for one in self.loaded if one is not plugin),
            tuple(
                dataclasses.replace(status, state="failed", error=reason, tools=())
                if status.state == "loaded" and status.name == plugin.name  # names are unique
                else status
                for status in self.statuses
            ),
        )


def _matches(pattern: str, handler: Handler) -> bool:
    options = tool_options(handler)
    name = (options.name if options else None) or str(getattr(handler, "__name__", ""))
    return fnmatchcase(name, pattern)


def _check_services(found: Found) -> None:
    """Each service makes a type of its own (none of the bot's), and asks only for what
    it can have: the plugin's settings, the bot's read-only services and `PluginTools`,
    the plugin's earlier ones (a writer it made itself, too: the memory family's
    read-only `SearchReader` is made over its `MessageSearch`)."""
    own = type(found.settings) if found.settings is not None else None
    allowed = BUILTIN_SERVICE_TYPES if found.builtin else SERVICE_TYPES
    made: set[type[Any]] = set()
    for service in found.services:
        what = f"service {service.factory.__qualname__!r}"
        for dependency in service.params:
            kind = dependency.kind
            if kind in WRITE_TYPES and kind not in allowed and kind not in made:
                raise PluginError(
                    f"{what}: parameter {dependency.param!r} ({kind.__name__}) can change "
                    "the bot's state, which a plugin's service may not hold. Read through "
                    "ReminderReader; change state with PluginTools (the bot's tools, "
                    "called through its invoker as the plugin)",
                    found.name,
                )
            if not (dependency.optional or kind is own or kind in allowed or kind in made):
                raise PluginError(
                    f"{what}: parameter {dependency.param!r} ({kind.__name__}): nothing "
                    "provides it (a service takes the plugin's settings, the bot's "
                    "read-only services, PluginTools and the plugin's earlier services)",
                    found.name,
                )
        taken = service.kind in BUILTIN_TYPES or service.kind in allowed
        if taken or service.kind is own or service.kind in made:
            raise PluginError(
                f"{what}: {service.kind.__name__} is already provided (by the bot, the "
                "plugin's settings or another of its services); make a type of its own",
                found.name,
            )
        made.add(service.kind)


def _build(found: Found, where: str) -> AbstractToolset:
    """The plugin's tools, under the config's filters and options."""
    own = {service.kind for service in found.services}
    if found.settings is not None:
        own.add(type(found.settings))

    def provides(kind: type[Any]) -> bool:
        return kind in BUILTIN_TYPES or kind in own

    spec = found.spec
    tools: list[Tool] = []
    for handler in found.handlers:
        try:
            # A built-in tool's schemas are checked by the tests, not at every start.
            tool = tool_from(handler, provides=provides, plugin=found.name, checked=found.builtin)
            tools.append(tool)
        except ToolDefinitionError as exc:
            raise PluginError(str(exc), found.name) from None
    for pattern in (*(spec.tools.allow or ()), *spec.tools.deny):
        if not any(_matches(pattern, handler) for handler in found.handlers):
            log.warning("%s.tools: %r names none of the plugin's tools", where, pattern)
    admitted = [tool for tool in tools if spec.tools.admits(tool.name)]
    if not admitted:
        raise PluginError(f"{where}.tools leaves none of the plugin's tools", found.name)
    for tool in admitted:
        if narrowed_scope(tool.scope, spec.scope) is None:
            log.warning(
                "%s.scope: %s is for %s chats only, so scope %r offers it nowhere",
                where, tool.name, tool.scope, spec.scope,
            )  # fmt: skip
    toolset = FunctionToolset(tools, label=f"plugin {found.name!r}").narrowed(
        scope=spec.scope, admin_only=spec.admin_only, tools=spec.tools
    )
    if not len(toolset):
        raise PluginError(f"{where}.scope leaves none of the plugin's tools", found.name)
    return toolset


def load_plugins(
    specs: Sequence[PluginSpec],
    *,
    builtin: bool = False,
    taken: Mapping[str, str] | None = None,
    taken_names: Iterable[str] = (),
    where: str = "plugins",
) -> PluginSet:
    """Load the plugins `specs` name, in order, each on its own (see the module's
    docstring); `builtin` for groupmate's own families. `taken` are the tool names
    already in use, with what holds each ("a built-in tool"); `taken_names` the plugin
    names. `where` names the config key in reasons (`plugins[1].settings.sides: …`)."""
    # Reading the installed entry points scans every distribution: only when it counts.
    installed: dict[str, metadata.EntryPoint] = {} if builtin or not specs else entry_points()
    used = dict(taken or {})
    names = set(taken_names)
    loaded: list[LoadedPlugin] = []
    statuses: list[PluginStatus] = []
    for index, spec in enumerate(specs):
        place = f"builtins.{spec.module}" if builtin else f"{where}[{index}]"
        if spec.disabled:
            statuses.append(PluginStatus(spec.module, spec.module, "disabled", builtin=builtin))
            continue
        commands: tuple[str, ...] = ()
        try:
            found = find(spec, place, installed, builtin)
            commands = declared_commands(found.handlers)
            if found.name in names:
                raise PluginError(f"another plugin is named {found.name!r}", found.name)
            _check_services(found)
            toolset = _build(found, place)
            clash = next((name for name in toolset.names() if name in used), None)
            if clash is not None:
                raise PluginError(f"tool name {clash!r} is taken by {used[clash]}", found.name)
        except PluginError as exc:
            name = exc.name or spec.module
            failed = PluginStatus(
                name, spec.module, "failed", error=exc.reason, builtin=builtin,
                commands=exc.commands or commands,
            )  # fmt: skip
            statuses.append(failed)
            continue
        names.add(found.name)
        used.update(dict.fromkeys(toolset.names(), f"plugin {found.name!r}"))
        plugin = LoadedPlugin(
            found.name, spec.module, found.version, found.settings, found.services, toolset, builtin
        )
        loaded.append(plugin)
        statuses.append(plugin.status())
    return PluginSet(tuple(loaded), tuple(statuses))


def available(configured: Iterable[str]) -> list[PluginStatus]:
    """Installed plugins (entry points) the config does not name: listed, not loaded."""
    named = set(configured)
    found = []
    for name, point in sorted(entry_points().items()):
        if name in named or point.value.partition(":")[0].strip() in named:
            continue
        version = point.dist.version if point.dist is not None else None
        found.append(PluginStatus(name, point.value, "available", version))
    return found
