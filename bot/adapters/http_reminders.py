"""The REST routes for one chat's reminders, their history and the chat's settings.

Each route validates its body through the bot's `ToolInvoker`, as the matching tool's call
(visibility, then both stages: the exact JSON Schema the model is shown, then the Pydantic
model), and runs the same domain function as the tool under the tool's time limit, reading
the typed reminder it returns. So the API, the chat commands and the model can never
disagree on what a valid reminder is. The refusals come back as status codes instead of
chat wording. Callers of these routes presented the API token: they act as an admin.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse

from bot.adapters.api_models import (
    HistoryOut,
    MemberIO,
    ReminderOut,
    SettingsIn,
    SettingsOut,
    SnoozeOut,
    reminder_out,
)
from function_calls.context import ChatType, MessageContext
from function_calls.errors import ToolInvocationError
from function_calls.handlers.audience import AudienceRefused, rule_changes
from function_calls.handlers.reminder_changes import (
    DEFAULT_SNOOZE_MINUTES,
    change_reminder,
    requester,
)
from function_calls.handlers.reminders import add_reminder
from function_calls.invoker import ToolCall
from function_calls.services import Services
from function_calls.validation import InvalidArgumentsError
from storage import (
    InvalidTimezoneError,
    Member,
    ReminderChangedError,
    ReminderNotFoundError,
    ReminderPermissionError,
    ReminderService,
    ReminderStateError,
    ReminderView,
    StorageError,
    StorageUnavailableError,
    check_timezone,
)

if TYPE_CHECKING:
    from bot.app import Bot

API_USER = "api"  # who the REST caller is, in permission checks and the history


def _refused(exc: Exception) -> JSONResponse:
    """A domain refusal as a status code; the message is the one the chat would get."""
    if isinstance(exc, StorageUnavailableError):
        raise exc  # the app answers 503, nothing changed
    status = 422
    if isinstance(exc, ReminderNotFoundError):
        status = 404
    elif isinstance(exc, ReminderPermissionError):
        status = 403
    elif isinstance(exc, ReminderChangedError | ReminderStateError):
        status = 409
    return JSONResponse({"error": str(exc)}, status_code=status)


def _invalid(exc: InvalidArgumentsError) -> JSONResponse:
    issues = [_issue(i.path, i.problem, i.received) for i in exc.issues]
    return JSONResponse({"error": "invalid request", "issues": issues}, status_code=422)


def _issue(path: str, problem: str, received: str) -> dict[str, str]:
    # Lone surrogates cannot be encoded as JSON; show them as replacement characters.
    safe = received.encode("utf-8", "replace").decode("utf-8")
    return {"path": path, "problem": problem, "received": safe}


async def _json_object(request: Request) -> dict[str, Any]:
    try:
        raw = await request.json()
    except ValueError:
        raise HTTPException(400, "the body is not JSON") from None
    if not isinstance(raw, dict):
        raise HTTPException(422, "the body must be a JSON object")
    return raw


def _members(raw: dict[str, Any]) -> tuple[Member, ...]:
    """The `mentions` a caller vouches for, so that `who: ["@bob"]` can name Bob."""
    given = raw.pop("mentions", None) or []
    if not isinstance(given, list) or len(given) > 50:
        raise HTTPException(422, "mentions must be a list of at most 50 {user_id, name}")
    try:
        members = [MemberIO.model_validate(item) for item in given]
    except ValueError:
        raise HTTPException(422, "each mention needs a user_id and a name") from None
    return tuple(Member(m.user_id, m.name) for m in members)


def _service(request: Request) -> ReminderService:
    service: ReminderService | None = request.app.state.bot.reminders
    if service is None:
        raise HTTPException(503, "the bot is not running")
    return service


Reminders = Annotated[ReminderService, Depends(_service)]

_EXTRA_CREATE = {
    "created_by": {"type": "string", "minLength": 1, "description": "the creator's user id"},
    "created_by_name": {"type": "string"},
    "chat_type": {"enum": ["group", "private"], "default": "group"},
    "mentions": {
        "type": "array",
        "items": MemberIO.model_json_schema(),
        "description": "members the platform resolved, so that who can name them",
    },
}


def _body(schema: dict[str, Any], extra: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An OpenAPI request body: a tool's exact argument schema plus the route's fields."""
    merged = {
        **schema,
        "properties": {**schema.get("properties", {}), **extra},
        "required": [*schema.get("required", []), *required],
    }
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": merged}}}}


