"""The REST routes for one chat's reminders, their history and the chat's settings.

Every route that changes something is one call of the matching tool through the bot's
`ToolInvoker` (see `http_calls`): visibility and the tools policy, both validation stages
(the exact JSON Schema the model is shown, then the Pydantic model), the handler under
its time limit, the audit log. So the API, the chat commands and the model can never
disagree on what a valid reminder is, and each change has an audit row saying a token
holder made it. The routes that only read get the read-only `ReminderReader`.
Callers of these routes presented the API token: they act as an admin of the chat, or,
with `as_user` (the playground's selected person), as that member with their rights.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from groupmate.bot.adapters.api_models import (
    ActionIO,
    HistoryOut,
    MemberIO,
    ReminderOut,
    SettingsIn,
    SettingsOut,
    SnoozeOut,
    reminder_out,
)
from groupmate.bot.adapters.http_calls import (
    FAILURE_STATUS,
    ActingAs,
    Refused,
    Reminders,
    RunningBot,
    api_context,
    call_tool,
    json_object,
    not_run,
)
from groupmate.bot.app import Bot
from groupmate.function_calls import MessageContext, ToolCall, ToolInvocationError
from groupmate.function_calls.handlers.followup import followup_seconds, followup_window
from groupmate.function_calls.handlers.reminder_args import ReminderArgs
from groupmate.function_calls.handlers.reminder_changes import ReminderUpdateArgs
from groupmate.function_calls.handlers.reminder_snooze import DEFAULT_SNOOZE_MINUTES, Snoozed
from groupmate.function_calls.handlers.reminders import refused, requester
from groupmate.function_calls.schema import JsonSchema, model_parameters_schema
from groupmate.storage import Member, ReminderReader, ReminderView, StorageError
from groupmate.storage.vocabulary import CHAT_TYPES, SETTING_QUIET_DIGEST, is_chat_type

# PUT /settings's fields, by the tool that changes them (in the order they run: the zone
# last, as its answer says how many reminders it moved).
_SETTINGS_TOOLS = (
    ("reminder_rules", ("remind_others", "remind_everyone")),
    ("followup_settings", ("followup", "followup_seconds")),
    ("digest_settings", ("digest_when_quiet",)),
    ("set_timezone", ("timezone",)),
)


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


_EXTRA_CREATE = {
    "created_by": {"type": "string", "minLength": 1, "description": "the creator's user id"},
    "created_by_name": {"type": "string"},
    "chat_type": {"enum": list(CHAT_TYPES), "default": "group"},
    "mentions": {
        "type": "array",
        "items": MemberIO.model_json_schema(),
        "description": "members the platform resolved, so that who can name them",
    },
    "action": {
        **ActionIO.model_json_schema(),
        "description": "instead of content: the command it runs when it fires",
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


def _read_refused(exc: StorageError) -> JSONResponse:
    """A refused read, answered like the tools' refusals (in English: no message to
    take a language from)."""
    result = refused(exc, "")
    if result.failure == "unavailable":
        raise exc  # the app answers 503
    status = FAILURE_STATUS[result.failure or "refused"]
    return JSONResponse({"error": result.reply}, status_code=status)


def _action_as_content(raw: dict[str, Any]) -> JSONResponse | None:
    """`"action": {"command", "args"}` as the content the tool reads ("/summary"); the
    422 when it is malformed or comes with a content too."""
    try:
        action = ActionIO.model_validate(raw.pop("action"))
    except ValidationError:
        issue = {"path": "action", "problem": 'must be {"command": "...", "args": "..."}'}
        return JSONResponse({"error": "invalid request", "issues": [issue]}, status_code=422)
    if "content" in raw:
        issue = {"path": "content", "problem": "give an action or a content, not both"}
        return JSONResponse({"error": "invalid request", "issues": [issue]}, status_code=422)
    raw["content"] = f"/{action.command} {action.args}".strip()
    return None


def _schema_of(model: type[Any], drop: tuple[str, ...] = ()) -> JsonSchema:
    """A tool's argument schema, as the model is shown it (its full view), less `drop`."""
    schema = dict(model_parameters_schema(model))
    schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k not in drop}
    schema["required"] = [k for k in schema.get("required", []) if k not in drop]
    return schema


