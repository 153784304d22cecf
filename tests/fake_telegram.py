"""A fake Telegram Bot API on 127.0.0.1: the documented JSON shapes of the methods the
adapter uses (complete enough for python-telegram-bot to parse), parameters as JSON or
form-encoded, scripted updates served by long polling (the kinds `allowed_updates` lets
through, as Telegram does), every request recorded, and 429s (with
`parameters.retry_after`) on demand. Presses of inline buttons come as `callback_query`
updates, answered with answerCallbackQuery (once per query) and shown by editMessageText
(refused as "message is not modified" when nothing would change), as the Bot API
documents them: https://core.telegram.org/bots/api#callbackquery,
#answercallbackquery, #editmessagetext."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from groupmate.testing.threaded_server import ThreadedServer

TOKEN = "123456:FAKE-telegram-TOKEN-abcdef"
BOT_ID = 999
BOT_USERNAME = "groupmate_bot"
GROUP = -100123
# Parameters of the methods used that the Bot API types as String: in a form-encoded body
# they stand as they are, every other value as JSON (numbers, booleans, objects).
_STRING_PARAMETERS = {"text", "parse_mode", "url", "secret_token", "callback_query_id"}


@dataclass(frozen=True, slots=True)
class Call:
    method: str
    body: dict[str, Any]
    at: float


def user(user_id: int, first_name: str, username: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name}
    if username:
        found["username"] = username
    return found


ALICE = user(111, "Alice", "alice")
BOB = user(222, "Bob", "bobby")


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def entities_of(text: str) -> list[dict[str, Any]]:
    """The entities Telegram would attach: a leading /command and @username mentions."""
    found: list[dict[str, Any]] = []
    for match in re.finditer(r"(?<!\w)(/\w+(?:@\w+)?|@\w+)", text):
        kind = "bot_command" if match.group().startswith("/") else "mention"
        if kind == "bot_command" and match.start() != 0:
            continue
        found.append(
            {
                "type": kind,
                "offset": _utf16_len(text[: match.start()]),
                "length": _utf16_len(match.group()),
            }
        )
    return found


class FakeTelegram:
    """POST /bot<TOKEN>/<method>; another token gets 401 like the real API."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.admins: set[int] = set()
        self.sent_ids: list[int] = []  # of each accepted sendMessage, in order
        # method -> how many of its next calls get 429 with this retry_after.
        self.rate_limit: dict[str, tuple[int, int]] = {}
        # method -> how many of its next calls get a proxy's 502 page (not JSON).
        self.bad_gateway: dict[str, int] = {}
        self._updates: list[dict[str, Any]] = []
        # The last allowed_updates given (getUpdates, setWebhook): Telegram keeps it; until
        # then it sends every kind but these.
        self.allowed: list[str] | None = None
        self._next_update = 1
        self._next_message = 1000
        # The bot's messages as they now read, by (chat, message id), and the callback
        # queries not answered yet (Telegram takes one answer per query).
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}
        self._queries: set[str] = set()
        self._next_query = 1
        self._lock = threading.Lock()
        app = Starlette(routes=[Route("/bot{token}/{method}", self._api, methods=["POST"])])
        self.server = ThreadedServer(app)  # start() and stop() it

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    # -- scripting ---------------------------------------------------------------------

    def push(self, message: dict[str, Any]) -> None:
        self.push_update("message", message)

    def push_update(self, kind: str, payload: dict[str, Any]) -> None:
        """Scripts an update of `kind` ("message", "message_reaction") with `payload`."""
        with self._lock:
            self._updates.append({"update_id": self._next_update, kind: payload})
            self._next_update += 1

    def react(
        self,
        message_id: int,
        new: Sequence[str | dict[str, Any]] = (),
        old: Sequence[str | dict[str, Any]] = (),
        *,
        sender: dict[str, Any] | None = ALICE,
        actor_chat: dict[str, Any] | None = None,
        chat: int = GROUP,
    ) -> None:
        """Scripts a message_reaction update (Bot API 7.0): `sender`'s reactions to the
        message went from `old` to `new`, each an emoji or a ReactionType object. Without
        a `sender` it is anonymous: `actor_chat` reacted."""
        chat_type = "private" if chat > 0 else "supergroup"
        update: dict[str, Any] = {
            "chat": {"id": chat, "type": chat_type},
            "message_id": message_id,
            "date": int(time.time()),
            "old_reaction": [_reaction_type(r) for r in old],
            "new_reaction": [_reaction_type(r) for r in new],
        }
        if sender is not None:
            update["user"] = sender
        if actor_chat is not None:
            update["actor_chat"] = actor_chat
        self.push_update("message_reaction", update)

    def say(
        self,
        text: str,
        *,
        sender: dict[str, Any] = ALICE,
        chat: int = GROUP,
        reply_to: dict[str, Any] | None = None,
        entities: list[dict[str, Any]] | None = None,
    ) -> int:
        """Scripts a text message from `sender`; its message id."""
        with self._lock:
            message_id = self._next_message
            self._next_message += 1
        chat_type = "private" if chat > 0 else "supergroup"
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": sender,
            "chat": {"id": chat, "type": chat_type},
            "date": int(time.time()),
            "text": text,
        }
        found = entities_of(text) if entities is None else entities
        if found:
            message["entities"] = found
        if reply_to is not None:
            message["reply_to_message"] = reply_to
        self.push(message)
        return message_id

    def press(
        self,
        message_id: int,
        data: str,
        *,
        sender: dict[str, Any] = ALICE,
        chat: int = GROUP,
        query_id: str | None = None,
    ) -> str:
        """Scripts a `callback_query` update: `sender` pressed the button with `data`
        under the bot's message `message_id` in `chat`; the query's id (give the same
        one again for Telegram's redelivery of the same update)."""
        with self._lock:
            if query_id is None:  # a new query, to be answered once; else redelivered
                query_id = f"43820{self._next_query:05d}"
                self._next_query += 1
                self._queries.add(query_id)
            shown = self.messages.get((chat, message_id), {"text": "a reminder"})
        chat_type = "private" if chat > 0 else "supergroup"
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": {**user(BOT_ID, "Groupmate", BOT_USERNAME), "is_bot": True},
            "chat": {"id": chat, "type": chat_type},
            "date": int(time.time()),
            "text": shown["text"],
        }
        if "reply_markup" in shown:
            message["reply_markup"] = shown["reply_markup"]
        query = {
            "id": query_id,
            "from": sender,
            "message": message,
            "chat_instance": f"-{abs(chat)}77",
            "data": data,
        }
        self.push_update("callback_query", query)
        return query_id

    def answers(self) -> list[dict[str, Any]]:
        """The answerCallbackQuery bodies Telegram took (one per query), in order."""
        return [c.body for c in self.called("answerCallbackQuery") if c.body.get("_taken")]

    def edits(self) -> list[dict[str, Any]]:
        """The editMessageText bodies Telegram took (not the refused ones), in order."""
        return [c.body for c in self.called("editMessageText") if c.body.get("_taken")]

    def sent(self) -> list[dict[str, Any]]:
        with self._lock:
            return [c.body for c in self.calls if c.method == "sendMessage"]

    def called(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def pending(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._updates)

    # -- the API -----------------------------------------------------------------------

    async def _api(self, request: Request) -> Response:
        method = request.path_params["method"]
        if request.path_params["token"] != TOKEN:
            return _error(401, "Unauthorized")
        body = await _parameters(request)
        with self._lock:
            self.calls.append(Call(method, body, time.monotonic()))
            if self.bad_gateway.get(method, 0) > 0:
                self.bad_gateway[method] -= 1
                return Response("<html>502 Bad Gateway</html>", status_code=502)
            count, retry_after = self.rate_limit.get(method, (0, 0))
            if count > 0:
                self.rate_limit[method] = (count - 1, retry_after)
                return _error(
                    429,
                    f"Too Many Requests: retry after {retry_after}",
                    parameters={"retry_after": retry_after},
                )
        if method == "getUpdates":
            return _ok(await self._get_updates(body))
        if method == "sendMessage":
            return _ok(self._send_message(body))
        if method == "answerCallbackQuery":
            with self._lock:
                known = body["callback_query_id"] in self._queries
                self._queries.discard(body["callback_query_id"])
            if not known:
                return _error(400, _TOO_OLD)
            body["_taken"] = True
            return _ok(True)
        if method == "editMessageText":
            return self._edit(body)
        if method == "getMe":
            return _ok({**user(BOT_ID, "Groupmate", BOT_USERNAME), "is_bot": True})
        if method == "getChatMember":
            member: dict[str, Any] = {"status": "member", "user": user(body["user_id"], "Someone")}
            if body["user_id"] in self.admins:
                member.update(_ADMINISTRATOR)
            return _ok(member)
        if method == "setWebhook" and "allowed_updates" in body:
            with self._lock:
                self.allowed = list(body["allowed_updates"])
        if method in ("setMyCommands", "deleteWebhook", "setWebhook"):
            return _ok(True)
        return _error(404, "Not Found: method not found")

    async def _get_updates(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if "allowed_updates" in body:
            with self._lock:
                self.allowed = list(body["allowed_updates"])
        offset = int(body.get("offset", 0))
        limit = int(body.get("limit", 100))
        deadline = time.monotonic() + float(body.get("timeout", 0))
        while True:
            with self._lock:
                # Asking from `offset` confirms every earlier update: they are gone.
                self._updates = [
                    u for u in self._updates if u["update_id"] >= offset and self._allows(u)
                ]
                if self._updates or time.monotonic() >= deadline:
                    return self._updates[:limit]
            await asyncio.sleep(0.02)

    def _allows(self, update: dict[str, Any]) -> bool:
        """Whether Telegram would send `update` at all (it never queues the others)."""
        (kind,) = (key for key in update if key != "update_id")
        if self.allowed is None:
            return kind not in _NOT_BY_DEFAULT
        return kind in self.allowed

    def _send_message(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            message_id = self._next_message
            self._next_message += 1
            self.sent_ids.append(message_id)
            self.messages[(body["chat_id"], message_id)] = _shown(body)
        return {
            "message_id": message_id,
            "from": {**user(BOT_ID, "Groupmate", BOT_USERNAME), "is_bot": True},
            "chat": {"id": body["chat_id"], "type": "supergroup"},
            "date": int(time.time()),
            "text": body["text"],
        }

    def _edit(self, body: dict[str, Any]) -> Response:
        key = (body["chat_id"], body["message_id"])
        with self._lock:
            before = self.messages.get(key)
            if before is None:
                return _error(400, "Bad Request: message to edit not found")
            after = _shown(body)
            if after == before:
                return _error(400, _NOT_MODIFIED)
            self.messages[key] = after
            body["_taken"] = True
        return _ok({
            "message_id": body["message_id"],
            "from": {**user(BOT_ID, "Groupmate", BOT_USERNAME), "is_bot": True},
            "chat": {"id": body["chat_id"], "type": "supergroup"},
            "date": int(time.time()),
            "edit_date": int(time.time()),
            **after,
        })  # fmt: skip


_TOO_OLD = "Bad Request: query is too old and response timeout expired or query ID is invalid"
_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup "
    "are exactly the same as a current content and reply markup of the message"
)


def _shown(body: dict[str, Any]) -> dict[str, Any]:
    """How a sent or edited message reads: its text, and its keyboard if it has one (an
    edit without `reply_markup` takes the keyboard away)."""
    shown: dict[str, Any] = {"text": body["text"]}
    if body.get("reply_markup"):
        shown["reply_markup"] = body["reply_markup"]
    return shown


def _reaction_type(reaction: str | dict[str, Any]) -> dict[str, Any]:
    return {"type": "emoji", "emoji": reaction} if isinstance(reaction, str) else reaction


# What Telegram leaves out unless allowed_updates names it.
_NOT_BY_DEFAULT = {"chat_member", "message_reaction", "message_reaction_count"}


# The fields a ChatMemberAdministrator must have (besides `user`).
_ADMINISTRATOR: dict[str, Any] = {
    "status": "administrator",
    **dict.fromkeys(
        (
            "can_be_edited",
            "is_anonymous",
            "can_manage_chat",
            "can_delete_messages",
            "can_manage_video_chats",
            "can_restrict_members",
            "can_promote_members",
            "can_change_info",
            "can_invite_users",
            "can_post_stories",
            "can_edit_stories",
            "can_delete_stories",
        ),
        False,
    ),
}


async def _parameters(request: Request) -> dict[str, Any]:
    """A method's parameters, sent as JSON or form-encoded (as python-telegram-bot does)."""
    raw = await request.body()
    if not raw:
        return {}
    if request.headers.get("content-type", "").startswith("application/json"):
        found: dict[str, Any] = json.loads(raw)
        return found
    return {
        key: value if key in _STRING_PARAMETERS else json.loads(value)
        for key, value in parse_qsl(raw.decode(), keep_blank_values=True)
    }


def _ok(result: Any) -> Response:
    return JSONResponse({"ok": True, "result": result})


def _error(code: int, description: str, **extra: Any) -> Response:
    body = {"ok": False, "error_code": code, "description": description, **extra}
    return JSONResponse(body, status_code=code)
