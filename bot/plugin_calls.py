"""`PluginGate`: the bot's `ToolGate`, through which a plugin's background work calls
the bot's tools as the plugin itself (see function_calls.plugin_calls)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from groupmate.bot.contexts import Caller, ContextFactory
from groupmate.function_calls import ToolInvoker
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import ReminderReader

PLUGIN_SENDER = "plugin:{name}"  # the audit log's sender of a plugin's own calls


class PluginGate:
    """Made before the plugins' services start (they are given it), attached once the
    invoker and the contexts exist: a call before then is refused."""

    def __init__(self, reminders: ReminderReader) -> None:
        self._reminders = reminders
        self._contexts: ContextFactory | None = None
        self._invoker: ToolInvoker | None = None

    def attach(self, contexts: ContextFactory, invoker: ToolInvoker) -> None:
        self._contexts, self._invoker = contexts, invoker

    async def call(
        self, plugin: str, chat_id: str, tool: str, arguments: Mapping[str, Any]
    ) -> FunctionResult:
        if self._contexts is None or self._invoker is None:
            raise RuntimeError("the bot has not started yet: call tools once it runs")
        ctx = await self._contexts.for_caller(
            Caller(
                chat_id=chat_id,
                sender_id=PLUGIN_SENDER.format(name=plugin),
                sender_name=plugin,
                source="plugin",
                auth="config",  # the operator's config loaded the plugin
                chat_type=await self._reminders.chat_type_of(chat_id),
            )
        )
        return await self._invoker.run(ctx, tool, arguments)
