"""Lark/Feishu reactions (im.message.reaction.created_v1 / deleted_v1, by either event
mode), reported to the bot for its digests, for the Lark adapter.

Three things make them more than a message event:

- Their events name the message but not its chat. The chat is remembered from the
  message's own event (and from the bot's own sends), else asked of Lark: GET the
  message, then the chat for its kind.
- A reaction must be reported after its message was handled: before that the message
  may not be logged yet, and a reaction to a message the log lacks counts for nothing.
  So each message's work (its answer, then each reaction to it) runs one after another,
  in a task of its own; other messages' work is not held up.
- Lark doesn't promise to push events in order (nor only once), so each person's emoji
  on a message follows its newest `action_time`, not arrival: an older one is dropped.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

from groupmate.bot.adapters.base import BotHost
from groupmate.bot.adapters.lark_api import LarkApi, LarkError
from groupmate.bot.messages import IncomingReaction
from groupmate.function_calls import ChatType

log = logging.getLogger("groupmate.bot.adapters.lark")

REACTION_EVENTS = {  # event type -> whether it adds the reaction (else takes it back)
    "im.message.reaction.created_v1": True,
    "im.message.reaction.deleted_v1": False,
}
_PLACES_REMEMBERED = 10_000  # message id -> its chat, for reactions (theirs don't say)
_ACTIONS_REMEMBERED = 10_000  # (message, person, emoji) -> the newest action_time seen


class LarkReactions:
    """Where Lark's messages are, each message's work in order, and its reactions
    reported to the bot (the adapter's `tasks`, which its stop() finishes, hold the
    work; `me` gives the bot's open_id once known; `describe` makes an error fit the log).
    """

    def __init__(
        self,
        api: LarkApi,
        tasks: set[asyncio.Task[None]],
        *,
        me: Callable[[], str],
        describe: Callable[[Exception], str],
    ) -> None:
        self._api = api
        self._tasks = tasks
        self._me = me
        self._describe = describe
        self._bot: BotHost | None = None
        self._places: OrderedDict[str, str] = OrderedDict()  # message id -> chat (oc_…)
        self._kinds: dict[str, ChatType] = {}  # chat -> its kind: a chat never changes it
        self._actions: OrderedDict[tuple[str, str, str], int] = OrderedDict()
        # Each message's newest work (its answer, then each reaction to it, in turn).
        self._tails: dict[str, asyncio.Task[None]] = {}

    def start(self, bot: BotHost) -> None:
        self._bot = bot

    def run(self, work: Coroutine[Any, Any, None], message_id: str | None) -> None:
        """`work` in a task (stop() finishes it), the newest for `message_id` if given."""
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if message_id is None:
            return
        self._tails[message_id] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._tails.get(message_id) is done:
                del self._tails[message_id]  # nothing waits on it: keep no task

        task.add_done_callback(forget)

    def remember(self, message_id: str, chat: Any, chat_type: Any = None) -> None:
        """The message is in `chat` (oc_…); `chat_type` as its event has it, if known."""
        if not isinstance(chat, str) or not chat:
            return
        self._places[message_id] = chat
        self._places.move_to_end(message_id)
        while len(self._places) > _PLACES_REMEMBERED:
            self._places.popitem(last=False)
        if isinstance(chat_type, str) and chat_type:  # as the adapter tells them apart
            self._kinds[chat] = "private" if chat_type == "p2p" else "group"

    def accept(self, event: dict[str, Any], *, added: bool) -> None:
        """A reaction event: reported in a task, after the earlier work on its message."""
        if event.get("operator_type") != "user":
            return  # an app's: this bot's own (never reported), or another bot's
        message_id = event.get("message_id")
        emoji = _inner(event, "reaction_type", "emoji_type")
        open_id = _inner(event, "user_id", "open_id")
        if not all(isinstance(v, str) and v for v in (message_id, emoji, open_id)):
            log.warning("lark: a reaction event without message, emoji or person; ignored")
            return
        if open_id == self._me():
            return
        at = _number(event.get("action_time"))
        key = (str(message_id), str(open_id), str(emoji))
        if at is not None:
            newest = self._actions.get(key)
            if newest is not None and at < newest:
                return  # older than one already reported (pushed late or again)
            self._actions[key] = at
            self._actions.move_to_end(key)
            while len(self._actions) > _ACTIONS_REMEMBERED:
                self._actions.popitem(last=False)
        previous = self._tails.get(key[0])
        self.run(self._react(*key, added, at, previous), key[0])

    async def _react(
        self,
        message_id: str,
        open_id: str,
        emoji: str,
        added: bool,
        at: int | None,
        previous: asyncio.Task[None] | None,
    ) -> None:
        assert self._bot is not None
        if previous is not None:
            await asyncio.wait([previous])
        try:
            place = await self.place(message_id)
            if place is None:
                return
            chat, kind = place
            reaction = IncomingReaction(
                chat_id=f"lk:{chat}",
                chat_type=kind,
                sender_id=f"lk:{open_id}",
                message_id=message_id,  # om_…, as IncomingMessage.message_id
                emoji=emoji,  # Lark's name for it: "THUMBSUP"
                added=added,
                timestamp=lark_time(at),
            )
            await self._bot.react(reaction)
        except Exception as exc:
            log.error("lark: reporting a reaction failed: %s", self._describe(exc))
            log.debug("lark: the failure", exc_info=True)

    async def place(self, message_id: str) -> tuple[str, ChatType] | None:
        """The chat a message is in and the chat's kind: remembered from the message's
        event, else asked of Lark (after a restart, or a message the bot never got)."""
        chat = self._places.get(message_id)
        if chat is None:
            try:
                found = (await self._api.message(message_id)).get("chat_id")
            except LarkError as exc:
                log.warning("lark: a reaction's message: %s", exc)
                return None
            if not isinstance(found, str) or not found:
                return None
            chat = found
            self.remember(message_id, chat)
        kind = self._kinds.get(chat)
        if kind is None:
            try:
                mode = (await self._api.chat(chat)).get("chat_mode")
            except LarkError as exc:
                # Unknown: a group, so the groups the config allows decide (a DM the log
                # has is counted unless the config limits groups; a group is never let
                # past that limit as a DM). Asked again next time.
                log.warning("lark: a reaction's chat: %s", exc)
                return chat, "group"
            kind = "private" if mode == "p2p" else "group"
            self._kinds[chat] = kind
        return chat, kind


def lark_time(milliseconds: Any) -> datetime | None:
    """Lark's millisecond time (1700000000000, or as text) as a datetime, or None."""
    try:
        return datetime.fromtimestamp(int(milliseconds) / 1000, UTC)
    except (TypeError, ValueError):
        return None


def _inner(event: dict[str, Any], outer: str, key: str) -> Any:
    """`event[outer][key]`, or None where either is missing or not an object."""
    found = event.get(outer)
    return found.get(key) if isinstance(found, dict) else None


def _number(text: Any) -> int | None:
    """Lark's millisecond time ("1700000000000"), or None."""
    try:
        return int(text)
    except (TypeError, ValueError):
        return None
