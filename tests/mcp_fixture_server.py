"""An MCP server written with the SDK, for the client tests: over stdio, or over
streamable HTTP with a bearer token (`python -m tests.mcp_fixture_server http PORT TOKEN`).

Its tools cover what the client must handle: a plain call, a tool-side error (isError),
a hung call, an unusable schema, a tool list that changes, the environment the server
was given, and the context it is passed (or not).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import anyio
import mcp_types as types
import uvicorn
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from starlette.types import ASGIApp, Receive, Scope, Send

_NUMBER_PAIR = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
_NOTHING: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    types.Tool(name="add", description="Add two whole numbers.", input_schema=_NUMBER_PAIR),
    types.Tool(
        name="whoami", description="Who is asking, as the client says.", input_schema=_NOTHING
    ),
    types.Tool(
        name="env",
        description="The value of an environment variable of this server.",
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    ),
    types.Tool(
        name="sleep",
        description="Wait the given number of seconds.",
        input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
    ),
    types.Tool(name="jam", description="Always fails, as a tool.", input_schema=_NOTHING),
    types.Tool(
        name="broken",
        description="Its schema is not a valid JSON Schema.",
        input_schema={"type": "object", "properties": {"x": {"type": "no-such-type"}}},
    ),
    types.Tool(name="grow", description="Adds the tool 'extra'.", input_schema=_NOTHING),
    types.Tool(name="pid", description="This server's process id.", input_schema=_NOTHING),
    types.Tool(
        name="picture",
        description="Returns an image and some text.",
        input_schema=_NOTHING,
    ),
]
EXTRA = types.Tool(name="extra", description="Appears after 'grow'.", input_schema=_NOTHING)
state = {"grown": False}


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[*TOOLS, EXTRA] if state["grown"] else TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    match params.name:
        case "add":
            return _text(str(int(args["a"]) + int(args["b"])))
        case "whoami":
            meta = dict(ctx.meta or {})
            return _text(json.dumps(meta.get("io.groupmate/context", "no context given")))
        case "env":
            return _text(os.environ.get(str(args["name"]), "<unset>"))
        case "sleep":
            await anyio.sleep(float(args.get("seconds", 3600)))
            return _text("slept")
        case "jam":
            return _text("the widget is jammed", error=True)
        case "grow":
            state["grown"] = True
            await ctx.session.send_tool_list_changed()
            return _text("grown")
        case "picture":
            image = types.ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png")
            return types.CallToolResult(
                content=[types.TextContent(type="text", text="a red square"), image]
            )
        case "pid":
            return _text(str(os.getpid()))
        case "extra":
            return _text("extra ran")
    return _text(f"unknown tool {params.name}", error=True)


server = Server("fixture", on_list_tools=list_tools, on_call_tool=call_tool)
OPTIONS = server.create_initialization_options(NotificationOptions(tools_changed=True))


async def serve_stdio() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, OPTIONS)


class BearerOnly:
    """Refuses requests without the token, as a real deployment's proxy would."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {self.token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"no"})
                return
        await self.app(scope, receive, send)


def serve_http(port: int, token: str) -> None:
    app = BearerOnly(server.streamable_http_app(), token)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        serve_http(int(sys.argv[2]), sys.argv[3])
    else:
        asyncio.run(serve_stdio())