async def _reminder(bot: Bot, ctx: MessageContext, tool_name: str, raw: dict[str, Any]) -> Any:
    """The tool's call; the reminder it made or changed, or the refusal."""
    try:
        result = await call_tool(bot, ctx, tool_name, raw)
    except Refused as exc:
        return exc.response
    assert isinstance(result.value, ReminderView)
    return reminder_out(result.value)


# The routes under /v1/chats/{chat_id}; the request bodies are the tools' schemas.
router = APIRouter(prefix="/v1/chats/{chat_id}")


@router.get("/reminders")
async def list_reminders(chat_id: str, service: Reminders) -> list[ReminderOut]:
    found, _ = await service.list_for_chat(chat_id, limit=1000)
    last = await service.last_outcomes([r.id for r in found if r.action is not None])
    return [reminder_out(reminder, last.get(reminder.id)) for reminder in found]


@router.post(
    "/reminders",
    status_code=201,
    response_model=ReminderOut,
    openapi_extra=_body(_schema_of(ReminderArgs), _EXTRA_CREATE, ["created_by"]),
)
async def create_reminder(chat_id: str, request: Request, bot: RunningBot) -> Any:
    raw = await json_object(request)
    created_by = raw.pop("created_by", None)
    created_by_name = raw.pop("created_by_name", "")
    chat_type = raw.pop("chat_type", "group")
    if not isinstance(created_by, str) or not created_by:
        issue = {"path": "created_by", "problem": "required field is missing"}
        return JSONResponse({"error": "invalid request", "issues": [issue]}, status_code=422)
    if not is_chat_type(chat_type):
        issue = {"path": "chat_type", "problem": "must be 'group' or 'private'"}
        return JSONResponse({"error": "invalid request", "issues": [issue]}, status_code=422)
    if raw.get("action", ...) is None:  # what GET shows of a plain reminder
        del raw["action"]
    if "action" in raw:  # the command it runs: its words are the reminder's content
        malformed = _action_as_content(raw)
        if malformed is not None:
            return malformed
    ctx = await api_context(
        bot,
        chat_id,
        sender_id=created_by,
        sender_name=str(created_by_name),
        chat_type=chat_type,
        mentioned=_members(raw),
    )
    return await _reminder(bot, ctx, "reminder_set", raw)


@router.get("/reminders/{reminder_id}", response_model=ReminderOut)
async def get_reminder(chat_id: str, reminder_id: str, service: Reminders, bot: RunningBot) -> Any:
    ctx = await api_context(bot, chat_id)
    try:
        return reminder_out(await service.find(chat_id, reminder_id, requester(ctx)))
    except StorageError as exc:
        return _read_refused(exc)


@router.patch(
    "/reminders/{reminder_id}",
    response_model=ReminderOut,
    openapi_extra=_body(
        _schema_of(ReminderUpdateArgs, ("reminder_id",)),
        {"mentions": _EXTRA_CREATE["mentions"]},
        [],
    ),
)
async def update_reminder(
    chat_id: str, reminder_id: str, request: Request, person: ActingAs, bot: RunningBot
) -> Any:
    """A merge: only the fields sent change, and the result is checked as a whole."""
    raw = await json_object(request)
    ctx = await api_context(bot, chat_id, mentioned=_members(raw), person=person)
    if "reminder_id" in raw:
        raise HTTPException(422, "the reminder is named by the path, not the body")
    return await _reminder(bot, ctx, "reminder_update", {**raw, "reminder_id": reminder_id})


