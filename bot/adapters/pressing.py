"""What every adapter with buttons does with a press, whatever its platform: the bot acts
on it, and the presser hears back even when acting failed."""

from __future__ import annotations

import logging

from groupmate.bot.adapters.base import BotHost, split_text
from groupmate.bot.presses import Press, PressOutcome
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)

# The presser's answer when the bot could not act (its database down, a bug): a press
# must never go unanswered, and nothing of the failure reaches the chat.
PRESS_FAILED = "Sorry, that didn't work. Try again in a moment."
# The answer to a press of a button the bot can't read (another bot's, a forged one, an
# old version's): `ButtonData.decode` said None, so nothing was acted on.
NOT_A_BUTTON = "This button doesn't work any more."


async def outcome_of(bot: BotHost, press: Press) -> PressOutcome:
    """`bot.press(press)`; a refusal with `PRESS_FAILED` when acting raised."""
    try:
        return await bot.press(press)
    except Exception as exc:
        log.error("a press in %s was not acted on: %s", press.chat_id, safe_error(exc))
        return PressOutcome(ok=False, answer=PRESS_FAILED)


def first_piece(text: str, limit: int) -> str:
    """The part of `text` the first of its messages shows: the one with the buttons,
    whose id the bot keeps, and so the one edited in place."""
    return split_text(text, limit)[0]
