"""The bot's text to Slack: chat.postMessage in pieces Slack shows whole, as mrkdwn with
its people's mentions (`<@U123>`) and, for everyone, `<!channel>`; links not unfurled.
A message with buttons goes as Block Kit blocks (its text in sections, an actions block
per row of buttons), with the same text as the notification's fallback."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from slack_sdk.models.blocks import ActionsBlock, ButtonElement, MarkdownTextObject, SectionBlock
from slack_sdk.web.async_client import AsyncWebClient

from groupmate.bot.adapters.base import (
    Piece,
    mention_pieces,
    mention_targets,
    send_in_pieces,
    sent_with_retries,
    split_text,
)
from groupmate.storage import Button, Member

MESSAGE_LIMIT = 3000  # characters of one message Slack shows whole (it takes 40,000)
# The action_id of the bot's buttons ("groupmate_press_0", ...: unique in a message, as
# Slack asks), which the adapter listens for: another app's buttons are not its business.
PRESS_ACTION_PREFIX = "groupmate_press_"
PRESS_ACTION = re.compile(rf"^{PRESS_ACTION_PREFIX}\d+$")
_SECTION_LIMIT = 3000  # characters of a section block's text


async def post(
    client: AsyncWebClient,
    channel: str,
    text: str,
    people: Sequence[Member],
    thread: str | None,
    *,
    attempts: int = 1,
    everyone: bool = False,
    buttons: Sequence[Sequence[Button]] = (),
) -> str | None:
    """`text` in pieces, each tried up to `attempts` times (an answer: its event was
    acknowledged, Slack won't send it again); the first piece's `ts`, which replies
    in its thread name. With `everyone`, the first piece mentions the channel
    (`<!channel>`, Slack's mention of all its members). `buttons` go under the first
    piece: the message whose `ts` the bot keeps, and so the one a press edits."""

    async def send(piece: Piece) -> str:
        rendered = ("<!channel> " if everyone and piece.first else "") + render_mrkdwn(
            piece.text, people
        )
        with_buttons = piece.first and any(buttons)
        request = functools.partial(
            client.chat_postMessage,
            channel=channel,
            text=rendered,
            blocks=blocks(rendered, buttons) if with_buttons else None,
            thread_ts=thread,
            unfurl_links=False,
            unfurl_media=False,
        )
        answer = await sent_with_retries(request, what="slack: an answer", attempts=attempts)
        return str(answer.get("ts"))

    return await send_in_pieces(text, MESSAGE_LIMIT, send)


def blocks(mrkdwn: str, rows: Sequence[Sequence[Button]]) -> list[dict[str, Any]]:
    """`mrkdwn` (rendered for Slack already) in sections, then an actions block per row
    of buttons, each button's value its data."""
    found: list[dict[str, Any]] = [
        SectionBlock(text=MarkdownTextObject(text=part)).to_dict()
        for part in split_text(mrkdwn, _SECTION_LIMIT)
        if part.strip()
    ]
    number = 0
    for row in filter(None, rows):
        elements = []
        for button in row:
            action_id = f"{PRESS_ACTION_PREFIX}{number}"
            elements.append(
                ButtonElement(text=button.label, action_id=action_id, value=button.data)
            )
            number += 1
        found.append(ActionsBlock(elements=elements).to_dict())
    return found


def render_mrkdwn(text: str, people: Sequence[Member]) -> str:
    """`text` for Slack: &, < and > escaped, and each "@name" of `people` a mention
    (`<@U123>`), which notifies them."""
    links = mention_targets(people, "sl:")
    return "".join(
        f"<@{links[piece]}>" if mention else _escaped(piece)
        for piece, mention in mention_pieces(text, links)
    )


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
