"""A reminder's buttons on Lark/Feishu: an interactive card on sends, and the card's
callback (`card.action.trigger`) that a press makes.

The card is Lark's message card JSON (msg_type "interactive"): the text as a `lark_md`
block, each row of buttons an `action` block, each button's `value` `{"gm": <ButtonData>}`
(Lark hands the value back as it was). `update_multi` makes it one shared card, so an
update shows to everyone in the chat, not only to the presser.

Lark sends the callback (schema 2.0, event_type "card.action.trigger") to the request
URL, sealed and signed as its events are (lark_events.open_webhook checks it the same
way), or down the long connection. It waits 3 seconds for the answer: a toast for the
presser and, in place of the card, the card as it now reads. A press that takes longer is
answered with a toast saying so, and the card is updated through the API after
(PATCH /open-apis/im/v1/messages/:message_id). The callback's `event_id` is the press's
id: a callback Lark pushes again (no answer in time) carries the same one, and acts once.
See https://open.larksuite.com/document/uAjLw4CM/ukzMukzMukzM/feishu-cards/card-callback-communication.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groupmate.bot.adapters.base import mention_pieces
from groupmate.bot.adapters.lark_events import render_text
from groupmate.bot.presses import ButtonData
from groupmate.storage import Button

CARD_EVENT = "card.action.trigger"
VALUE_KEY = "gm"  # the key of a button's value that holds its ButtonData
ACT_WITHIN = 2.5  # seconds a press may take before the callback is answered (Lark: 3)
SLOW = "Working on it: the card updates in a moment."
NOT_OURS = "This button is no longer in use."
FAILED = "That didn't work. Please try again in a moment."
# Markdown's own characters, and the start of a tag, written as entities: the reminder's
# words show as typed, and only the bot's own <at> tags notify anyone.
_MARKDOWN = re.compile(r"[&<>*_~`\[\]\\]")
_BUTTON_TYPES = {"done": "primary", "me_too": "primary"}


@dataclass(frozen=True, slots=True)
class CardAction:
    """A card callback as the adapter reads it: who pressed, where, and the button."""

    event_id: str
    open_id: str  # the presser (operator), from Lark's event
    chat: str  # oc_…, the chat the card is in (the callback's context)
    message_id: str  # om_…, the card's message
    data: ButtonData | None  # None: not one of our buttons


def card_content(
    text: str, people: Mapping[str, str], rows: Sequence[Sequence[Button]], *, everyone: bool
) -> str:
    """The content of an "interactive" message: `text` (each "@name" in `people`, name ->
    open_id, a mention; with `everyone`, @all first) and the buttons under it."""
    return json.dumps(card(text, people, rows, everyone=everyone), ensure_ascii=False)


def card(
    text: str, people: Mapping[str, str], rows: Sequence[Sequence[Button]], *, everyone: bool
) -> dict[str, Any]:
    markdown = ("<at id=all></at> " if everyone else "") + "".join(
        f"<at id={people[piece]}></at>" if mention else _escape(piece)
        for piece, mention in mention_pieces(text, people)
    )
    elements: list[dict[str, Any]] = [
        {"tag": "div", "text": {"tag": "lark_md", "content": markdown}}
    ]
    for row in rows:
        elements.append({"tag": "action", "actions": [_button(button) for button in row]})
    return {"config": {"wide_screen_mode": True, "update_multi": True}, "elements": elements}


def _button(button: Button) -> dict[str, Any]:
    data = ButtonData.decode(button.data)
    return {
        "tag": "button",
        "text": {"tag": "plain_text", "content": button.label},
        "type": _BUTTON_TYPES.get(data.action if data else "", "default"),
        "value": {VALUE_KEY: button.data},
    }


def _escape(text: str) -> str:
    return _MARKDOWN.sub(lambda found: f"&#{ord(found.group())};", text)


def card_action(event: Mapping[str, Any]) -> CardAction | None:
    """The press a `card.action.trigger` callback reports; None when it lacks the
    presser, the chat or the message (not a press on a card in a chat)."""
    header, body = event.get("header"), event.get("event")
    if not isinstance(header, dict) or not isinstance(body, dict):
        return None
    operator, context = body.get("operator"), body.get("context")
    action = body.get("action")
    open_id = operator.get("open_id") if isinstance(operator, dict) else None
    chat = context.get("open_chat_id") if isinstance(context, dict) else None
    message_id = context.get("open_message_id") if isinstance(context, dict) else None
    event_id = header.get("event_id")
    fields = (event_id, open_id, chat, message_id)
    if not all(isinstance(field, str) and field for field in fields):
        return None
    value = action.get("value") if isinstance(action, dict) else None
    raw = value.get(VALUE_KEY) if isinstance(value, dict) else None
    data = ButtonData.decode(raw) if isinstance(raw, str) else None
    return CardAction(str(event_id), str(open_id), str(chat), str(message_id), data)


def callback_answer(answer: str, update: dict[str, Any] | None, *, ok: bool) -> dict[str, Any]:
    """The callback's response body: a toast for the presser, and the card as it now
    reads in place of the pressed one (none: the card stays as it is)."""
    found: dict[str, Any] = {}
    if answer:
        found["toast"] = {"type": "success" if ok else "error", "content": answer}
    if update is not None:
        found["card"] = {"type": "raw", "data": update}
    return found


def lark_content(
    text: str,
    people: Mapping[str, str],
    rows: Sequence[Sequence[Button]],
    *,
    everyone: bool = False,
    last: bool = True,
) -> tuple[str, str]:
    """(msg_type, content) of one piece of a message: a card when buttons go under it
    (the last piece), else a text message."""
    if rows and last:
        return "interactive", card_content(text, people, rows, everyone=everyone)
    return "text", render_text(text, people, everyone=everyone)
