"""A OneBot v11 implementation as the bot meets it (NapCat, Lagrange): it connects to the
bot's reverse WebSocket in the universal role, posts spec-shaped events and answers the
bot's actions with spec-shaped responses, numbering the messages it "sends"."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

_message_ids = itertools.count(5001)


class OneBotClient:
    def __init__(self, url: str, self_id: int, token: str | None, *, query: bool = False) -> None:
        self.url = url
        self.self_id = self_id
        self.token = token
        self.query = query  # the token as ?access_token= instead of the header
        self.actions: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.members: list[dict[str, Any]] = []  # get_group_member_list's answer
        self.sent: set[int] = set()  # ids of the messages the bot sent (QQ keeps them)
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None

    async def connect(self) -> OneBotClient:
        headers = {"X-Self-ID": str(self.self_id), "X-Client-Role": "Universal"}
        url = self.url
        if self.token is not None and self.query:
            url += f"?access_token={self.token}"
        elif self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        self._socket = await connect(url, additional_headers=headers)
        self._reader = asyncio.create_task(self._answer_actions(self._socket))
        await self.post({"post_type": "meta_event", "meta_event_type": "lifecycle",
                         "sub_type": "connect"})  # fmt: skip
        return self

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            await self._reader
        self._socket = self._reader = None

    async def post(self, event: dict[str, Any]) -> None:
        assert self._socket is not None
        await self._socket.send(json.dumps({"time": int(time.time()), "self_id": self.self_id,
                                            **event}))  # fmt: skip

    async def group_message(
        self,
        group_id: int,
        user_id: int,
        message: list[dict[str, Any]] | str,
        *,
        nickname: str = "Alice",
        card: str = "",
        role: str = "member",
    ) -> int:
        """Posts a group message event; returns its message_id."""
        sender = {"user_id": user_id, "nickname": nickname, "card": card, "role": role}
        return await self._message("group", user_id, message, sender, group_id=group_id)

    async def private_message(self, user_id: int, message: list[dict[str, Any]] | str) -> int:
        sender = {"user_id": user_id, "nickname": "Carol"}
        return await self._message("private", user_id, message, sender, sub_type="friend")

    async def _message(
        self,
        kind: str,
        user_id: int,
        message: list[dict[str, Any]] | str,
        sender: dict[str, Any],
        **fields: Any,
    ) -> int:
        message_id = next(_message_ids)
        event = {
            "post_type": "message",
            "message_type": kind,
            "sub_type": "normal",
            "message_id": message_id,
            "user_id": user_id,
            "message": message,
            "raw_message": message if isinstance(message, str) else "",
            "font": 0,
            "sender": sender,
        }
        await self.post({**event, **fields})
        return message_id

    async def next_action(self, within: float = 5.0) -> dict[str, Any]:
        """The next message the bot sent (already answered); lookups are not recorded."""
        async with asyncio.timeout(within):
            return await self.actions.get()

    async def _answer_actions(self, socket: ClientConnection) -> None:
        with contextlib.suppress(ConnectionClosed):  # the bot stopped, or a test cut it
            await self._answer(socket)

    async def _answer(self, socket: ClientConnection) -> None:
        async for frame in socket:
            call = json.loads(frame)
            answer: dict[str, Any] = {"status": "ok", "retcode": 0, "data": None}
            answer["echo"] = call["echo"]
            if call["action"] in ("send_group_msg", "send_private_msg", "send_msg"):
                answer["data"] = {"message_id": next(_message_ids)}
                call["message_id"] = answer["data"]["message_id"]
                self.sent.add(call["message_id"])
                await self.actions.put(call)
            elif call["action"] == "get_group_member_list":
                answer["data"] = self.members
            elif call["action"] == "get_msg" and call["params"]["message_id"] in self.sent:
                sender = {"user_id": self.self_id, "nickname": "groupmate"}
                answer["data"] = {"message_id": call["params"]["message_id"], "sender": sender}
            else:  # as NapCat answers for a message it does not know
                answer.update(status="failed", retcode=1200, message="消息不存在")
            await socket.send(json.dumps(answer))


def at(qq: int | str) -> dict[str, Any]:
    return {"type": "at", "data": {"qq": str(qq)}}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "data": {"text": value}}


def reply(message_id: int) -> dict[str, Any]:
    return {"type": "reply", "data": {"id": str(message_id)}}
