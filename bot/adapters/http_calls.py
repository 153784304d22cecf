"""A REST call of a tool: one `ValidatedToolCall` executed by the bot's invoker, as every
other caller's, with the outcome as a status code.

| outcome                                     | status |
| ------------------------------------------- | ------ |
| ok                                          | the route's own (200, 201, 204) |
| invalid (either validation stage)           | 422, with the issues by path |
| unknown, hidden (scope, policy, switched off) | 403, with the reason |
| refused: not_found / forbidden / conflict / refused | 404 / 403 / 409 / 422 |
| refused: unavailable, or the database down  | 503 |
| limited (the tools policy's rate limit)     | 429, with Retry-After |
| timeout                                     | 504 |
| failed                                      | 500, never the handler's exception |
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

from fastapi import Depends, HTTPException, Query, Request
from fastapi.responses import JSONResponse

from groupmate.bot.app import Bot
from groupmate.bot.contexts import Caller, rights
from groupmate.function_calls import (
    AuthMethod,
    CallSource,
    ChatType,
    FunctionResult,
    InvalidArgumentsError,
    MessageContext,
    ToolCall,
    ToolFailedError,
    ToolHiddenError,
    ToolInvocationError,
    ToolRateLimitedError,
    ToolTimeoutError,
    UnknownToolError,
)
from groupmate.function_calls.result import Failure
from groupmate.storage import Database, Member, ReminderReader, StorageUnavailableError
from groupmate.storage.audit import AuditReader
from groupmate.storage.chatlog import ChatLogReader
from groupmate.storage.exceptions import GroupmateError
from groupmate.storage.search import MessageSearch, SearchReader

T = TypeVar("T")

API_USER = "api"  # who a REST caller is, in permission checks and the audit log
# The 503 body's error when the database is down (the chat's sentence is STORAGE_DOWN).
STORAGE_DOWN_ERROR = "storage unavailable, nothing changed"

FAILURE_STATUS: dict[Failure, int] = {
    "not_found": 404,
    "forbidden": 403,
    "conflict": 409,
    "refused": 422,
    "unavailable": 503,
}


@dataclass(frozen=True, slots=True)
class Person:
    """Someone a front end acts as (the playground's selected person): the call gets
    the rights their own chat message would have, not the token holder's."""

    user_id: str
    name: str
    admin: bool


def acting_as(
    as_user: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=255,
            description="Act as this member (the playground's person): their rights, "
            "as their chat message would have, instead of an admin's.",
        ),
    ] = None,
    as_name: Annotated[str, Query(max_length=255)] = "",
    as_admin: Annotated[
        bool, Query(description="with as_user: the member administers the chat")
    ] = False,
) -> Person | None:
    return None if as_user is None else Person(as_user, as_name, as_admin)


ActingAs = Annotated[Person | None, Depends(acting_as)]


def running_bot(request: Request) -> Bot:
    """The bot the app serves (`create_app` puts it in the app's state)."""
    bot: Bot = request.app.state.bot
    return bot


RunningBot = Annotated[Bot, Depends(running_bot)]


def running(part: T | None) -> T:
    """A part the bot opens when it starts (its database, logs, services): 503 before."""
    if part is None:
        raise HTTPException(503, "the bot is not running")
    return part


def reminder_reader(bot: RunningBot) -> ReminderReader:
    """What a route reads the reminders, settings and deliveries through: the read-only
    view (a route that changes something calls a tool: `call_tool`)."""
    return ReminderReader(running(bot.reminders))


Reminders = Annotated[ReminderReader, Depends(reminder_reader)]


def database(bot: RunningBot) -> Database:
    """The bot's database, for what no service covers (is it up, its revision)."""
    return running(bot.database)


Store = Annotated[Database, Depends(database)]


def audit_reader(bot: RunningBot) -> AuditReader:
    """Who made the bot do what: the audit log's read-only view."""
    return AuditReader(running(bot.audit))


Audit = Annotated[AuditReader, Depends(audit_reader)]


def chat_history(bot: RunningBot) -> ChatLogReader:
    """The chats' logged messages: the chat log's read-only view."""
    return ChatLogReader(running(bot.chatlog))


History = Annotated[ChatLogReader, Depends(chat_history)]


def message_search(store: Store) -> SearchReader:
    """Finding a chat's messages: the search's read-only view (forgetting is a tool's)."""
    return SearchReader(MessageSearch(store))


Search = Annotated[SearchReader, Depends(message_search)]


class Refused(GroupmateError):
    """The call did not do what was asked; `response` says why, as a status code."""

    def __init__(self, response: JSONResponse) -> None:
        super().__init__(response.status_code)
        self.response = response


