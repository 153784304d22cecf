"""The words the tool-calling core shares with its callers, each defined once."""

from __future__ import annotations

from typing import Literal, get_args

from storage.vocabulary import ChatType

# Where a tool is offered: group chats, private chats, or both.
Scope = Literal[ChatType, "both"]
SCOPES: tuple[Scope, ...] = get_args(Scope)

# What a tool does: "read" changes nothing; "write" changes the bot's state (a
# reminder); "external" reaches a server outside the bot (a search, a page, an MCP or
# OpenAPI tool). Writes and external calls are audited.
Effect = Literal["read", "write", "external"]
EFFECTS: tuple[Effect, ...] = get_args(Effect)

# Who may call a tool. "creator_or_admin": any member may call it, but a tool acting on
# one reminder acts only on one its caller created (or any, for an admin).
Who = Literal["members", "admins", "creator_or_admin", "nobody"]
WHO: tuple[Who, ...] = get_args(Who)

# Where a call came from: the model's turn, a slash command, the REST API, an MCP
# client, the dashboard's "run", an accepted offer, or a scheduled action.
CallSource = Literal["model", "command", "rest", "mcp", "dashboard", "offer", "schedule"]
# How the caller proved who they are: the chat platform said so, they presented the
# API token, or they are the operator at the bot's own terminal or MCP stdio.
AuthMethod = Literal["platform", "token", "operator"]
