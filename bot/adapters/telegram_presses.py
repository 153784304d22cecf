"""A reminder's buttons on Telegram: an inline keyboard under the message, and the
`callback_query` a press of one sends.

The chat comes from the message the keyboard is under and the presser from the query's
`from`, both as Telegram reports them (the update came over the bot's own long poll, or
a webhook call with its secret token); the button's data only names the reminder, the
occurrence and what to do. The query's id is the press's id: Telegram delivers an update
again after a restart until the poll confirms it, and the bot acts on one id once.

Telegram shows a spinner on the button until `answerCallbackQuery`, and takes it only
for a short while: the press is answered with the outcome's line, or `_ANSWER_WITHIN`
seconds after it came (a chat's presses are acted on one at a time) with "working on
it" while the bot finishes; refusals are answered too. The message is then edited to
how it reads now (`editMessageText`, with the buttons still left, or none).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial

import telegram
from telegram import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, LinkPreviewOptions

from groupmate.bot.adapters.base import BotHost
from groupmate.bot.adapters.pressing import NOT_A_BUTTON, first_piece, outcome_of
from groupmate.bot.adapters.telegram_api import MESSAGE_LIMIT, ApiError, call
from groupmate.bot.adapters.telegram_events import is_answered, render_html
from groupmate.bot.adapters.telegram_people import TelegramPeople
from groupmate.bot.presses import ButtonData, Press, PressOutcome
from groupmate.storage import Button

log = logging.getLogger("groupmate.bot.adapters.telegram")

# Seconds a press may take before its spinner is stopped with WORKING: Telegram's
# clients give up on an unanswered query after about 15 s, and the person waits.
_ANSWER_WITHIN = 5.0
WORKING = "Working on it…"
_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


@dataclass(frozen=True, slots=True)
class Pressed:
    """A `callback_query` as it came, and when (`time.monotonic()`): its deadline runs
    from then, not from when its turn among the chat's presses comes."""

    query: CallbackQuery
    at: float = field(default_factory=time.monotonic)


def keyboard(rows: Sequence[Sequence[Button]]) -> InlineKeyboardMarkup | None:
    """`rows` of buttons as an inline keyboard; None for none (no keyboard at all)."""
    if not any(rows):
        return None
    return InlineKeyboardMarkup(
        [[InlineKeyboardButton(b.label, callback_data=b.data) for b in row] for row in rows if row]
    )


def press_of(query: CallbackQuery, people: TelegramPeople) -> Press | None:
    """The bot's view of a press; None when there is nothing to act on: a button of
    another bot's (or forged data), or one under no message of a chat the bot answers
    (an inline-mode message, a channel post)."""
    data = ButtonData.decode(query.data or "")
    message = query.message
    if data is None or message is None or not is_answered(message.chat):
        return None
    chat = message.chat
    # Someone who presses is in the chat: "remind @them" can find them from now on.
    presser = people.remember(f"tg:{chat.id}", query.from_user)
    return Press(
        chat_id=f"tg:{chat.id}",
        chat_type="private" if chat.type == chat.PRIVATE else "group",
        sender_id=presser.user_id,
        sender_name=presser.name,
        data=data,
        press_id=f"tg:cb:{query.id}",
        message_id=str(message.message_id),
    )


async def answer_press(
    client: telegram.Bot, bot: BotHost, people: TelegramPeople, pressed: Pressed
) -> None:
    """Acts on the press (or refuses one `press_of` can't read) and answers the query,
    then edits the message."""
    query = pressed.query
    press = press_of(query, people)
    if press is None:
        await _answer(client, query.id, NOT_A_BUTTON)
        return
    acting = asyncio.ensure_future(_act(bot, people, press))
    left = _ANSWER_WITHIN - (time.monotonic() - pressed.at)
    done, _ = await asyncio.wait({acting}, timeout=max(left, 0.0))
    if not done:
        await _answer(client, query.id, WORKING)
    outcome = await acting
    if done:
        await _answer(client, query.id, outcome.answer)
    elif outcome.answer and outcome.update is None:
        # The query was answered already; Telegram has no other line for one person.
        log.warning("telegram: a slow press's answer was not shown: %s", outcome.answer)
    if outcome.update is not None and query.message is not None:
        await edit_in_place(client, query.message.chat.id, query.message.message_id, outcome)


async def _act(bot: BotHost, people: TelegramPeople, press: Press) -> PressOutcome:
    """The press acted on with the presser's rights: a group's admin may mark someone
    else's reminder done, as their typed /done may (asked within the press's deadline;
    the answer is cached)."""
    if press.chat_type == "group":
        chat = int(press.chat_id.removeprefix("tg:"))
        user = int(press.sender_id.removeprefix("tg:"))
        press = dataclasses.replace(press, sender_is_admin=await people.is_admin(chat, user))
    return await outcome_of(bot, press)


async def _answer(client: telegram.Bot, query_id: str, text: str) -> None:
    # show_alert false: a toast, gone by itself; no text stops the spinner only.
    request = partial(client.answer_callback_query, query_id, text or None, show_alert=False)
    for attempt in (1, 2):
        try:
            await call("answerCallbackQuery", request)
            return
        except ApiError as exc:  # too old (the bot was down), or Telegram unreachable
            if attempt == 1 and exc.transient:
                # Most often a pooled connection the server closed as it was reused; an
                # answer given twice is harmless, a spinner left turning is not.
                continue
            log.warning("telegram: %s", exc)
            return


async def edit_in_place(
    client: telegram.Bot, chat: int, message_id: int, outcome: PressOutcome
) -> None:
    """The pressed message as `outcome.update` reads: its text (the part the message
    showed, for one too long for one) and its remaining buttons; no keyboard left when
    none remain. "Message is not modified" (pressed twice, nothing new) is no error."""
    update = outcome.update
    assert update is not None
    request = partial(
        client.edit_message_text,
        render_html(first_piece(update.text, MESSAGE_LIMIT), update.people),
        chat_id=chat,
        message_id=message_id,
        parse_mode="HTML",
        link_preview_options=_NO_PREVIEW,
        reply_markup=keyboard(update.buttons),
    )
    try:
        await call("editMessageText", request, patient=True)
    except ApiError as exc:
        if "message is not modified" not in str(exc).casefold():
            log.warning("telegram: the pressed message was not updated: %s", exc)
