"""Reminders with buttons as DingTalk interactive cards, and the presses on them
(dingtalk_cards.py has the card's shape and the callback's)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from dingtalk_stream import AckMessage, CallbackHandler

from groupmate.bot.adapters.base import BotHost, mention_targets
from groupmate.bot.adapters.dingtalk_api import DingTalkError, OpenApi
from groupmate.bot.adapters.dingtalk_cards import NOT_OURS, Card, card_of, card_params, card_press
from groupmate.bot.adapters.dingtalk_people import PREFIX, People
from groupmate.bot.presses import Press
from groupmate.storage import Member, OutgoingMessage
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)


class CardCallbacks(CallbackHandler):  # type: ignore[misc]  # dingtalk_stream has no hints
    """The card topic's handler: hands on the payload with its frame's messageId, and
    acknowledges at once. DingTalk sends a frame it saw no ack for again with the same
    id; a new press is a new frame, though its card, presser and button are the same (a
    second 👍 Remind me too takes the person off)."""

    def __init__(self, accept: Callable[[Any, str | None], None]) -> None:
        super().__init__()
        self._accept = accept

    async def process(self, message: Any) -> tuple[int, str]:
        self._accept(message.data, message.headers.message_id)
        return AckMessage.STATUS_OK, "OK"


class DingTalkCards:
    """Sends cards (`send`) and acts on their presses (`accept`, in the adapter's tasks)."""

    def __init__(
        self, api: OpenApi, people: People, template: str, bot: Callable[[], BotHost | None]
    ) -> None:
        self._api = api
        self._people = people
        self._template = template
        self._bot = bot  # the adapter's, once started

    async def send(self, conversation: str, message: OutgoingMessage) -> bool:
        """`message` as a card in its group; False when it can't be one (no buttons, a
        single chat, buttons the template lacks): the caller sends it as text."""
        key = message.idempotency_key or message.text
        card = card_of(message.text, message.buttons, tag=f"{conversation}:{key}")
        if card is None or await self._people.single_chat_person(conversation) is not None:
            return False
        await self._api.card_send(self._body(conversation, card, message), wait=False)
        return True

    def _body(self, conversation: str, card: Card, message: OutgoingMessage) -> dict[str, Any]:
        deliver: dict[str, Any] = {"robotCode": self._api.robot_code}
        at = _at_users(message.people)
        if message.everyone:
            at["@ALL"] = "@ALL"
        if at:
            deliver["atUserIds"] = at  # the card's @s notify them
        return {
            "cardTemplateId": self._template,
            "outTrackId": card.out_track_id,
            "cardData": {"cardParamMap": card.params},
            "callbackType": "STREAM",
            "openSpaceId": f"dtv1.card//IM_GROUP.{conversation}",
            "imGroupOpenSpaceModel": {"supportForward": False},  # a forward's presses: no
            "imGroupOpenDeliverModel": deliver,
            "userIdType": 1,  # staff ids
        }

    async def accept(self, data: Any, frame_id: str | None = None) -> None:
        """One card callback (in the Stream frame `frame_id`): acted on as the presser,
        the card updated (never raises)."""
        try:
            await self._press(data, frame_id)
        except Exception as exc:
            log.error("dingtalk: a card press was not acted on: %s", safe_error(exc, DingTalkError))
            log.debug("dingtalk: the failure", exc_info=True)

    async def _press(self, data: Any, frame_id: str | None) -> None:
        bot = self._bot()
        assert bot is not None  # callbacks come once started
        found = card_press(data)
        if found is None:
            log.warning("dingtalk: a card callback without card, presser or group; ignored")
            return
        if found.data is None:
            await self._update(found.out_track_id, None, found.staff_id, NOT_OURS)
            return
        sender = f"{PREFIX}{found.staff_id}"
        known = (await self._people.members(found.conversation)).get(sender)
        press = Press(
            chat_id=f"{PREFIX}{found.conversation}",
            chat_type="group",  # cards go to groups only
            sender_id=sender,
            sender_name=known.name if known is not None else found.staff_id,
            data=found.data,
            # The frame names the press; without one, the card, presser and button do
            # (then a second press of the same button is taken for a replay).
            press_id=f"dingtalk:{frame_id}"
            if frame_id
            else f"dingtalk:{found.out_track_id}:{found.staff_id}:{found.action_id}",
        )
        outcome = await bot.press(press)
        update = outcome.update
        params = None if update is None else card_params(update.text, update.buttons)
        if update is not None and params is None:  # buttons the template lacks: none left
            params = card_params(update.text, ())
        await self._update(found.out_track_id, params, found.staff_id, outcome.answer)

    async def _update(
        self, track: str, params: dict[str, str] | None, staff_id: str, note: str
    ) -> None:
        """The card's shared variables (None: as they are) and the presser's own note."""
        body: dict[str, Any] = {
            "outTrackId": track,
            "privateData": {staff_id: {"cardParamMap": {"note": note}}},
            "cardUpdateOptions": {"updateCardDataByKey": True, "updatePrivateDataByKey": True},
            "userIdType": 1,
        }
        if params is not None:
            body["cardData"] = {"cardParamMap": params}
        await self._api.card_update(body)


def _at_users(people: Sequence[Member]) -> dict[str, str]:
    """staff id -> name, for the card's @s (people outside the org have no staff id)."""
    names = {p.user_id.removeprefix(PREFIX): p.name for p in people}
    ids = mention_targets(people, PREFIX)
    return {uid: names.get(uid, uid) for uid in ids.values() if not uid.startswith("$:")}
