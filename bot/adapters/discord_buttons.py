"""A reminder's buttons on Discord: message components on sends, and the component
interactions (INTERACTION_CREATE type 3, MESSAGE_COMPONENT) that presses send back.

The buttons are a discord.py `View` used only to build the components (action rows of
buttons, each `custom_id` a `ButtonData`, at most 64 of Discord's 100 characters): it is
stopped before it is sent, so discord.py keeps no callback for it; every press reaches
the adapter through the client's `on_interaction`, after a restart too. The gateway is
the bot's own authenticated connection: its interactions need no signature (only the
HTTP interactions endpoint, which this adapter does not serve, is signed with Ed25519).

Discord wants an answer to an interaction within 3 seconds, else the presser sees "This
interaction failed" and the token's first answer is lost. A press acted on within
`ACT_WITHIN` is answered with UPDATE_MESSAGE (type 7: the message as it now reads) and
the answer as an ephemeral followup (flags 64, only the presser sees it); a slower one
is acknowledged with DEFERRED_UPDATE_MESSAGE (type 6) first, and the message is edited
once the press is acted on (the token stays good for 15 minutes). See
https://discord.com/developers/docs/interactions/receiving-and-responding.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import discord

from groupmate.bot.adapters.base import BotHost
from groupmate.bot.adapters.discord_events import MESSAGE_LIMIT, PREFIX, render
from groupmate.bot.presses import ButtonData, Press, PressOutcome
from groupmate.storage import Button, OutgoingMessage
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)

ACT_WITHIN = 2.0  # seconds a press may take before it is acknowledged first (Discord: 3)
NOT_OURS = "This button is no longer in use."
FAILED = "That didn't work. Please try again in a moment."
# An edit in place notifies nobody anew: no mentions are parsed from the new text.
_NO_PINGS = discord.AllowedMentions.none()
_STYLES = {"done": discord.ButtonStyle.success, "me_too": discord.ButtonStyle.primary}


def view_of(rows: Sequence[Sequence[Button]]) -> discord.ui.View | None:
    """The buttons as Discord components, one action row per row (Discord: at most 5
    rows of 5); None for no buttons. A `View` stopped at once: a builder, no callback."""
    if not rows:
        return None
    view = discord.ui.View(timeout=None)
    for number, row in enumerate(rows[:5]):
        for button in row[:5]:
            data = ButtonData.decode(button.data)
            style = _STYLES.get(data.action if data else "", discord.ButtonStyle.secondary)
            view.add_item(
                discord.ui.Button(
                    label=button.label[:80], custom_id=button.data, style=style, row=number
                )
            )
    view.stop()
    return view


def buttons_under(rows: Sequence[Sequence[Button]], *, last: bool) -> dict[str, Any]:
    """The `view` argument of a send: the buttons go under a message's last piece."""
    view = view_of(rows) if last else None
    return {"view": view} if view is not None else {}


def press_of(interaction: discord.Interaction) -> Press | None:
    """The press a component interaction stands for: the chat, the presser and the
    message from Discord's event, only the reminder and the action from the button's
    data. None when the data is not one of our buttons'."""
    data: dict[str, Any] = dict(interaction.data or {})
    custom_id = data.get("custom_id")
    button = ButtonData.decode(custom_id) if isinstance(custom_id, str) else None
    if button is None or interaction.channel_id is None:
        return None
    user = interaction.user
    return Press(
        chat_id=f"{PREFIX}{interaction.channel_id}",
        # Only a DM's interaction has no guild (as with messages and reactions).
        chat_type="private" if interaction.guild_id is None else "group",
        sender_id=f"{PREFIX}{user.id}",
        sender_name=user.display_name,
        data=button,
        press_id=f"discord:{interaction.id}",
        message_id=str(interaction.message.id) if interaction.message is not None else None,
        # With the presser's rights, as their message would have (Manage Server, as
        # discord_events reads it): Discord resolves the member's permissions in it.
        sender_is_admin=interaction.guild_id is not None and interaction.permissions.manage_guild,
    )


async def answer_press(bot: BotHost, interaction: discord.Interaction) -> None:
    """Act on one component interaction and answer it within Discord's deadline. Never
    raises: an answer that did not reach Discord is logged (the presser sees "failed")."""
    try:
        await _answer(bot, interaction)
    except Exception as exc:
        log.error("discord: answering a press failed: %s", safe_error(exc, code=http_code))
        log.debug("discord: the failure", exc_info=True)


async def _answer(bot: BotHost, interaction: discord.Interaction) -> None:
    if interaction.type is not discord.InteractionType.component:
        return  # slash commands and modals: the bot registers none
    press = press_of(interaction)
    if press is None:
        await interaction.response.send_message(NOT_OURS, ephemeral=True)
        return
    acting = asyncio.ensure_future(bot.press(press))
    done, _ = await asyncio.wait({acting}, timeout=ACT_WITHIN)
    if not done:  # slow: acknowledge now (type 6), edit when it is acted on
        await interaction.response.defer()
    try:
        outcome = await acting
    except Exception as exc:  # Bot.press does not raise for bad data: the store failed
        log.error("discord: a press was not acted on: %s", safe_error(exc))
        outcome = PressOutcome(ok=False, answer=FAILED)
    await _respond(interaction, outcome, deferred=not done)


async def _respond(
    interaction: discord.Interaction, outcome: PressOutcome, *, deferred: bool
) -> None:
    """The message as it now reads (type 7, or an edit after type 6), then the answer to
    the presser alone (an ephemeral message or followup)."""
    update = outcome.update
    if update is None and not deferred:
        if outcome.answer:  # type 4 with flags 64: one call, nothing else changes
            await interaction.response.send_message(outcome.answer, ephemeral=True)
        else:
            await interaction.response.defer()
        return
    if update is not None:
        edit = _edit(update)
        if deferred:
            await interaction.edit_original_response(**edit)
        else:
            await interaction.response.edit_message(**edit)
    if outcome.answer:
        await interaction.followup.send(outcome.answer, ephemeral=True)


def http_code(exc: BaseException) -> str | None:
    """Discord's status and code: its error's text may quote the request (no tokens)."""
    if isinstance(exc, discord.HTTPException):
        return f"HTTP {exc.status} (code {exc.code})"
    return None


def _edit(update: OutgoingMessage) -> dict[str, Any]:
    """The edit that makes the message read as `update`. When its text is longer than
    one message (a long reminder went out in pieces, the buttons under the last), the
    text stays as it is and only the buttons change."""
    edit: dict[str, Any] = {"view": view_of(update.buttons), "allowed_mentions": _NO_PINGS}
    text = render(update.text, update.people)
    if len(text) <= MESSAGE_LIMIT:
        edit["content"] = text
    return edit
