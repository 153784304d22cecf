"""The bot's plugins while it runs: which loaded, their services started and stopped
with the bot, the `Deps` their handlers (and the built-ins') are given, and their tools:
a `PluginRuntime` is the tool set of the plugins that run."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any

from groupmate.bot.command_words import COMMAND_ALIASES, COMMAND_USAGE
from groupmate.bot.config import Config
from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.deps import Deps
from groupmate.function_calls.handlers import BUILTIN_MODULES, builtin_plugins, in_model_order
from groupmate.function_calls.plugin_calls import PluginTools, ToolGate
from groupmate.function_calls.plugins import (
    LoadedPlugin,
    PluginSet,
    PluginStatus,
    available,
    load_plugins,
)
from groupmate.function_calls.plugins.found import described
from groupmate.function_calls.toolsets import AbstractToolset, ToolListing

log = logging.getLogger(__name__)
# A service that has not started by then fails its plugin: startup never hangs on one.
SERVICE_START_TIMEOUT = 30.0


def configured_plugins(
    config: Config, *, builtins: bool = True, taken: set[str] | None = None
) -> PluginSet:
    """The built-in families the config leaves on (unless `builtins` is False: a bot
    given its own tools, `taken`), then the config's plugins, each loaded on its own.
    The families' names are never a plugin's, switched off or not."""
    base = builtin_plugins(config.builtins) if builtins else PluginSet((), ())
    tools = {name: "a built-in tool" for name in base.tool_names()}
    tools.update(dict.fromkeys(taken or (), "one of the bot's own tools"))
    added = load_plugins(config.plugins, taken=tools, taken_names=BUILTIN_MODULES)
    return PluginSet.combined(base, added)


class PluginRuntime(AbstractToolset):
    """See the module's docstring. `statuses` are what /v1/status, /healthz and the
    dashboard show; a plugin whose service fails to start is failed from then on, and
    its tools are gone from this set (the built-ins first, in the model's order, then
    each plugin's under its config's options)."""

    def __init__(self, plugins: PluginSet) -> None:
        self._set(plugins)
        self._logged = False

    def _set(self, plugins: PluginSet) -> None:
        self.plugins = plugins
        self._toolset = in_model_order(plugins)

    @property
    def label(self) -> str:
        return "plugins"

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        return self._toolset.listing(ctx)

    @property
    def statuses(self) -> list[PluginStatus]:
        return list(self.plugins.statuses)

    def log_failures(self) -> None:
        """Each failed plugin's reason, once per bot."""
        if self._logged:
            return
        self._logged = True
        for status in self.plugins.failed:
            log.error("plugin %s is not loaded: %s", status.name, status.error)

    async def start(self, stack: AsyncExitStack, deps: Deps, gate: ToolGate | None = None) -> Deps:
        """Start each loaded plugin's services, in order; returns `deps` with every
        plugin's settings and services, each seen by its own plugin's handlers only. A
        plugin whose service fails is failed, and what it had started is stopped. With
        `gate`, a service may ask for `PluginTools`: the bot's tools, called as its
        plugin."""
        bot: dict[type[Any], object] = {kind: deps.get(kind) for kind in deps.kinds()}
        for plugin in self.plugins.loaded:
            own: dict[type[Any], object] = {}
            if plugin.settings is not None:
                own[type(plugin.settings)] = plugin.settings
            if plugin.services:
                calls = {} if gate is None else {PluginTools: PluginTools(plugin.name, gate)}
                started = await self._start_services(plugin, stack, {**bot, **calls, **own})
                if started is None:
                    continue
                own.update(started)
            if own:
                deps = deps.scoped(plugin.name, own)
        return deps

    async def _start_services(
        self, plugin: LoadedPlugin, stack: AsyncExitStack, values: dict[type[Any], object]
    ) -> dict[type[Any], object] | None:
        """The plugin's services by type, started; None (and the plugin failed) when one
        does not start."""
        services = AsyncExitStack()
        started: dict[type[Any], object] = {}
        try:
            for service in plugin.services:
                async with asyncio.timeout(SERVICE_START_TIMEOUT):
                    made = await services.enter_async_context(
                        service.running({**values, **started})
                    )
                started[service.kind] = made
        except Exception as exc:  # a plugin's service may raise anything
            await _close_quietly(services, plugin.name)
            log.debug("plugin %s: a service failed", plugin.name, exc_info=True)
            reason = f"a service did not start: {described(exc)}"
            if isinstance(exc, TimeoutError):
                reason = f"a service did not start within {SERVICE_START_TIMEOUT:g} s"
            self._set(self.plugins.without(plugin, reason))
            return None
        stack.push_async_callback(_close_quietly, services, plugin.name)
        return started


async def _close_quietly(stack: AsyncExitStack, plugin: str) -> None:
    """Stop a plugin's services; one that fails to stop never stops the others."""
    try:
        await stack.aclose()
    except Exception as exc:
        log.warning("plugin %s: a service failed to stop: %s", plugin, type(exc).__name__)


def listing(config: Config) -> list[PluginStatus]:
    """`groupmate plugins`: the configured plugins (loaded or why not), then the
    installed ones the config does not name."""
    configured = [s for s in configured_plugins(config).statuses if not s.builtin]
    return [*configured, *available(spec.module for spec in config.plugins)]


def command_clashes(statuses: Sequence[PluginStatus]) -> list[str]:
    """Each loaded plugin's command that serve leaves out because its name is taken,
    in words: by a built-in command, a built-in tool's or an earlier plugin's (serve
    keeps the first, as `bot.tool_commands` does: built-ins first, then the config's
    plugins in order). `statuses` as `configured_plugins` gives them."""
    holders = dict.fromkeys((*COMMAND_USAGE, *COMMAND_ALIASES), "the built-in command")
    lines = []
    for status in statuses:
        if status.state != "loaded":
            continue  # a failed plugin's commands answer "unavailable", never run
        for command in status.commands:
            holder = holders.get(command)
            if holder is None or status.builtin:
                holders.setdefault(
                    command, "the built-in" if status.builtin else f"plugin {status.name}'s"
                )
                continue
            lines.append(
                f"plugin {status.name}: command /{command} is taken by {holder} /{command}; "
                f"the bot answers /{command} with that one, not this plugin's. Rename the "
                "plugin's command (@tool_function(command=...))"
            )
    return lines
