"""The bot's plugins while it runs: which loaded, their services started and stopped
with the bot, and the `Deps` their handlers (and the built-ins') are given."""

from __future__ import annotations

import asyncio
import logging
from contextlib import AsyncExitStack
from typing import Any

from bot.config import Config
from function_calls.deps import Deps
from function_calls.handlers import builtin_plugins, builtin_position
from function_calls.plugins import PluginSet, PluginStatus, available, load_plugins
from function_calls.registry import ToolRegistry

log = logging.getLogger(__name__)
# A service that has not started by then fails its plugin: startup never hangs on one.
SERVICE_START_TIMEOUT = 30.0


def configured_plugins(
    config: Config, *, builtins: bool = True, taken: set[str] | None = None
) -> PluginSet:
    """The built-in families the config leaves on (unless `builtins` is False: a bot
    given its own tools), then the config's plugins, each loaded on its own."""
    base = builtin_plugins(config.builtins) if builtins else PluginSet((), ())
    names = {name: "a built-in tool" for name in base.tool_names()}
    names.update(dict.fromkeys(taken or (), "one of the bot's own tools"))
    added = load_plugins(config.plugins, taken=names)
    return PluginSet.combined(base, added)


class PluginRuntime:
    """See the module's docstring. `statuses` are what /v1/status, /healthz and the
    dashboard show; a plugin whose service fails to start is failed from then on."""

    def __init__(self, plugins: PluginSet) -> None:
        self.plugins = plugins
        self._logged = False

    def registry(self, own: ToolRegistry | None = None) -> ToolRegistry:
        """The tools of the loaded plugins: after `own` tools (a bot given its own),
        else the built-ins first, in the model's order."""
        tools = self.plugins.registry(builtin_position)
        return tools if own is None else own.merged(tools)

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

    async def start(self, stack: AsyncExitStack, deps: Deps) -> Deps:
        """Start every loaded plugin's services (in the config's order, so a service may
        use an earlier plugin's); returns `deps` with their settings and services. A
        plugin whose service fails is failed, and what it had started is stopped."""
        values: dict[type[Any], object] = {kind: deps.get(kind) for kind in deps.kinds()}
        values.update(self.plugins.settings_values())
        for plugin in self.plugins.loaded:
            if not plugin.services:
                continue
            own = AsyncExitStack()
            started: dict[type[Any], object] = {}
            try:
                for service in plugin.services:
                    async with asyncio.timeout(SERVICE_START_TIMEOUT):
                        made = await own.enter_async_context(service.running({**values, **started}))
                    started[service.kind] = made
            except Exception as exc:  # a plugin's service may raise anything
                await _close_quietly(own, plugin.name)
                reason = f"a service did not start: {type(exc).__name__}: {exc}"
                if isinstance(exc, TimeoutError):
                    reason = f"a service did not start within {SERVICE_START_TIMEOUT:g} s"
                log.debug("plugin %s: service failed", plugin.name, exc_info=True)
                self.plugins = self.plugins.without(plugin.name, reason)
                continue
            values.update(started)
            stack.push_async_callback(_close_quietly, own, plugin.name)
        return deps.merged(values)


async def _close_quietly(stack: AsyncExitStack, plugin: str) -> None:
    """Stop a plugin's services; one that fails to stop never stops the others."""
    try:
        await stack.aclose()
    except Exception as exc:
        log.warning("plugin %s: a service failed to stop: %s", plugin, type(exc).__name__)


def listing(config: Config) -> list[PluginStatus]:
    """`groupmate plugins`: the configured plugins (loaded or why not), then the
    installed ones the config does not name."""
    builtin = dict.fromkeys(builtin_plugins(config.builtins).tool_names(), "a built-in tool")
    loaded = load_plugins(config.plugins, taken=builtin)
    return [*loaded.statuses, *available(spec.module for spec in config.plugins)]
