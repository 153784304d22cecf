"""Tools that run on other servers: MCP servers and OpenAPI tool servers.

Each server becomes a `ToolSource` attached to the bot's registry; its tools are
validated and run through the same `ToolInvoker` as the bot's own.
"""

from function_calls.remote.filters import ToolFilter
from function_calls.remote.mcp_client import CONTEXT_META_KEY, McpServerTools, McpTools
from function_calls.remote.mcp_config import McpServerConfig, McpSettings, McpTransport
from function_calls.remote.naming import exposed_name
from function_calls.remote.openapi import (
    OpenApiServerConfig,
    OpenApiSettings,
    OpenApiTools,
    OpenApiToolSet,
)

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
