"""The fake Discord's message components and interactions: a user's press of a button
under a message is dispatched as INTERACTION_CREATE (type 3, MESSAGE_COMPONENT), and the
bot answers through the interaction's token: POST /interactions/{id}/{token}/callback
(4 with flags 64: an ephemeral message; 6: DEFERRED_UPDATE_MESSAGE; 7: UPDATE_MESSAGE),
PATCH /webhooks/{app}/{token}/messages/@original, POST /webhooks/{app}/{token} (a
followup). As Discord does: one callback per interaction (40060 after), none after 3 s
(10062 "Unknown interaction"), a followup only after a callback, a token good for 15
minutes. Shapes from Discord's docs ("Receiving and Responding": the interaction object
and the interaction callback) and discord-api-types' payloads/v10/_interactions/
messageComponents.ts (APIMessageComponentButtonInteraction)."""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from tests.fake_discord_guild import APP, GUILD, MODS, ROLES, USERS, now, snowflake

if TYPE_CHECKING:
    from tests.fake_discord import FakeDiscord

DEADLINE = 3.0  # seconds Discord waits for an interaction's first answer
EPHEMERAL = 1 << 6


@dataclass
class Interaction:
    payload: dict[str, Any]
    at: float  # when it was dispatched (monotonic)
    callbacks: list[dict[str, Any]] = field(default_factory=list)  # each answer, with "_after"
    refused: list[int] = field(default_factory=list)  # Discord's error codes for late/extra ones


