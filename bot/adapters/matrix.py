"""Matrix: /sync long polling as the bot's own account, replies and reminders sent with
transaction ids, the sync position kept in the database.

Rooms are answered concurrently, each room in order, while syncing goes on: a slow
answer in one room holds up neither the others nor the next sync. Restart semantics: a
batch's since-token is saved only once it and every batch before it were handled, so a
crash replays only unfinished batches, and the chat log drops messages it has seen (by
event id) or resends the logged answer of one it answered but had not sent. Replies and
reminders use transaction ids derived from what they answer, so the homeserver drops a
repeat instead of posting it twice. On the very first start the
initial sync only provides a token: the bot never answers a room's old history.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from groupmate.bot.adapters.base import BotHost, Link, iso, the_one
from groupmate.bot.adapters.matrix_client import (
    MatrixClient,
    MatrixError,
    RoomInfo,
    Unreachable,
    localpart,
)
from groupmate.bot.adapters.matrix_format import (
    PREFIX,
    is_edit,
    mentioned_users,
    names_any,
    plain_body,
    reaction_of,
    render,
    reply_target,
    room_kind,
    strip_leading_name,
    thread_root,
    transaction_id,
    wire_id,
)
from groupmate.bot.adapters.matrix_login import log_in
from groupmate.bot.adapters.matrix_presses import Presses
from groupmate.bot.adapters.matrix_sync import FIRST_FILTER, SyncReader
from groupmate.bot.adapters.ordered import OrderedWork
from groupmate.bot.messages import IncomingMessage, IncomingReaction, Reply
from groupmate.storage import Member, OutgoingMessage, SendError, utc_now
from groupmate.storage.adapter_state import load_state, save_state

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from groupmate.bot.adapters.matrix_settings import MatrixSettings
    from groupmate.storage import Database

log = logging.getLogger(__name__)

SYNC_TIMEOUT_MS = 30_000
_BACKOFF_MAX = 60.0
ADMIN_POWER = 50
ENCRYPTED_NOTICE = (
    "This room is end-to-end encrypted and I can't read encrypted messages. "
    "Please talk to me in an unencrypted room."
)
_MAX_BATCHES_AHEAD = 20  # synced but unhandled batches before syncing waits
_DRAIN_TIMEOUT = 10.0  # stop() waits this long for answers in flight
_ANSWER_ATTEMPTS = 7  # backing off 1 s to 32 s: outlasts a homeserver restart


class MatrixAdapter:
    name = "matrix"
    chat_prefix = PREFIX

    def __init__(self, settings: MatrixSettings, *, bot_name: str) -> None:
        self.settings = settings
        self.bot_name = bot_name
        self.user_id = settings.user_id
        self._client = MatrixClient(settings.homeserver, settings.user_id)
        self._bot: BotHost | None = None
        self._database: Database | None = None
        self._task: asyncio.Task[None] | None = None
        self._rooms: dict[str, RoomInfo] = {}
        self._sent: deque[str] = deque(maxlen=500)  # our recent event ids: replies to us
        self._since: str | None = None
        # Rooms answered concurrently, each in order; says which since-token is safe.
        self._work: OrderedWork[str, dict[str, Any]] = OrderedWork(self._answer)
        self._logged_in = False
        self._link = Link()
        self._sync = SyncReader(
            self._client, settings, self._rooms, self._link, self._encrypted_notice
        )
        self._presses: Presses | None = None  # with the database, at start

    # -- the adapter contract -------------------------------------------------------

    async def start(self, bot: BotHost) -> None:
        if bot.database is None:
            raise RuntimeError("the Matrix adapter needs the bot's database")
        self._bot = bot
        self._database = bot.database
        self._presses = Presses(
            self._send, self._client, self.settings.msgtype, bot.database, self._key("me-too")
        )
        # Logging in and syncing run in the task, with backoff: a homeserver that is
        # down at start delays Matrix, not the rest of the bot.
        self._task = asyncio.create_task(self._run(), name="matrix-sync")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None
        # Answers in flight may finish, briefly; what did not is replayed at the next start.
        await self._work.drain(_DRAIN_TIMEOUT)
        await self._work.cancel()
        if self._database is not None:
            try:
                await self._save_progress(wait=False)
            except Exception as exc:
                log.warning("matrix: saving the sync position failed: %r", exc)
        await self._client.aclose()

    async def send(self, message: OutgoingMessage) -> str | None:
        key = message.idempotency_key
        content = render(
            message.text,
            msgtype=self.settings.msgtype,
            people=message.people,
            mentions=message.mentions,
            everyone=message.everyone,
        )
        txn = transaction_id(key) if key else uuid.uuid4().hex
        room_id = wire_id(message.chat_id)
        event_id = await self._send(room_id, content, txn)
        await self._acting.seed(room_id, event_id, message.buttons)
        return event_id

    def status(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "connected": self._link.since is not None,
            "connected_since": iso(self._link.since),
            "last_event_at": iso(self._link.last_event),
            "last_error": self._link.last_error,
        }

    def routes(self) -> Sequence[BaseRoute]:
        return ()

    async def find(self, chat_id: str, name: str) -> Member | None:
        """A room member by display name, localpart or full user id."""
        wanted = name.removeprefix("@").casefold()
        try:
            info = await self._room(wire_id(chat_id))
        except MatrixError as exc:
            log.warning("matrix: members of %s unavailable: %s", chat_id, exc)
            return None
        # A user id or localpart is one person's; a display name may be several people's.
        for user, shown in info.members.items():
            if wanted in (localpart(user).casefold(), user[1:].casefold()):
                return Member(PREFIX + user, shown)
        return the_one(
            Member(PREFIX + user, shown)
            for user, shown in info.members.items()
            if shown.casefold() == wanted
        )

    # -- connection -----------------------------------------------------------------

    async def _run(self) -> None:
        backoff = 1.0
        while True:
            try:
                if not self._logged_in:
                    await log_in(self._client, self.settings, self._db, self._key("login"))
                    self._logged_in = True
                if self._since is None:
                    self._since = await self._first_token()
                data = await self._client.sync(self._since, SYNC_TIMEOUT_MS, self._sync.filter())
                # Connected as soon as a sync answers, before its events are handled: a
                # status read meanwhile must not say otherwise.
                if self._link.since is None:
                    self._link.since = utc_now()
                    log.info("matrix: connected as %s", self.user_id)
                handling = await self._sync.events(data, self._since)
                self._since = str(data.next_batch)
                self._work.add(self._since, handling)
                await self._save_progress(wait=len(self._work) > _MAX_BATCHES_AHEAD)
                self._link.last_error = None
                backoff = 1.0
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if isinstance(exc, MatrixError) and exc.errcode == "M_UNKNOWN_TOKEN":
                    self._logged_in = False  # log in again (with the password, if any)
                self._link.since = None
                self._link.last_error = str(exc) if isinstance(exc, MatrixError) else repr(exc)
                log.warning("matrix: sync failed (%s); retrying in %.0fs", exc, backoff)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)

    @property
    def _acting(self) -> Presses:
        assert self._presses is not None, "start() first"
        return self._presses

    @property
    def _db(self) -> Database:
        assert self._database is not None, "start() first"
        return self._database

    def _key(self, what: str) -> str:
        return f"matrix:{self.user_id}:{what}"

    async def _first_token(self) -> str:
        stored = await load_state(self._db, self._key("since"))
        if stored:
            return stored
        data = await self._client.sync(None, 0, FIRST_FILTER)
        await self._sync.invites(data)
        token = str(data.next_batch)
        await save_state(self._db, self._key("since"), token)
        log.info("matrix: first start; earlier room history is not answered")
        return token

    # -- incoming -------------------------------------------------------------------

    async def _save_progress(self, *, wait: bool) -> None:
        token = await self._work.checkpoint(wait=wait)
        if token is not None:
            await save_state(self._db, self._key("since"), token)

    async def _encrypted_notice(self, room_id: str) -> None:
        """Once per room: we cannot read it, and silence would look like a dead bot."""
        key = self._key(f"encrypted:{room_id}")
        if await load_state(self._db, key):
            return
        log.warning("matrix: room %s is encrypted; its messages cannot be read", room_id)
        content = {"msgtype": "m.notice", "body": ENCRYPTED_NOTICE}
        try:
            await self._send(room_id, content, transaction_id(key))
        except SendError as exc:
            log.warning("matrix: %s", exc)
            return
        await save_state(self._db, key, "noticed")

    async def _answer(self, room_id: Hashable, event: dict[str, Any]) -> None:
        """Answer one event, through a homeserver restart: a failed attempt is repeated
        whole, and the router then resends the answer it logged instead of deciding a
        new one; the reply's transaction id keeps the homeserver from posting it twice."""
        backoff = 1.0
        for attempt in range(_ANSWER_ATTEMPTS):
            try:
                await self._answer_once(str(room_id), event)
                return
            except (MatrixError, SendError) as exc:
                transient = (
                    exc.transient if isinstance(exc, MatrixError) else isinstance(exc, Unreachable)
                )
                retry = transient and attempt < _ANSWER_ATTEMPTS - 1
                log.warning(
                    "matrix: answering %s in %s failed: %s%s",
                    event.get("event_id"),
                    room_id,
                    exc,
                    f"; retrying in {backoff:.0f}s" if retry else "",
                )
                if not retry:
                    return
                await asyncio.sleep(backoff)
                backoff *= 2
            except Exception:
                log.exception("matrix: answering %s in %s failed", event.get("event_id"), room_id)
                return

    async def _answer_once(self, room_id: str, event: dict[str, Any]) -> None:
        bot = self._bot
        assert bot is not None
        if event.get("type") != "m.room.message":
            reaction = await self._reaction(room_id, event)
            if reaction is not None:
                reaction = await self._acting.taken_back(reaction)
                outcome = await bot.react(reaction)
                await self._acting.acted(reaction, outcome)
                await self._acting.show(room_id, reaction, outcome)
            return
        message = await self._incoming(room_id, event)
        if message is None:
            return
        thread = thread_root(event.get("content", {}))  # answered where it was asked

        async def deliver(replies: list[Reply]) -> None:
            info = await self._room(room_id)
            for index, reply in enumerate(replies):
                people = [Member(u, info.members.get(wire_id(u), "")) for u in reply.mentions]
                content = render(
                    reply.text,
                    msgtype=self.settings.msgtype,
                    people=people,
                    mentions=reply.mentions,
                    in_reply_to=event["event_id"],
                    thread=thread,
                )
                # Derived from the event answered: a resent answer (a retry, a replayed
                # batch) is dropped by the homeserver instead of posted twice.
                txn = transaction_id(f"reply:{event['event_id']}:{index}")
                sent = await self._send(room_id, content, txn)
                await self._acting.seed(room_id, sent, reply.buttons)
                if reply.reminder_id is not None:  # a 👍 on the confirmation: "me too"
                    await bot.posted(reply, sent)

        await bot.handle(message, deliver)

    async def _incoming(self, room_id: str, event: dict[str, Any]) -> IncomingMessage | None:
        content = event.get("content", {})
        # Notices are bots talking (answering them could loop); edits were answered before.
        if content.get("msgtype") not in ("m.text", "m.emote") or is_edit(content):
            return None
        info = await self._room(room_id)
        sender = str(event["sender"])
        own_names = [info.members.get(self.user_id, ""), localpart(self.user_id), self.bot_name]
        text, named = strip_leading_name(plain_body(content), own_names)
        users = mentioned_users(content)
        reply_to = reply_target(content)
        # In a thread, without a reply the sender picked: the thread's first event.
        root = thread_root(content) if reply_to is None else None
        about = reply_to or root
        return IncomingMessage(
            chat_id=PREFIX + room_id,
            chat_type=room_kind(len(info.members)),
            sender_id=PREFIX + sender,
            sender_name=info.members.get(sender) or localpart(sender),
            text=text,
            mentions_bot=named or self.user_id in users or names_any(text, own_names),
            message_id=str(event["event_id"]),
            timestamp=datetime.fromtimestamp(int(event["origin_server_ts"]) / 1000, UTC),
            reply_to_bot=about is not None and await self._is_ours(room_id, about),
            sender_is_admin=info.power_of(sender) >= ADMIN_POWER,
            mentions=tuple(
                Member(PREFIX + u, info.members.get(u) or localpart(u))
                for u in users
                if u != self.user_id
            ),
            reply_to_message_id=about,
            in_thread=root is not None,
            one_at_a_time=True,  # OrderedWork: a room's events in order
        )

    async def _reaction(self, room_id: str, event: dict[str, Any]) -> IncomingReaction | None:
        info = await self._room(room_id)
        found = reaction_of(event, PREFIX + room_id, room_kind(len(info.members)))
        if found is None:
            return None
        sender = wire_id(found.sender_id)
        name = info.members.get(sender) or localpart(sender)
        return replace(
            found, sender_name=name, sender_is_admin=info.power_of(sender) >= ADMIN_POWER
        )

    async def _is_ours(self, room_id: str, event_id: str) -> bool:
        if event_id in self._sent:
            return True
        try:
            return (await self._client.event(room_id, event_id)).get("sender") == self.user_id
        except MatrixError:
            return False

    async def _room(self, room_id: str) -> RoomInfo:
        info = self._rooms.get(room_id)
        if info is None:
            info = await self._client.room_info(room_id)
            self._rooms[room_id] = info
        return info

    # -- outgoing -------------------------------------------------------------------

    async def _send(
        self, room_id: str, content: dict[str, Any], txn: str, event_type: str = "m.room.message"
    ) -> str:
        if not self._logged_in:
            raise SendError("matrix: not logged in yet")
        try:
            event_id = await self._client.send(room_id, content, txn, event_type)
        except MatrixError as exc:
            error = Unreachable if exc.transient else SendError
            raise error(f"matrix: sending to {room_id} failed: {exc}") from None
        self._sent.append(event_id)
        return event_id
