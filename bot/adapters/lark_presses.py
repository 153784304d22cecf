"""Presses of the buttons on the bot's Lark cards (lark_cards.py has the card and the
callback's shapes): each callback acted on as the person who pressed, and answered
within Lark's 3 seconds with a toast and the card as it now reads."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.bot.adapters.base import BotHost, mention_targets
from groupmate.bot.adapters.lark_api import LarkApi, LarkError
from groupmate.bot.adapters.lark_cards import (
    ACT_WITHIN,
    FAILED,
    NOT_OURS,
    SLOW,
    CardAction,
    callback_answer,
    card,
    card_action,
    card_content,
)
from groupmate.bot.adapters.lark_reactions import LarkReactions
from groupmate.bot.presses import Press, PressOutcome
from groupmate.storage import OutgoingMessage
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)
PREFIX = CHAT_PREFIXES["lark"]


class LarkPresses:
    """Answers card callbacks: `answer(event)` is the callback's response body."""

    def __init__(
        self,
        api: LarkApi,
        places: LarkReactions,
        tasks: set[asyncio.Task[None]],
        *,
        name: Callable[[str, str], Awaitable[str]],
        is_admin: Callable[[str, str], Awaitable[bool]],
    ) -> None:
        self._api = api
        self._places = places  # where each message is, and each chat's kind
        self._tasks = tasks  # the adapter's: stop() lets a slow press finish
        self._name = name  # (chat, open_id) -> the person's name in it
        self._is_admin = is_admin  # (chat, open_id) -> the chat's owner or a manager
        self._bot: BotHost | None = None

    def start(self, bot: BotHost) -> None:
        self._bot = bot

    async def answer(self, event: dict[str, Any]) -> dict[str, Any]:
        """Act on one callback; the response body Lark shows (never raises)."""
        try:
            return await self._answer(event)
        except Exception as exc:
            log.error("lark: a card press was not acted on: %s", safe_error(exc, LarkError))
            log.debug("lark: the failure", exc_info=True)
            return callback_answer(FAILED, None, ok=False)

    async def _answer(self, event: dict[str, Any]) -> dict[str, Any]:
        assert self._bot is not None  # callbacks are taken once started
        action = card_action(event)
        if action is None:
            log.warning("lark: a card callback without presser, chat or message; ignored")
            return {}
        if action.data is None:
            return callback_answer(NOT_OURS, None, ok=False)
        # Who and where (a lookup may ask Lark) count against the deadline too.
        acting = asyncio.ensure_future(self._act(action))
        done, _ = await asyncio.wait({acting}, timeout=ACT_WITHIN)
        if not done:  # Lark stops waiting at 3 s: the card is updated after
            task = asyncio.create_task(self._update_later(acting, action.message_id))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return callback_answer(SLOW, None, ok=True)
        outcome = acting.result()
        update = _card(outcome.update) if outcome.update is not None else None
        return callback_answer(outcome.answer, update, ok=outcome.ok)

    async def _act(self, action: CardAction) -> PressOutcome:
        """The press, as the presser, in the chat the card is in."""
        assert self._bot is not None and action.data is not None
        self._places.remember(action.message_id, action.chat)
        place = await self._places.place(action.message_id)
        chat_type = place[1] if place is not None else "group"
        press = Press(
            chat_id=f"{PREFIX}{action.chat}",
            chat_type=chat_type,
            sender_id=f"{PREFIX}{action.open_id}",
            sender_name=await self._name(action.chat, action.open_id),
            data=action.data,
            press_id=f"lark:{action.event_id}",
            message_id=action.message_id,
            # With the presser's rights, as their message would have: a group's owner or
            # manager may mark someone else's reminder done.
            sender_is_admin=chat_type == "group"
            and await self._is_admin(action.chat, action.open_id),
        )
        return await self._bot.press(press)

    async def _update_later(self, acting: asyncio.Future[PressOutcome], message_id: str) -> None:
        try:
            outcome = await acting
            if outcome.update is not None:
                update = outcome.update
                people = mention_targets(update.people, PREFIX)
                content = card_content(update.text, people, update.buttons, everyone=False)
                await self._api.update_card(message_id, content)
        except Exception as exc:
            log.error("lark: a card was not updated: %s", safe_error(exc, LarkError))
            log.debug("lark: the failure", exc_info=True)


def _card(update: OutgoingMessage) -> dict[str, Any]:
    """The card as it now reads. No @all: an update notifies nobody anew."""
    return card(update.text, mention_targets(update.people, PREFIX), update.buttons, everyone=False)