class Interactions:
    """Presses, and what the bot answered each (by interaction id)."""

    def __init__(self, discord: FakeDiscord) -> None:
        self._discord = discord
        self.by_id: dict[str, Interaction] = {}
        self.ephemeral: list[dict[str, Any]] = []  # {"interaction", "user", "content"}
        self.edits: list[dict[str, Any]] = []  # the messages as edited, in order

    def press(
        self, message: dict[str, Any], custom_id: str, *, user: str = "bob"
    ) -> dict[str, Any]:
        """`user` presses the button `custom_id` under `message`: the interaction, as
        Discord dispatches it (a guild's with the presser's member, a DM's with its user)."""
        channel = str(message["channel_id"])
        person = USERS[user]
        guild = self._discord.guild_of(channel)
        payload: dict[str, Any] = {
            "id": snowflake(), "application_id": APP, "type": 3, "token": secrets.token_urlsafe(48),
            "version": 1, "data": {"custom_id": custom_id, "component_type": 2},
            "channel_id": channel, "channel": {"id": channel, "type": 0 if guild else 1},
            "message": message, "app_permissions": "68608", "locale": "en-US",
            "entitlements": [], "attachment_size_limit": 10485760,
            "context": 0 if guild else 1,
            "authorizing_integration_owners": {"0": guild} if guild else {"1": person["id"]},
        }  # fmt: skip
        if guild is not None:
            payload |= {"guild_id": guild, "guild": {"id": guild, "locale": "en-US",
                        "features": []}, "guild_locale": "en-US",
                        "member": {"user": person, "roles": ROLES.get(user, []),
                                   "permissions": permissions(user), "joined_at": now(),
                                   "deaf": False,
                                   "mute": False, "flags": 0, "nick": None, "avatar": None,
                                   "pending": False, "premium_since": None}}  # fmt: skip
            payload["channel"] |= {"guild_id": GUILD, "name": "general", "position": 0,
                                   "permission_overwrites": [], "nsfw": False,
                                   "parent_id": None}  # fmt: skip
        else:
            payload |= {"user": person}
        self.replay(payload)
        return payload

    def replay(self, payload: dict[str, Any]) -> None:
        """Dispatch an interaction (again: the same id and token)."""
        self.by_id.setdefault(payload["id"], Interaction(payload, time.monotonic()))
        self._discord.dispatch("INTERACTION_CREATE", payload)

    def answered(self, payload: dict[str, Any]) -> Interaction:
        return self.by_id[payload["id"]]

    # -- the interaction endpoints -----------------------------------------------------

    async def rest(self, request: Request, path: str) -> Response | None:
        """The answer to an interaction request, or None for a path that is not one."""
        callback = re.fullmatch(r"/interactions/(\d+)/([\w-]+)/callback", path)
        if callback is not None and request.method == "POST":
            return self._callback(callback.group(1), callback.group(2), await _body(request))
        hook = re.fullmatch(r"/webhooks/(\d+)/([\w-]+)(/messages/@original)?", path)
        if hook is None:
            return None
        found = self._by_token(hook.group(2))
        if found is None or hook.group(1) != APP:
            return _error(404, 10015, "Unknown Webhook")
        if not found.callbacks:
            return _error(404, 10015, "Unknown Webhook")  # a followup before any callback
        body = await _body(request)
        if hook.group(3) and request.method == "PATCH":
            return JSONResponse(self._edit(found, body))
        if not hook.group(3) and request.method == "POST":
            made = self._ephemeral(found, body)
            wait = request.query_params.get("wait") in ("1", "true")
            return JSONResponse(made) if wait else Response(status_code=204)
        return _error(405, 0, "405: Method Not Allowed")

    def _callback(self, interaction_id: str, token: str, body: dict[str, Any]) -> Response:
        found = self.by_id.get(interaction_id)
        if found is None or found.payload["token"] != token:
            return _error(404, 10062, "Unknown interaction")
        after = time.monotonic() - found.at
        if found.callbacks:
            found.refused.append(40060)
            return _error(400, 40060, "Interaction has already been acknowledged.")
        if after > DEADLINE:
            found.refused.append(10062)
            return _error(404, 10062, "Unknown interaction")
        found.callbacks.append(body | {"_after": after})
        kind, data = body.get("type"), body.get("data") or {}
        message = found.payload["message"]
        resource: dict[str, Any] | None = None
        if kind == 7:
            resource = {"type": 7, "message": self._edit(found, data)}
        elif kind == 4:
            resource = {"type": 4, "message": self._ephemeral(found, data)}
        elif kind != 6:
            return _error(400, 50035, "Invalid Form Body")
        answer = {"interaction": {"id": interaction_id, "type": 3,
                                  "response_message_id": message["id"],
                                  "response_message_loading": False,
                                  "response_message_ephemeral": kind == 4}}  # fmt: skip
        return JSONResponse(answer | ({"resource": resource} if resource else {}))

    def _by_token(self, token: str) -> Interaction | None:
        return next((i for i in self.by_id.values() if i.payload["token"] == token), None)

    def _edit(self, found: Interaction, data: dict[str, Any]) -> dict[str, Any]:
        """The message the button is under, edited as `data` says (what it leaves out
        stays as it was)."""
        message = self._discord.messages[found.payload["message"]["id"]]
        for key in ("content", "components"):
            if key in data:
                message[key] = data[key]
        message["edited_timestamp"] = now()
        self.edits.append(dict(message))
        return message

    def _ephemeral(self, found: Interaction, data: dict[str, Any]) -> dict[str, Any]:
        person = found.payload.get("member", {}).get("user") or found.payload["user"]
        if not int(data.get("flags") or 0) & EPHEMERAL:
            raise AssertionError(f"an answer to a press shown to everyone: {data}")
        shown = {"interaction": found.payload["id"], "user": person["id"],
                 "content": data.get("content", "")}  # fmt: skip
        self.ephemeral.append(shown)
        return {"id": snowflake(), "channel_id": found.payload["channel_id"], "type": 0,
                "content": shown["content"], "flags": EPHEMERAL, "author": {}, "embeds": [],
                "attachments": [], "mentions": [], "mention_roles": [], "pinned": False,
                "tts": False, "timestamp": now(), "edited_timestamp": None,
                "mention_everyone": False, "components": []}  # fmt: skip


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if request.headers.get("content-type", "").startswith("multipart/"):
        form = await request.form()
        return dict(json.loads(str(form["payload_json"])))
    return dict(json.loads(raw)) if raw else {}


def _error(status: int, code: int, message: str) -> JSONResponse:
    return JSONResponse({"message": message, "code": code}, status_code=status)


def permissions(user: str) -> str:
    """The member's resolved permissions in the channel, as Discord sends them with an
    interaction: everyone's (view, send, read history), and Manage Server (1 << 5) for
    a member with the Mods role."""
    bits = 68608 | ((1 << 5) if MODS in ROLES.get(user, []) else 0)
    return str(bits)
