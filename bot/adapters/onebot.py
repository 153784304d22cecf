"""QQ through OneBot v11 (NapCat, Lagrange, go-cqhttp): a reverse WebSocket server.

The OneBot implementation connects to us (universal role: events and action calls share
one socket), one socket per QQ account, told apart by X-Self-ID. Chat ids are
`qq:group:<group_id>` and `qq:private:<user_id>` without the account: a group is one chat
whichever of our accounts sits in it, so its reminders and history stay one. The adapter
remembers which accounts have seen each chat and sends through one of those that is
connected (the one that saw it last); while none is, sends raise SendError and the
reminder engine retries, so a reconnect of the same account resumes delivery.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import itertools
import logging
from collections import OrderedDict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from starlette.routing import BaseRoute, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.bot.adapters import onebot_segments as seg
from groupmate.bot.adapters.base import BotHost, split_text, the_one
from groupmate.bot.adapters.onebot_account import Account, close_quietly
from groupmate.bot.config import is_loopback
from groupmate.bot.messages import IncomingMessage, Reply
from groupmate.storage import Member, OutgoingMessage, SendError, utc_now
from groupmate.storage.vocabulary import ChatType, is_chat_type

if TYPE_CHECKING:
    from groupmate.bot.adapters.onebot_settings import OneBotSettings

log = logging.getLogger(__name__)

PREFIX = CHAT_PREFIXES["onebot"]
# QQ accepts about 4500 characters a message; stay well below so segments and the
# reply quote fit too.
MAX_TEXT = 3000
_KEEP_SENT = 2000  # ids of our own messages remembered per account, for reply_to_bot
_KEEP_SEEN = 1000  # recent messages remembered, to handle one seen by two accounts once
_SAME_WITHIN = 3.0  # seconds
_POLICY_VIOLATION = 1008
_LOOKUP_WAIT = 3.0  # seconds for get_msg: a slow answer must not hold a message long


class OneBotAdapter:
    """The `adapters.onebot` section: a WebSocket route that OneBot clients connect to."""

    name = "onebot"
    chat_prefix = PREFIX

    def __init__(self, settings: OneBotSettings, *, bot_name: str) -> None:
        self.settings = settings
        self.bot_name = bot_name
        token = settings.access_token
        self._token = token.get_secret_value().encode() if token else b""
        self._bot: BotHost | None = None
        self._accounts: dict[str, Account] = {}
        self._gone: dict[str, datetime] = {}  # accounts that were connected: when they left
        self._last_event: dict[str, datetime] = {}
        self._chats: dict[str, OrderedDict[str, None]] = {}  # chat -> accounts, last seen last
        self._names: dict[str, dict[str, str]] = {}  # chat -> QQ number -> display name
        self._sent: dict[str, OrderedDict[str, None]] = {}  # account -> our message ids
        self._seen: OrderedDict[tuple[str, ...], tuple[float, str]] = OrderedDict()
        self._echo = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()

    # --- the adapter contract ---------------------------------------------------------

    async def start(self, bot: BotHost) -> None:
        self._bot = bot
        if not self._token:
            log.warning(
                "onebot: no access_token set; only clients on this machine may connect to %s",
                self.settings.path,
            )

    async def stop(self) -> None:
        self._bot = None
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for account in list(self._accounts.values()):
            account.abandon()
            await close_quietly(account.socket, code=1001)
        self._accounts.clear()

    async def send(self, message: OutgoingMessage) -> str | None:
        segments = [
            seg.render(
                piece,
                message.people,
                message.mentions if i == 0 else (),
                everyone=message.everyone and i == 0,
            )
            for i, piece in enumerate(split_text(message.text, MAX_TEXT))
        ]
        return await self._deliver(message.chat_id, segments, self._account_for(message.chat_id))

    def status(self) -> dict[str, Any]:
        accounts: dict[str, Any] = {}
        for self_id, left in self._gone.items():
            accounts[self_id] = {"connected": False, "disconnected_at": left.isoformat()}
        for self_id, account in self._accounts.items():
            accounts[self_id] = {"connected": True, "since": account.since.isoformat()}
        for self_id, entry in accounts.items():
            last = self._last_event.get(self_id)
            entry["last_event"] = last.isoformat() if last else None
        return {"connected": bool(self._accounts), "path": self.settings.path, "accounts": accounts}

    def routes(self) -> Sequence[BaseRoute]:
        return [
            WebSocketRoute(self.settings.path, self._serve),
            # Last of all routes: any other WebSocket path is a misconfigured client, and
            # the operator should read that in the log rather than guess from a 403.
            WebSocketRoute("/{rest:path}", self._wrong_path),
        ]

    async def find(self, chat_id: str, name: str) -> Member | None:
        """A member by display name, among those seen speaking here and the group's
        member list; a name two people share (cards often are) is no one's."""
        wanted = name.removeprefix("@").casefold()
        seen = [
            Member(f"qq:{qq}", shown)
            for qq, shown in self._names.get(chat_id, {}).items()
            if shown.casefold() == wanted
        ]
        return the_one([*seen, *await self._listed(chat_id, wanted)])

    async def _listed(self, chat_id: str, wanted: str) -> list[Member]:
        """The group's members whose card or nickname is `wanted` (none for a DM, or
        when the implementation won't say)."""
        kind, _, number = chat_id.removeprefix(PREFIX).partition(":")
        if kind != "group" or not number.isdigit():
            return []
        try:
            account = self._account_for(chat_id)
            members = await account.call(
                "get_group_member_list", {"group_id": int(number)}, self._next_echo(), 10.0
            )
        except SendError as exc:
            log.info("onebot: member list of %s unavailable (%s)", chat_id, exc)
            return []
        return [
            Member(f"qq:{member.get('user_id')}", str(shown))
            for member in (members if isinstance(members, list) else [])
            for shown in (member.get("card"), member.get("nickname"))
            if shown and str(shown).casefold() == wanted
        ]

    # --- connections --------------------------------------------------------------------

    async def _wrong_path(self, socket: WebSocket) -> None:
        log.warning(
            "onebot: refused a WebSocket connection to %s: wrong path, the OneBot endpoint is %s",
            socket.url.path,
            self.settings.path,
        )
        await socket.close(code=_POLICY_VIOLATION)

    def _refusal(self, socket: WebSocket) -> str | None:
        """Why this connection may not be served, or None."""
        if not self._token and not is_loopback(socket.client.host if socket.client else ""):
            # Without a token only this machine may act as QQ accounts, as /v1 is open
            # without adapters.webhook.token only on loopback.
            return "not from this machine, and adapters.onebot.access_token is not set"
        if self._token:
            scheme, _, given = socket.headers.get("authorization", "").partition(" ")
            if scheme.lower() not in ("bearer", "token"):
                given = socket.query_params.get("access_token", "")
            if not given:
                return "no access token (send Authorization: Bearer <access_token>)"
            if not hmac.compare_digest(given.encode(), self._token):
                return "wrong access token (it differs from adapters.onebot.access_token)"
        if not socket.headers.get("x-self-id", "").isdigit():
            return "no X-Self-ID header with the QQ number of the account"
        role = socket.headers.get("x-client-role", "Universal")
        if role.lower() != "universal":
            return f"X-Client-Role {role}: only the universal role (one socket) is supported"
        if self._bot is None:
            return "the bot is not running"
        return None

    async def _serve(self, socket: WebSocket) -> None:
        client = f"{socket.client.host}:{socket.client.port}" if socket.client else "?"
        refusal = self._refusal(socket)
        if refusal is not None:
            log.warning("onebot: refused a connection from %s: %s", client, refusal)
            await socket.close(code=_POLICY_VIOLATION)  # before accept: HTTP 403
            return
        await socket.accept()
        self_id = socket.headers["x-self-id"]
        account = Account(self_id, socket)
        previous = self._accounts.get(self_id)
        self._accounts[self_id] = account
        self._gone.pop(self_id, None)
        log.warning("onebot: account %s connected from %s", self_id, client)
        if previous is not None:
            log.warning("onebot: account %s connected again; closing its older socket", self_id)
            previous.abandon()
            await close_quietly(previous.socket)
        try:
            while True:
                frame = await socket.receive_json()
                if isinstance(frame, dict):
                    self._on_frame(account, frame)
        except WebSocketDisconnect as exc:
            log.warning("onebot: account %s disconnected (code %s)", self_id, exc.code)
        except ValueError:
            log.warning("onebot: account %s sent a frame that is not JSON; closing", self_id)
            await close_quietly(socket)
        finally:
            account.abandon()
            if self._accounts.get(self_id) is account:
                del self._accounts[self_id]
                self._gone[self_id] = utc_now()

    def _on_frame(self, account: Account, frame: dict[str, Any]) -> None:
        echo = frame.get("echo")
        if "post_type" not in frame and echo is not None:
            answer = account.pending.get(str(echo))
            if answer is not None and not answer.done():
                answer.set_result(frame)
            return
        self._last_event[account.self_id] = utc_now()
        # Meta events (lifecycle, heartbeat) only keep the status fresh. Messages are
        # handled in tasks: handling sends actions whose answers arrive on this socket.
        if frame.get("post_type") == "message":
            task = asyncio.create_task(self._on_message(account, frame))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    # --- incoming messages --------------------------------------------------------------

    async def _on_message(self, account: Account, event: dict[str, Any]) -> None:
        try:
            message = self._incoming(account, event)
            bot = self._bot
            if message is None or bot is None:
                return
            if message.reply_to_message_id is not None and not message.reply_to_bot:
                to_us = await self._sent_by_us(account, message.reply_to_message_id)
                message = dataclasses.replace(message, reply_to_bot=to_us)

            async def deliver(replies: list[Reply]) -> None:
                for reply in replies:
                    pieces = split_text(reply.text, MAX_TEXT)
                    segments = [[seg.text_segment(piece)] for piece in pieces]
                    if message.message_id is not None:
                        segments[0].insert(0, seg.reply_segment(message.message_id))
                    sent = await self._deliver(reply.chat_id, segments, account)
                    # QQ has no buttons: a reply to the confirmation ("remind me too")
                    # acts on its reminder, so the router learns the confirmation's id.
                    if reply.reminder_id is not None and sent is not None:
                        await bot.posted(reply, sent)

            await bot.handle(message, deliver)
        except SendError as exc:
            log.warning("onebot: a reply was not delivered: %s", exc)
        except Exception:
            log.exception("onebot: handling a message event failed")

    async def _sent_by_us(self, account: Account, message_id: str) -> bool:
        """Whether a message we did not send since our start is ours all the same (a
        reminder sent before a restart, so "snooze 10m" in reply to it still works)."""
        try:
            params = {"message_id": int(message_id)}
            found = await account.call("get_msg", params, self._next_echo(), _LOOKUP_WAIT)
        except (SendError, ValueError):
            return False  # unknown to the implementation, or it has no get_msg
        sender = found.get("sender") if isinstance(found, dict) else None
        return isinstance(sender, dict) and str(sender.get("user_id")) in self._bot_ids(account)

    def _incoming(self, account: Account, event: dict[str, Any]) -> IncomingMessage | None:
        kind = event.get("message_type")
        user_id = str(event.get("user_id", ""))
        if user_id in self._accounts or user_id == account.self_id:
            return None  # our own accounts' messages, echoed back by some implementations
        chat_type: ChatType
        if kind == "group" and str(event.get("group_id", "")).isdigit():
            chat_id, chat_type = f"{PREFIX}group:{event.get('group_id')}", "group"
        elif kind == "private" and user_id.isdigit():
            chat_id, chat_type = f"{PREFIX}private:{user_id}", "private"
        else:
            return None
        segments = seg.segments_of(event.get("message"))
        # Remembered even for a message another account brought first: this account sits
        # in the chat too, and can deliver there when the other is gone.
        self._remember_chat(chat_id, account.self_id)
        if self._seen_before(account.self_id, chat_id, user_id, segments, event.get("time")):
            return None
        sender = event.get("sender") or {}
        name = str(sender.get("card") or sender.get("nickname") or user_id)
        names = self._names.setdefault(chat_id, {})
        names[user_id] = name
        read = seg.read(segments, self._bot_ids(account), lambda qq: names.get(qq, qq))
        sent = self._sent.get(account.self_id, OrderedDict())
        timestamp = event.get("time")
        return IncomingMessage(
            chat_id=chat_id,
            chat_type=chat_type,
            sender_id=f"{PREFIX}{user_id}",
            sender_name=name,
            text=read.text,
            mentions_bot=read.mentions_bot,
            mention_entities=True,
            message_id=str(event["message_id"]) if event.get("message_id") is not None else None,
            timestamp=datetime.fromtimestamp(timestamp, UTC)
            if isinstance(timestamp, int | float)
            else None,
            reply_to_bot=read.reply_to is not None and read.reply_to in sent,
            sender_is_admin=chat_type == "group" and sender.get("role") in ("owner", "admin"),
            mentions=read.mentions,
            reply_to_message_id=read.reply_to,
        )

    def _seen_before(
        self, account: str, chat_id: str, user_id: str, segments: Any, at: Any
    ) -> bool:
        """The same group message reaches every account in the group, with other message
        ids: the same sender, chat and content within seconds through another account is
        that message again. (Through the same account it is the user saying it twice.)"""
        when = float(at) if isinstance(at, int | float) else 0.0
        key = (chat_id, user_id, repr(segments))
        earlier = self._seen.get(key)
        if earlier is not None and earlier[1] != account and abs(when - earlier[0]) <= _SAME_WITHIN:
            return True
        self._seen[key] = (when, account)
        self._seen.move_to_end(key)
        _trim(self._seen, _KEEP_SEEN)
        return False

    def _bot_ids(self, account: Account) -> set[str]:
        # Any of our accounts counts as the bot: the message is handled once, by whichever
        # account's event arrived first, even when it names the other.
        return {account.self_id, *self._accounts, *self._gone}

    # --- sending ------------------------------------------------------------------------

    def _remember_chat(self, chat_id: str, self_id: str) -> None:
        accounts = self._chats.setdefault(chat_id, OrderedDict())
        accounts[self_id] = None
        accounts.move_to_end(self_id)

    def _account_for(self, chat_id: str) -> Account:
        """The connected account that saw the chat last; SendError when none is."""
        seen = self._chats.get(chat_id)
        candidates = list(reversed(seen)) if seen else []
        if not seen and len(self._accounts) == 1:
            # A chat no account has seen since our start (reminders after a restart):
            # with one account there is no choice to make.
            candidates = list(self._accounts)
        for self_id in candidates:
            if self_id in self._accounts:
                return self._accounts[self_id]
        if not self._accounts:
            raise SendError("no OneBot account is connected")
        raise SendError(f"no connected OneBot account has seen chat {chat_id}")

    async def _deliver(
        self, chat_id: str, pieces: list[list[seg.Segment]], account: Account
    ) -> str | None:
        """Send each piece as one message; returns the first one's message id."""
        kind, _, number = chat_id.removeprefix(PREFIX).partition(":")
        if not is_chat_type(kind) or not number.isdigit():
            raise SendError(f"not a QQ chat id: {chat_id}")
        action = "send_group_msg" if kind == "group" else "send_private_msg"
        key = "group_id" if kind == "group" else "user_id"
        first: str | None = None
        for segments in pieces:
            params = {key: int(number), "message": segments}
            data = await account.call(action, params, self._next_echo(), self.settings.timeout)
            found = data.get("message_id") if isinstance(data, dict) else None
            if found is not None:
                sent = self._sent.setdefault(account.self_id, OrderedDict())
                sent[str(found)] = None
                _trim(sent, _KEEP_SENT)
                first = first or str(found)
        return first

    def _next_echo(self) -> str:
        return f"groupmate-{next(self._echo)}"


def _trim(entries: OrderedDict[Any, Any], keep: int) -> None:
    while len(entries) > keep:
        entries.popitem(last=False)