def reminder_routes(bot: Bot) -> APIRouter:
    """The routes under /v1/chats/{chat_id}; the request bodies are the tools' schemas."""
    routes = APIRouter(prefix="/v1/chats/{chat_id}")
    registry = bot.registry

    async def context(
        service: ReminderService,
        chat_id: str,
        *,
        sender_id: str = API_USER,
        sender_name: str = "",
        chat_type: ChatType = "group",
        mentioned: tuple[Member, ...] = (),
    ) -> MessageContext:
        return MessageContext(
            chat_id=chat_id,
            chat_type=chat_type,
            sender_id=sender_id,
            sender_name=sender_name,
            is_admin=True,
            timezone=await service.timezone_of(chat_id),
            services=Services(reminders=service, reminder_rules=bot.config.reminders.rules()),
            clock=bot.clock,
            mentioned=mentioned,
        )

    def schema_of(tool_name: str, drop: tuple[str, ...] = ()) -> dict[str, Any]:
        schema = dict(registry.get(tool_name).parameters)
        schema["properties"] = {
            k: v for k, v in schema.get("properties", {}).items() if k not in drop
        }
        schema["required"] = [k for k in schema.get("required", []) if k not in drop]
        return schema

    async def validated_then(
        tool_name: str,
        raw: dict[str, Any],
        ctx: MessageContext,
        action: Callable[[MessageContext, Any], Awaitable[ReminderView]],
    ) -> Any:
        """The tool's visibility and both validation stages (through the bot's invoker,
        as for the model and the commands), then its domain function, under the same
        time limit: the reminder, or the refusal as a status code."""
        try:
            call = bot.invoker.validate_tool_call(ctx, ToolCall(tool_name, raw))
        except InvalidArgumentsError as exc:
            return _invalid(exc)
        except ToolInvocationError as exc:  # not offered in this chat
            return JSONResponse({"error": str(exc)}, status_code=403)
        try:
            async with asyncio.timeout(bot.invoker.timeout_of(call.tool)):
                return reminder_out(await action(ctx, call.arguments))
        except (StorageError, AudienceRefused, ValueError) as exc:
            return _refused(exc)
        except TimeoutError:
            return JSONResponse({"error": "timed out; nothing may have changed"}, status_code=504)

    @routes.get("/reminders")
    async def list_reminders(chat_id: str, service: Reminders) -> list[ReminderOut]:
        found, _ = await service.list_for_chat(chat_id, limit=1000)
        return [reminder_out(reminder) for reminder in found]

    @routes.post(
        "/reminders",
        status_code=201,
        response_model=ReminderOut,
        openapi_extra=_body(schema_of("reminder_set"), _EXTRA_CREATE, ["created_by"]),
    )
    async def create_reminder(chat_id: str, request: Request, service: Reminders) -> Any:
        raw = await _json_object(request)
        created_by = raw.pop("created_by", None)
        created_by_name = raw.pop("created_by_name", "")
        chat_type = raw.pop("chat_type", "group")
        if not isinstance(created_by, str) or not created_by:
            issue = {"path": "created_by", "problem": "required field is missing"}
            return JSONResponse({"error": "invalid request", "issues": [issue]}, status_code=422)
        if chat_type not in ("group", "private"):
            issue = {"path": "chat_type", "problem": "must be 'group' or 'private'"}
            return JSONResponse({"error": "invalid request", "issues": [issue]}, status_code=422)
        ctx = await context(
            service,
            chat_id,
            sender_id=created_by,
            sender_name=str(created_by_name),
            chat_type="private" if chat_type == "private" else "group",
            mentioned=_members(raw),
        )
        return await validated_then("reminder_set", raw, ctx, add_reminder)

    @routes.get("/reminders/{reminder_id}", response_model=ReminderOut)
    async def get_reminder(chat_id: str, reminder_id: str, service: Reminders) -> Any:
        ctx = await context(service, chat_id)
        try:
            return reminder_out(await service.find(chat_id, reminder_id, requester(ctx)))
        except StorageError as exc:
            return _refused(exc)

    extra_update = {"mentions": _EXTRA_CREATE["mentions"]}

    @routes.patch(
        "/reminders/{reminder_id}",
        response_model=ReminderOut,
        openapi_extra=_body(schema_of("reminder_update", ("reminder_id",)), extra_update, []),
    )
    async def update_reminder(
        chat_id: str, reminder_id: str, request: Request, service: Reminders
    ) -> Any:
        raw = await _json_object(request)
        ctx = await context(service, chat_id, mentioned=_members(raw))
        if "reminder_id" in raw:
            raise HTTPException(422, "the reminder is named by the path, not the body")
        raw = {**raw, "reminder_id": reminder_id}
        return await validated_then("reminder_update", raw, ctx, change_reminder)

    @routes.delete("/reminders/{reminder_id}", status_code=204)
    async def delete_reminder(chat_id: str, reminder_id: str, service: Reminders) -> Response:
        try:
            await service.delete(
                chat_id, reminder_id, requester_id=API_USER, requester_is_admin=True, private=False
            )
        except StorageError as exc:
            return _refused(exc)
        return Response(status_code=204)

    @routes.post("/reminders/{reminder_id}/snooze", response_model=SnoozeOut)
    async def snooze_reminder(
        chat_id: str,
        reminder_id: str,
        service: Reminders,
        minutes: Annotated[int, Query(ge=1, le=7 * 24 * 60)] = DEFAULT_SNOOZE_MINUTES,
    ) -> Any:
        ctx = await context(service, chat_id)
        try:
            snooze_args = {"reminder_id": reminder_id, "minutes": minutes}
            bot.invoker.validate_tool_call(ctx, ToolCall("reminder_snooze", snooze_args))
        except InvalidArgumentsError as exc:
            return _invalid(exc)
        except ToolInvocationError as exc:
            return JSONResponse({"error": str(exc)}, status_code=403)
        until = ctx.clock() + timedelta(minutes=minutes)
        try:
            root, snooze = await service.snooze(
                chat_id, requester(ctx), until, reference=reminder_id
            )
        except StorageError as exc:
            return _refused(exc)
        return SnoozeOut(reminder=reminder_out(root), snooze=reminder_out(snooze))

    def pause_route(paused: bool) -> Callable[..., Any]:
        async def route(chat_id: str, reminder_id: str, service: Reminders) -> Any:
            ctx = await context(service, chat_id)
            try:
                return reminder_out(
                    await service.set_paused(chat_id, reminder_id, requester(ctx), paused=paused)
                )
            except StorageError as exc:
                return _refused(exc)

        return route

    routes.post("/reminders/{reminder_id}/pause", response_model=ReminderOut)(pause_route(True))
    routes.post("/reminders/{reminder_id}/resume", response_model=ReminderOut)(pause_route(False))

    @routes.get("/history")
    async def history(
        chat_id: str, service: Reminders, limit: Annotated[int, Query(ge=1, le=200)] = 50
    ) -> list[HistoryOut]:
        entries = await service.history(chat_id, limit=limit)
        return [
            HistoryOut(
                at=e.at,
                short_id=e.short_id,
                content=e.content,
                outcome=e.outcome,
                late=e.late,
                detail=e.detail,
            )
            for e in entries
        ]

    async def settings_out(chat_id: str, service: ReminderService, moved: int = 0) -> SettingsOut:
        rules = bot.config.reminders.rules().for_chat(await service.settings_of(chat_id))
        return SettingsOut(
            chat_id=chat_id,
            timezone=await service.timezone_of(chat_id),
            remind_others=rules.remind_others,
            remind_everyone=rules.remind_everyone,
            reminders_moved=moved,
        )

    @routes.get("/settings")
    async def get_settings(chat_id: str, service: Reminders) -> SettingsOut:
        return await settings_out(chat_id, service)

    @routes.put("/settings", response_model=SettingsOut)
    async def put_settings(chat_id: str, body: SettingsIn, service: Reminders) -> Any:
        if body.timezone is not None:
            try:
                check_timezone(body.timezone)
            except InvalidTimezoneError as exc:
                issue = {"path": "timezone", "problem": str(exc)}
                return JSONResponse(
                    {"error": "invalid settings", "issues": [issue]}, status_code=422
                )
        rules = rule_changes(body.remind_others, body.remind_everyone)
        if rules:
            await service.update_settings(chat_id, "group", rules)
        moved = 0
        if body.timezone is not None:
            moved = len(await service.set_timezone(chat_id, "group", body.timezone))
        return await settings_out(chat_id, service, moved)

    return routes