def invalid(exc: InvalidArgumentsError) -> JSONResponse:
    issues = [_issue(i.path, i.problem, i.received) for i in exc.issues]
    return JSONResponse({"error": "invalid request", "issues": issues}, status_code=422)


def _issue(path: str, problem: str, received: str) -> dict[str, str]:
    # Lone surrogates cannot be encoded as JSON; show them as replacement characters.
    safe = received.encode("utf-8", "replace").decode("utf-8")
    return {"path": path, "problem": problem, "received": safe}


def not_run(exc: ToolInvocationError) -> JSONResponse:
    """The response to a call that did not run, or failed."""
    if isinstance(exc, InvalidArgumentsError):
        return invalid(exc)
    if isinstance(exc, ToolHiddenError):
        return JSONResponse(
            {"error": f"not available in this chat ({exc.reason})", "reason": exc.reason},
            status_code=403,
        )
    if isinstance(exc, UnknownToolError):
        return JSONResponse({"error": "no such tool"}, status_code=403)
    if isinstance(exc, ToolRateLimitedError):
        wait = str(max(1, math.ceil(exc.retry_after)))
        return JSONResponse(
            {"error": "rate limited by the tools policy", "retry_after": int(wait)},
            status_code=429,
            headers={"Retry-After": wait},
        )
    if isinstance(exc, ToolTimeoutError):
        return JSONResponse({"error": "timed out; nothing may have changed"}, status_code=504)
    if isinstance(exc, ToolFailedError) and isinstance(exc.__cause__, StorageUnavailableError):
        raise exc.__cause__  # the app answers 503, nothing changed
    if isinstance(exc, ToolFailedError) and not exc.internal:
        return JSONResponse({"error": str(exc)}, status_code=422)
    return JSONResponse({"error": "the call failed on the bot's side"}, status_code=500)


async def call_tool(bot: Bot, ctx: MessageContext, tool_name: str, raw: Any) -> FunctionResult:
    """Validate and execute through the bot's invoker; the result of a call that did
    what was asked, else Refused with the response to send."""
    try:
        validated = bot.invoker.validate_tool_call(ctx, ToolCall(tool_name, raw))
        result = await bot.invoker.execute_tool_call(ctx, validated)
    except ToolInvocationError as exc:
        raise Refused(not_run(exc)) from None
    if result.failure is not None:
        if result.failure == "unavailable":
            raise StorageUnavailableError("storage unavailable")
        status = FAILURE_STATUS[result.failure]
        raise Refused(JSONResponse({"error": result.reply or result.failure}, status_code=status))
    return result


async def api_context(
    bot: Bot,
    chat_id: str,
    *,
    sender_id: str = API_USER,
    sender_name: str = "",
    chat_type: ChatType | None = None,
    mentioned: tuple[Member, ...] = (),
    source: CallSource = "rest",
    person: Person | None = None,
) -> MessageContext:
    """The context of a call by a holder of the API token: an admin of the chat, whose
    type is the one stored for it (a group, for a chat never seen) unless given. With
    `person`, the call is that member's instead, with the rights their chat message
    would have (see `ContextFactory.for_message`)."""
    if chat_type is None:
        chat_type = (
            "group" if bot.reminders is None else await bot.reminders.chats.chat_type_of(chat_id)
        )
    webhook = bot.config.adapters.webhook
    # Without a configured token, whoever reached the port called: the audit says so.
    auth: AuthMethod = "token" if webhook.token else "none"
    if person is not None:
        admin = rights(bot.config.bot.admins, person.user_id, chat_type, chat_admin=person.admin)
        return await bot.caller_context(
            Caller(
                chat_id=chat_id,
                sender_id=person.user_id,
                source=source if source == "dashboard" else "playground",
                auth=auth,
                chat_type=chat_type,
                sender_name=person.name,
                is_admin=admin.is_admin,
                mentioned=mentioned,
                bot_admin=admin.bot_admin,
            )
        )
    operator = rights((), sender_id, chat_type, operator=True)  # the API is the operator's
    return await bot.caller_context(
        Caller(
            chat_id=chat_id,
            sender_id=sender_id,
            source=source,
            auth=auth,
            chat_type=chat_type,
            sender_name=sender_name,
            is_admin=operator.is_admin,
            mentioned=mentioned,
            bot_admin=operator.bot_admin,
        )
    )


async def json_object(request: Request) -> dict[str, Any]:
    try:
        raw = await request.json()
    except ValueError:
        raise HTTPException(400, "the body is not JSON") from None
    if not isinstance(raw, dict):
        raise HTTPException(422, "the body must be a JSON object")
    return raw