@router.delete("/reminders/{reminder_id}", status_code=204)
async def delete_reminder(
    chat_id: str, reminder_id: str, person: ActingAs, bot: RunningBot
) -> Response:
    ctx = await api_context(bot, chat_id, person=person)
    try:
        await call_tool(bot, ctx, "reminder_delete", {"reminder_id": reminder_id})
    except Refused as exc:
        return exc.response
    return Response(status_code=204)


@router.post("/reminders/{reminder_id}/snooze", response_model=SnoozeOut)
async def snooze_reminder(
    chat_id: str,
    reminder_id: str,
    person: ActingAs,
    bot: RunningBot,
    minutes: Annotated[int, Query(ge=1)] = DEFAULT_SNOOZE_MINUTES,
) -> Any:
    # The week's limit is the tool's (its schema says so in the 422).
    ctx = await api_context(bot, chat_id, person=person)
    raw = {"reminder_id": reminder_id, "minutes": minutes}
    try:
        result = await call_tool(bot, ctx, "reminder_snooze", raw)
    except Refused as exc:
        return exc.response
    assert isinstance(result.value, Snoozed)
    return SnoozeOut(
        reminder=reminder_out(result.value.reminder), snooze=reminder_out(result.value.snooze)
    )


@router.post("/reminders/{reminder_id}/pause", response_model=ReminderOut)
async def pause_reminder(chat_id: str, reminder_id: str, person: ActingAs, bot: RunningBot) -> Any:
    ctx = await api_context(bot, chat_id, person=person)
    return await _reminder(bot, ctx, "reminder_pause", {"reminder_id": reminder_id})


@router.post("/reminders/{reminder_id}/resume", response_model=ReminderOut)
async def resume_reminder(chat_id: str, reminder_id: str, person: ActingAs, bot: RunningBot) -> Any:
    ctx = await api_context(bot, chat_id, person=person)
    return await _reminder(bot, ctx, "reminder_resume", {"reminder_id": reminder_id})


@router.get("/history")
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
            detail=e.detail if e.until is None else f"{e.until:%Y-%m-%d %H:%M}",
        )
        for e in entries
    ]


async def _settings_out(
    bot: Bot, chat_id: str, service: ReminderReader, moved: int = 0
) -> SettingsOut:
    settings = await service.settings_of(chat_id)
    rules = bot.config.reminders.rules().for_chat(settings)
    quiet = settings.get(SETTING_QUIET_DIGEST)
    return SettingsOut(
        chat_id=chat_id,
        timezone=await service.timezone_of(chat_id),
        remind_others=rules.remind_others,
        remind_everyone=rules.remind_everyone,
        followup="on" if followup_window(settings) is not None else "off",
        followup_seconds=followup_seconds(settings),
        digest_when_quiet="skip" if quiet == "skip" else "post",
        reminders_moved=moved,
    )


@router.get("/settings")
async def get_settings(chat_id: str, service: Reminders, bot: RunningBot) -> SettingsOut:
    return await _settings_out(bot, chat_id, service)


@router.put("/settings", response_model=SettingsOut)
async def put_settings(
    chat_id: str, body: SettingsIn, service: Reminders, person: ActingAs, bot: RunningBot
) -> Any:
    """The same tools as /tz and /settings: `reminder_rules`, `followup_settings`,
    `digest_settings`, then `set_timezone`. Every call is checked first, so one bad
    value (a zone that does not exist, say) changes nothing."""
    ctx = await api_context(bot, chat_id, person=person)
    given = body.model_dump(exclude_none=True)
    calls = [
        ToolCall(tool, values)
        for tool, keys in _SETTINGS_TOOLS
        if (values := {key: given[key] for key in keys if key in given})
    ]
    moved = 0
    try:
        for call in calls:  # both stages, before anything runs
            bot.invoker.validate_tool_call(ctx, call)
        for call in calls:
            result = await call_tool(bot, ctx, call.name, call.arguments)
            if call.name == "set_timezone":
                moved = len(result.value or ())
    except Refused as exc:
        return exc.response
    except ToolInvocationError as exc:
        return not_run(exc)
    return await _settings_out(bot, chat_id, service, moved)
