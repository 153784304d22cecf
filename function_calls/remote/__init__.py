"""Tools that run on other servers: MCP servers and OpenAPI tool servers.

Each server is a tool set (function_calls.toolsets), under its config's allow and deny
lists, scope, admin_only and prefix; the bot's composition holds them, and their tools
are validated and run through the same `ToolInvoker` as the bot's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    from groupmate.function_calls.remote.mcp_client import (
        CONTEXT_META_KEY,
        McpServerTools,
        McpTools,
    )
    from groupmate.function_calls.remote.mcp_config import (
        McpServerConfig,
        McpSettings,
        McpTransport,
    )
    from groupmate.function_calls.remote.naming import exposed_name
    from groupmate.function_calls.remote.openapi import OpenApiTools, OpenApiToolSet
    from groupmate.function_calls.remote.openapi_config import OpenApiServerConfig, OpenApiSettings
    from groupmate.function_calls.toolsets import ToolFilter

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

# Not for type checkers: they read the imports above, and a typo stays an error.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "groupmate.function_calls.remote.mcp_client": (
                "CONTEXT_META_KEY",
                "McpServerTools",
                "McpTools",
            ),
            "groupmate.function_calls.remote.mcp_config": (
                "McpServerConfig",
                "McpSettings",
                "McpTransport",
            ),
            "groupmate.function_calls.remote.naming": ("exposed_name",),
            "groupmate.function_calls.remote.openapi": ("OpenApiTools", "OpenApiToolSet"),
            "groupmate.function_calls.remote.openapi_config": (
                "OpenApiServerConfig",
                "OpenApiSettings",
            ),
            "groupmate.function_calls.toolsets": ("ToolFilter",),
        },
    )
