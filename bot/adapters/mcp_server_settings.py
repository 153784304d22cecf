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
    """The chat MCP clients act in, e.g. `tg:-1001234567890`: they list and set its
    reminders. Unset: `groupmate mcp` refuses to start and `/mcp` is not served."""
    chat_type: ChatType = "group"
    """The kind of that chat; in a `private` chat the user owns it and is its admin."""
    user_id: str = "mcp"
    """The user id a client's actions are recorded under."""
    user_name: str = "MCP client"
    """The name that user is shown with."""
    is_admin: bool = False
    """Whether that user is an admin of the chat."""
