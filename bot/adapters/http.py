"""The HTTP adapter: the integration API for any platform, and the admin API."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from groupmate.bot.adapters.api_models import ButtonOut, MemberIO, buttons_out
from groupmate.bot.adapters.http_admin import router as admin_router
from groupmate.bot.adapters.http_calendar import router as calendar_router
from groupmate.bot.adapters.http_calls import STORAGE_DOWN_ERROR, RunningBot
from groupmate.bot.adapters.http_metrics import METRICS_PATH, metrics_routes
from groupmate.bot.adapters.http_reminders import router as reminder_router
from groupmate.bot.adapters.http_search import router as search_router
from groupmate.bot.adapters.http_tools import router as tool_router
from groupmate.bot.adapters.http_web import page_routes
from groupmate.bot.adapters.http_web import router as web_router
from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage
from groupmate.bot.waiting import by_platform
from groupmate.bot.web_events import WEB_PREFIX
from groupmate.storage import (
    Member,
    StorageUnavailableError,
)
from groupmate.storage.vocabulary import ChatType

log = logging.getLogger(__name__)
# Paths that need the bearer token when one is set: the API, and the MCP endpoint.
# Paths that need the bearer token when one is set: the API, the MCP endpoint, metrics.
_PROTECTED = ("/v1", "/mcp", METRICS_PATH)
# A refused body is read to its end, up to this much and this long, before the 413.
_DRAIN_BYTES = 64 * 1024 * 1024
_DRAIN_SECONDS = 30.0


class MessageIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    chat_id: str = Field(min_length=1, max_length=255)
    chat_type: ChatType
    sender_id: str = Field(min_length=1, max_length=255)
    sender_name: str = Field("", max_length=255)
    text: str = Field(max_length=16_000)
    mentions_bot: bool = False
    message_id: str | None = Field(None, max_length=255)
    timestamp: datetime | None = None
    reply_to_bot: bool = False
    sender_is_admin: bool = Field(
        False,
        description="The platform says the sender administers this chat. Trusted only "
        "when adapters.webhook.token is set (so the caller presented it), or in the "
        "playground's web: chats; otherwise ignored, and only bot.admins are admins.",
    )
    # Chat members the message mentions, as the platform resolved them.
    mentions: list[MemberIO] = Field(default_factory=list, max_length=50)
    # The platform id of the message this replies to (e.g. a reminder, to snooze it).
    reply_to_message_id: str | None = Field(None, max_length=255)


class ReplyOut(BaseModel):
    chat_id: str
    text: str
    mentions: list[str]
    # The reminder this reply confirms, and its buttons (in the playground's web: chats,
    # pressed through POST /v1/chats/{chat_id}/presses).
    reminder_id: str | None = None
    buttons: list[list[ButtonOut]] = Field(default_factory=list)


class RepliesOut(BaseModel):
    replies: list[ReplyOut]


def api_token(bot: Bot) -> str:
    """`adapters.webhook.token`; "" when none is set (then the API is open)."""
    webhook = bot.config.adapters.webhook
    return webhook.token.get_secret_value() if webhook.token else ""


router = APIRouter()


@router.get("/healthz")
async def healthz(bot: RunningBot) -> dict[str, Any]:
    """Liveness, whether the database answers ("ok" or "unavailable": the bot goes on
    serving what needs none, and recovers by itself when it is back), the language
    model's state (off, warming, ready, warm-up failed: see `LLMStatus`), each chat
    platform's connection status, each plugin's state (a failed plugin leaves
    the bot serving: "ok" all the same; no secrets, no reasons), and per platform
    how many due reminders wait because no running process delivers there."""
    adapters = {a.name: a.status() for a in bot.adapters}
    # The state only: /healthz needs no token, and why a plugin failed is for the
    # operator (/v1/status, the dashboard, the log).
    plugins = {p.name: p.state for p in bot.plugins if not p.builtin}
    up = bot.database is not None and await bot.database.reachable()
    waiting = (
        by_platform(await bot.reminders.deliveries_admin.waiting()) if bot.reminders and up else []
    )
    health: dict[str, Any] = {
        "status": "ok",
        "database": "ok" if up else "unavailable",
        "llm": bot.llm_status,
        "adapters": adapters,
        "plugins": plugins,
        "reminders_waiting": {found.platform: found.reminders for found in waiting},
    }
    if bot.llm_problem is not None:
        # Sizes and setting names only: what the operator must change.
        health["llm"] = "misconfigured"
        health["llm_problem"] = bot.llm_problem
    return health


@router.post("/v1/messages")
async def post_message(body: MessageIn, bot: RunningBot) -> RepliesOut:
    fields = body.model_dump(exclude={"mentions"})
    mentions = tuple(Member(m.user_id, m.name) for m in body.mentions)
    # With a token set, the gate let only callers that presented it this far. Without
    # one, anyone who reaches the port could claim admin rights in a platform's chat.
    # The playground's web: chats are the exception: their people are simulated, their
    # admin switch is the way to try /tz, and that caller already administers every
    # chat through the rest of /v1.
    trusted = bool(api_token(bot)) or body.chat_id.startswith(WEB_PREFIX)
    fields["sender_is_admin"] = body.sender_is_admin and trusted
    replies = await bot.handle(IncomingMessage(**fields, mentions=mentions))
    out = [
        ReplyOut(
            chat_id=r.chat_id,
            text=r.text,
            mentions=list(r.mentions),
            reminder_id=r.reminder_id,
            buttons=buttons_out(r.buttons),
        )
        for r in replies
    ]
    return RepliesOut(replies=out)


class _Gate:
    """In front of the app: the bearer token for /v1 (before any body is read), then 413
    for bodies over the limit, whether or not Content-Length declares them."""

    def __init__(self, app: ASGIApp, *, token: str, max_bytes: int) -> None:
        self.app = app
        self.token = token.encode()
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        if self.token and str(scope.get("path", "")).startswith(_PROTECTED):
            scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(given, self.token):
                await _error(scope, receive, send, 401, "missing or wrong bearer token")
                return
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            # A client that asked first (Expect: 100-continue) has sent nothing yet:
            # reading would tell it to send the body it is refused; it gets the 413 now.
            if headers.get(b"expect", b"").lower() != b"100-continue":
                await _drain(receive)
            await _error(scope, receive, send, 413, f"body larger than {self.max_bytes} bytes")
            return
        await self._limited(scope, receive, send)

    async def _limited(self, scope: Scope, receive: Receive, send: Send) -> None:
        seen = 0
        too_large = False
        started = False
        more = False  # the client has more of the body to send

        async def counting_receive() -> Message:
            nonlocal seen, too_large, more
            message = await receive()
            seen += len(message.get("body", b""))
            more = bool(message.get("more_body", False))
            if seen > self.max_bytes:
                too_large = True
                return {"type": "http.disconnect"}  # the app stops reading
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if too_large:
                return  # whatever the app answers to the cut body, the answer is 413
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not too_large:
                raise
        if too_large and not started:
            if more:
                await _drain(receive)
            await _error(scope, receive, send, 413, f"body larger than {self.max_bytes} bytes")


async def _drain(receive: Receive) -> None:
    """Read and drop the rest of a refused body (within bounds) before answering. A
    client that sends its whole body before it reads (most do) would otherwise lose the
    answer: a connection closed with bytes unread makes the kernel send a reset, which
    throws away what the client had not yet read. Past the bounds the connection is cut
    all the same."""
    left = _DRAIN_BYTES

    async def drop() -> None:
        nonlocal left
        while left > 0:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client is gone
            left -= len(message.get("body", b""))
            if not message.get("more_body", False):
                return

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(drop(), _DRAIN_SECONDS)


async def _error(scope: Scope, receive: Receive, send: Send, status: int, text: str) -> None:
    await JSONResponse({"error": text}, status_code=status)(scope, receive, send)


class _McpRoute:
    """`/mcp`: the bot's tools over streamable HTTP, while the server runs (its lifespan).

    Served only with `mcp.serve.chat_id` (whose chat the caller acts in) and a bearer
    token (which the gate checks): without a token, anyone who reached the port could
    act in that chat.
    """

    def __init__(self, bot: Bot, token: str) -> None:
        self.bot = bot
        self.enabled = bool(token and bot.config.mcp.serve.chat_id)
        if bot.config.mcp.serve.chat_id and not token:
            log.warning("/mcp is not served: it needs adapters.webhook.token")
        self._handler: ASGIApp | None = None

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Any) -> AsyncIterator[None]:
        if not self.enabled:
            yield
            return
        # The MCP SDK takes a third of a second to import: only where /mcp is served.
        from groupmate.bot.adapters.mcp_server import McpEndpoint

        async with McpEndpoint(self.bot).http_app() as handler:
            self._handler = handler
            try:
                yield
            finally:
                self._handler = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._handler is None:
            text = "MCP is not served here" if not self.enabled else "MCP is not running"
            await _error(scope, receive, send, 404 if not self.enabled else 503, text)
            return
        await self._handler(scope, receive, send)


def create_app(bot: Bot) -> ASGIApp:
    """The ASGI app for a running (entered) bot, with the body size limit in front."""
    webhook = bot.config.adapters.webhook
    token = api_token(bot)
    mcp = _McpRoute(bot, token)
    app = FastAPI(
        title="groupmate", version="1", docs_url=None, redoc_url=None, lifespan=mcp.lifespan
    )

    app.state.bot = bot

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        issues = [
            {"path": ".".join(str(p) for p in e["loc"][1:]) or "(body)", "problem": e["msg"]}
            for e in exc.errors()
        ]
        return JSONResponse({"error": "invalid request", "issues": issues}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

    @app.exception_handler(StorageUnavailableError)
    async def _storage_down(request: Request, exc: StorageUnavailableError) -> JSONResponse:
        return JSONResponse({"error": STORAGE_DOWN_ERROR}, status_code=503)

    app.include_router(router)
    app.include_router(reminder_router)
    app.include_router(web_router)
    app.include_router(search_router)
    app.include_router(admin_router)
    app.include_router(tool_router)
    app.include_router(calendar_router)
    app.router.routes.extend(page_routes())
    app.router.routes.extend(metrics_routes(bot))
    app.router.routes.append(Route("/mcp", endpoint=mcp, include_in_schema=False))
    for adapter in bot.adapters:
        app.router.routes.extend(adapter.routes())  # webhooks and WebSockets of platforms

    return _Gate(app, token=token, max_bytes=webhook.max_body_bytes)
