"""A reminder's buttons on DingTalk: an interactive card (互动卡片) in a group, and the
card's callback that a press makes.

DingTalk's interactive cards are instances of a template built once in its card builder
(docs/platforms/dingtalk.md says how): the template shows the `content` variable as
markdown, and has five buttons with the component ids `done`, `snooze_10m`, `snooze_1h`,
`snooze_tomorrow` and `me_too`, each with a callback action, each shown while its
`<id>_shown` variable is "true", with the text of `<id>_label`, and a `note` text that
each person sees their own of (private data: the answer to their press). An ActionCard
(the robot's other message with buttons) is not used: its buttons only open a URL, which
says nothing DingTalk vouches for about who pressed.

A card goes out by POST /v1.0/card/instances/createAndDeliver with callbackType STREAM:
its presses come down the Stream connection, on the topic /v1.0/card/instances/callback,
as frames of the bot's own authenticated connection (the HTTP mode gets no card
callbacks: in it reminders stay text). A press names the card (`outTrackId`, which the
bot made: its Done button's data, dotted, and a tag), the presser (`userId`, a staff
id), the place (`spaceType` IM_GROUP, `spaceId` the group's openConversationId) and the button
(`content.cardPrivateData.actionIds`). The frame is acknowledged at once; the card is
updated after, by PUT /v1.0/card/instances (the shared data for everyone, the `note` for
the presser alone). See https://open.dingtalk.com/document/orgapp/create-and-deliver-cards
and dingtalk-stream's card_callback.py / card_replier.py.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dingtalk_stream.card_callback import Card_Callback_Router_Topic

from groupmate.bot.presses import ButtonData, PressAction, SnoozePreset
from groupmate.storage import Button

log = logging.getLogger(__name__)

CARD_TOPIC: str = Card_Callback_Router_Topic
NOT_OURS = "This button is no longer in use."
# The template's button component ids, one per button a reminder can have.
ACTION_IDS: dict[tuple[PressAction, SnoozePreset | None], str] = {
    ("done", None): "done",
    ("snooze", "10m"): "snooze_10m",
    ("snooze", "1h"): "snooze_1h",
    ("snooze", "tomorrow"): "snooze_tomorrow",
    ("me_too", None): "me_too",
}
_BY_ID = {action_id: key for key, action_id in ACTION_IDS.items()}


@dataclass(frozen=True, slots=True)
class Card:
    """One card to deliver: its id (outTrackId) and its variables."""

    out_track_id: str
    params: dict[str, str]


@dataclass(frozen=True, slots=True)
class CardPress:
    """A card callback as the adapter reads it."""

    out_track_id: str
    staff_id: str  # the presser, from DingTalk's callback
    conversation: str  # the group's openConversationId, from DingTalk's callback
    action_id: str
    data: ButtonData | None  # None: not one of our cards' buttons


def card_params(text: str, rows: Sequence[Sequence[Button]]) -> dict[str, str] | None:
    """The card variables for `text` with the buttons `rows`; None when a button is not
    one the template has (the message then goes as text)."""
    params = {"content": text, "note": ""}
    for action_id in ACTION_IDS.values():
        params |= {f"{action_id}_shown": "false", f"{action_id}_label": ""}
    for row in rows:
        for button in row:
            data = ButtonData.decode(button.data)
            if data is None:
                return None
            action_id = ACTION_IDS[data.action, data.preset]
            params |= {f"{action_id}_shown": "true", f"{action_id}_label": button.label}
    return params


def card_of(text: str, rows: Sequence[Sequence[Button]], *, tag: str) -> Card | None:
    """The card for a message with buttons, all of one reminder's occurrence; None when
    the buttons can't be a card (the message then goes as text). `tag` tells apart two
    cards of one occurrence (a reminder and a confirmation); the same send tried again
    makes the same card id."""
    found = {ButtonData.decode(b.data) for row in rows for b in row}
    places = {(d.reminder_id, d.occurrence) for d in found if d is not None}
    params = card_params(text, rows)
    if not rows or params is None or len(places) != 1:
        return None
    [(reminder_id, occurrence)] = places
    # The reminder and occurrence as a button's data names them (its Done's), dotted.
    named = ButtonData("done", reminder_id, occurrence).encode().replace(":", ".")
    short = hashlib.sha256(tag.encode()).hexdigest()[:8]  # tells apart one occurrence's cards
    return Card(f"{named}.{short}", params)


def card_press(data: Any) -> CardPress | None:
    """The press a card callback reports; None when it lacks the card, the presser, the
    place or the button, or was made outside a group."""
    if not isinstance(data, dict):
        return None
    track, staff = data.get("outTrackId"), data.get("userId")
    space, space_type = data.get("spaceId"), data.get("spaceType")
    try:
        content = json.loads(str(data.get("content") or "{}"))
        action_ids = content["cardPrivateData"]["actionIds"]
    except (ValueError, KeyError, TypeError):
        return None
    fields = (track, staff, space)
    if not all(isinstance(f, str) and f for f in fields) or space_type != "IM_GROUP":
        return None
    if not isinstance(action_ids, list) or not action_ids or not isinstance(action_ids[0], str):
        return None
    action_id = action_ids[0]
    return CardPress(str(track), str(staff), str(space), action_id, _button(str(track), action_id))


def _button(track: str, action_id: str) -> ButtonData | None:
    """The button a press on card `track` names: the reminder and occurrence from the
    card's id (the bot made it: a Done button's data, dotted, and a tag), the action
    from the button's id."""
    parts = track.split(".")
    named = ButtonData.decode(":".join(parts[:-1])) if len(parts) == 5 else None
    if named is None or action_id not in _BY_ID:
        return None
    action, preset = _BY_ID[action_id]
    return ButtonData(action, named.reminder_id, named.occurrence, preset)
