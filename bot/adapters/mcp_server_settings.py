"""The `mcp.serve` section: who a caller of groupmate's own MCP server acts as
(`bot.adapters.mcp_server`)."""

from __future__ import annotations

from groupmate.function_calls.sections import OptionalText, Section
from groupmate.storage.vocabulary import ChatType


class McpServeSettings(Section):
    """`groupmate mcp` (stdio) and `/mcp` on `groupmate serve`: who the caller acts as.

    The chat and the acting user come from here, never from the caller's arguments.
    """

    chat_id: OptionalText = None
    chat_type: ChatType = "group"
    user_id: str = "mcp"
    user_name: str = "MCP client"
    is_admin: bool = False
