"""How a plugin's background work (a service's loop, a webhook it listens for) changes
the bot's state: by calling the bot's tools through its invoker, as the plugin itself.

A plugin's service is given read-only views of the bot's stores (see
function_calls.provided): it never holds a writer. What it may change, it changes with
`PluginTools.call`, which goes through the one gate every caller goes through: the tool
must be offered to the plugin in that chat, the tools policy applies, and the audit log
has the call with `source: plugin`, `auth: config` and the plugin as the sender.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from groupmate.function_calls.result import FunctionResult


class ToolGate(Protocol):
    """The bot's side of `PluginTools` (`bot.plugin_calls.PluginGate` is one): one
    call of a tool in a chat, made as `plugin`, through the bot's invoker."""

    async def call(
        self, plugin: str, chat_id: str, tool: str, arguments: Mapping[str, Any]
    ) -> FunctionResult: ...


@dataclass(frozen=True, slots=True)
class PluginTools:
    """What a plugin's service asks for to change state: the bot's tools, called as the
    plugin. Raises the invoker's ToolInvocationError (unknown or hidden tool, invalid
    arguments, refused by the policy, failed)."""

    plugin: str
    gate: ToolGate

    async def call(
        self, chat_id: str, tool: str, arguments: Mapping[str, Any] | None = None
    ) -> FunctionResult:
        """Run `tool` with `arguments` in `chat_id`, as this plugin."""
        return await self.gate.call(self.plugin, chat_id, tool, dict(arguments or {}))
