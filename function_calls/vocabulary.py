"""The words the tool-calling core shares with its callers, each defined once."""

from __future__ import annotations

from typing import Literal, get_args

from groupmate.function_calls.schema import SchemaView

# Effect, CallSource and AuthMethod describe the audit log's rows too: storage's words.
from groupmate.storage.vocabulary import EFFECTS, AuthMethod, CallSource, ChatType, Effect

__all__ = [
    "EFFECTS",
    "SCOPES",
    "WHO",
    "AuthMethod",
    "CallMode",
    "CallSource",
    "Effect",
    "PluginState",
    "Scope",
    "ToolMode",
    "ToolSchema",
    "Who",
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


# How tools reach the model in a request: the API's `tools` ("native"), or described in
# the system prompt and read back from its text ("prompt"); "auto" (the config's) picks.
CallMode = Literal["native", "prompt"]
ToolMode = Literal[CallMode, "auto"]
# Which argument schemas the model is shown: "auto" is compact in prompt mode (small
# local models) and under a small window, full with native tool calling otherwise.
ToolSchema = Literal["auto", SchemaView]
