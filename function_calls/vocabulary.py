"""The words the tool-calling core shares with its callers, each defined once."""

from __future__ import annotations

from typing import Literal, get_args

from groupmate.function_calls.schema import SchemaView
from groupmate.storage.vocabulary import ChatType

__all__ = [
    "EFFECTS",
    "SCOPES",
    "WHO",
    "AuthMethod",
    "CallMode",
    "CallSource",
    "Effect",
    "InvocationOutcome",
    "PluginState",
    "Scope",
    "ServerState",
    "ToolMode",
    "ToolSchema",
    "Who",
]

# What a tool does: "read" changes nothing; "write" changes the bot's state (a
# reminder); "external" reaches a server outside the bot (a search, a page, an MCP or
# OpenAPI tool). Writes and external calls are audited.
Effect = Literal["read", "write", "external"]
EFFECTS: tuple[Effect, ...] = get_args(Effect)

# Where a call came from: the model's turn, a slash command (or the grammar's fast
# path), the REST API, an MCP client, the dashboard's admin API, the playground acting
# as one of its people, an accepted offer, a scheduled action, a plugin's own
# background work (function_calls.plugin_calls), or a press of a reminder's button (or
# the reaction that stands for one: bot.press_handling).
CallSource = Literal[
    "model",
    "command",
    "rest",
    "mcp",
    "dashboard",
    "playground",
    "offer",
    "schedule",
    "plugin",
    "button",
    "reaction",
]
# How the caller proved who they are: the chat platform said so, they presented the
# API token, nothing (the API has no token configured: whoever reached the port), they
# are the operator at the bot's own terminal or MCP stdio, or the config loaded them (a
# plugin acting as itself).
AuthMethod = Literal["platform", "token", "none", "operator", "config"]

# What became of one call. "ok": it ran. "refused": it ran and declined (no such
# reminder, not yours to change). "malformed": the model wrote a call that could not be
# read at all. The rest are the invoker's errors (function_calls.errors).
InvocationOutcome = Literal[
    "ok",
    "refused",
    "invalid",
    "unknown",
    "hidden",
    "limited",
    "timeout",
    "failed",
    "malformed",
]


# Where a tool is offered: group chats, private chats, or both.
Scope = Literal[ChatType, "both"]
SCOPES: tuple[Scope, ...] = get_args(Scope)


# Who may call a tool. "creator_or_admin": any member may call it, but a tool acting on
# one reminder acts only on one its caller created (or any, for an admin).
Who = Literal["members", "admins", "creator_or_admin", "nobody"]
WHO: tuple[Who, ...] = get_args(Who)


# What became of a plugin: "loaded" (its tools are offered), "failed" (import, settings,
# a name clash or a service that did not start: the bot runs without it), "disabled"
# (the config names it with `disabled: true`), "available" (installed with an entry
# point, not named in the config: installed is not enabled).
PluginState = Literal["loaded", "failed", "disabled", "available"]
# A remote tool server's connection, as /healthz, the dashboard and the metrics say it.
ServerState = Literal["starting", "up", "down", "stopped"]


# How tools reach the model in a request: the API's `tools` ("native"), or described in
# the system prompt and read back from its text ("prompt"); "auto" (the config's) picks.
CallMode = Literal["native", "prompt"]
ToolMode = Literal[CallMode, "auto"]
# Which argument schemas the model is shown: "auto" is compact in prompt mode (small
# local models) and under a small window, full with native tool calling otherwise.
ToolSchema = Literal["auto", SchemaView]
