"""groupmate as an MCP server: its own tools for Claude Desktop or any MCP client.

`groupmate mcp` serves them over stdio; `groupmate serve` also serves them at `/mcp`
(streamable HTTP) behind `adapters.webhook.token`. The chat and the acting user come
from `mcp.serve` in the config, never from the caller: a client can set and list the
reminders of that one chat, as that one user, and nothing else. Calls go through the
bot's `ToolInvoker`, so visibility, the tools policy, both validation stages, the time
limit and the audit log are the same as for the model and the slash commands; the
invoker also keeps the tools of other MCP and OpenAPI servers from being offered here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

from groupmate.bot.app import Bot
from groupmate.bot.config import Config, ConfigError
from groupmate.bot.contexts import Caller, rights
from groupmate.function_calls import (
    AuthMethod,
    FunctionResult,
    InvalidArgumentsError,
    MessageContext,
    ToolHiddenError,
    ToolInvocationError,
    UnknownToolError,
)
from groupmate.function_calls.result import to_compact_json

log = logging.getLogger(__name__)


class McpEndpoint:
    """The bot's tools as an MCP `Server`, acting in the configured chat as its user."""

    def __init__(self, bot: Bot, *, auth: AuthMethod = "token") -> None:
        """`auth`: "token" behind the webhook's token (`/mcp`), "operator" on stdio (the
        operator started the process)."""
        self.check(bot.config)
        serve = bot.config.mcp.serve
        assert serve.chat_id is not None
        self.bot = bot
        admin = rights(
            bot.config.bot.admins,
            serve.user_id,
            serve.chat_type,
            chat_admin=serve.is_admin,
            operator=auth == "operator",
        )
        self._as = Caller(
            chat_id=serve.chat_id,
            sender_id=serve.user_id,
            source="mcp",
            auth=auth,
            chat_type=serve.chat_type,
            sender_name=serve.user_name,
            is_admin=admin.is_admin,
            bot_admin=admin.bot_admin,
        )
        self.server: Server[Any] = Server(
            "groupmate",
            version="1",
            instructions=f"Tools of the groupmate bot, acting in chat {serve.chat_id}.",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    @staticmethod
    def check(config: Config) -> None:
        """Raises ConfigError when the config does not say whose chat a client acts in."""
        if not config.mcp.serve.chat_id:
            raise ConfigError("mcp.serve.chat_id: set the chat that MCP clients act in")

    async def _context(self) -> MessageContext:
        # No "searching…" lines in the chat for a caller that is not in it.
        return await self.bot.caller_context(self._as)

    async def _list_tools(self, _: Any, __: Any) -> types.ListToolsResult:
        ctx = await self._context()
        tools = [
            types.Tool(
                name=tool.name,
                description=tool.model_description(),
                input_schema=tool.parameters,
            )
            for tool in self.bot.invoker.offered(ctx)
        ]
        return types.ListToolsResult(tools=tools)

    async def _call_tool(self, _: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        ctx = await self._context()
        try:
            result = await self.bot.invoker.run(ctx, params.name, params.arguments or {})
        except InvalidArgumentsError as exc:
            return _error(f"invalid arguments: {exc}")
        except (UnknownToolError, ToolHiddenError):
            # The same answer for both: a client learns nothing of tools it can't use.
            return _error(f"no tool named {params.name!r}")
        except ToolInvocationError as exc:  # internal failures carry a generic message
            return _error(str(exc))
        if result.failure is not None:
            return _error(_as_text(result))
        return types.CallToolResult(content=[_text(_as_text(result))])

    async def serve_stdio(self) -> None:
        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())

    @contextlib.asynccontextmanager
    async def http_app(self) -> AsyncIterator[StreamableHTTPASGIApp]:
        """The ASGI app for `/mcp`, for as long as the context is open.

        Stateless, JSON answers: each request stands alone, so any client (or a load
        balancer in front of several bots) works without session affinity.
        """
        manager = StreamableHTTPSessionManager(app=self.server, stateless=True, json_response=True)
        async with manager.run():
            yield StreamableHTTPASGIApp(manager)


def _as_text(result: FunctionResult) -> str:
    if result.reply is not None:
        return result.reply
    return result.data if isinstance(result.data, str) else to_compact_json(result.data)


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[_text(text)], is_error=True)
