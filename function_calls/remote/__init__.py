"""Tools that run on other servers: MCP servers and OpenAPI tool servers.

Each server is a tool set (function_calls.toolsets), under its config's allow and deny
lists, scope, admin_only and prefix; the bot's composition holds them, and their tools
are validated and run through the same `ToolInvoker` as the bot's own.
"""

from function_calls.remote.mcp_client import CONTEXT_META_KEY, McpServerTools, McpTools
from function_calls.remote.mcp_config import McpServerConfig, McpSettings, McpTransport
from function_calls.remote.naming import exposed_name
from function_calls.remote.openapi import (
    OpenApiServerConfig,
    OpenApiSettings,
    OpenApiTools,
    OpenApiToolSet,
)
from function_calls.toolsets import ToolFilter

__all__ = [
    "CONTEXT_META_KEY",
    "McpServerConfig",
    "McpServerTools",
    "McpSettings",
    "McpTools",
    "McpTransport",
    "OpenApiServerConfig",
    "OpenApiSettings",
    "OpenApiToolSet",
    "OpenApiTools",
    "ToolFilter",
    "exposed_name",
]
