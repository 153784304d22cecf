"""The bot's text to Telegram: in pieces Telegram accepts (4096 characters after parsing
the markup), as HTML with its people's text mentions, without link previews; an answer
to someone's message is retried through network blips (a reminder is retried by the
reminder engine instead)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from functools import partial

import telegram
from telegram import LinkPreviewOptions, ReplyParameters

from groupmate.bot.adapters.base import Piece, send_in_pieces
from groupmate.bot.adapters.telegram_api import MESSAGE_LIMIT, ApiError, call
from groupmate.bot.adapters.telegram_events import render_html
from groupmate.bot.adapters.telegram_presses import keyboard
from groupmate.storage import Button, Member

log = logging.getLogger("groupmate.bot.adapters.telegram")

_REPLY_ATTEMPTS = 4  # a reply lost to a network blip is retried this often
_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


async def send_text(
    client: telegram.Bot,
    chat: int,
    text: str,
    people: Sequence[Member],
    reply_to: int | None,
    buttons: Sequence[Sequence[Button]] = (),
) -> str | None:
    """Sends `text` in pieces Telegram accepts; the first piece's message id. `buttons`
    go under the first piece: the message the bot keeps the id of (a reply or a
    reaction names it), and so the one a press edits in place."""
    markup = keyboard(buttons)

    async def send(piece: Piece) -> str:
        # Only the first piece is a reply; it goes out even if that message is gone.
        reply = (
            ReplyParameters(reply_to, allow_sending_without_reply=True)
            if reply_to is not None and piece.first
            else None
        )
        request = partial(
            client.send_message,
            chat,
            render_html(piece.text, people),
            parse_mode="HTML",
            link_preview_options=_NO_PREVIEW,
            reply_parameters=reply,
            reply_markup=markup if piece.first else None,
        )
        sent = await call("sendMessage", request, patient=True)
        return str(sent.message_id)

    return await send_in_pieces(text, MESSAGE_LIMIT, send)


async def send_reply(
    client: telegram.Bot,
    chat: int,
    text: str,
    reply_to: int | None,
    buttons: Sequence[Sequence[Button]] = (),
) -> str | None:
    """A reply to an incoming message, retried through network blips; its message id."""
    backoff = 1.0
    for attempt in range(_REPLY_ATTEMPTS):
        try:
            return await send_text(client, chat, text, (), reply_to, buttons)
        except ApiError as exc:
            if not exc.transient or attempt == _REPLY_ATTEMPTS - 1:
                raise
            log.warning("telegram: %s; retrying in %.0fs", exc, backoff)
            await asyncio.sleep(backoff)
            backoff *= 2
    raise AssertionError("unreachable")  # the loop returns or raises
