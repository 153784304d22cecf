"""The bot's text to Slack: chat.postMessage in pieces Slack shows whole, as mrkdwn with
its people's mentions (`<@U123>`) and, for everyone, `<!channel>`; links not unfurled."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from slack_sdk.web.async_client import AsyncWebClient

from groupmate.bot.adapters.base import (
    Piece,
    mention_pieces,
    mention_targets,
    send_in_pieces,
    sent_with_retries,
)
from groupmate.storage import Member

MESSAGE_LIMIT = 3000  # characters of one message Slack shows whole (it takes 40,000)


async def post(
    client: AsyncWebClient,
    channel: str,
    text: str,
    people: Sequence[Member],
    thread: str | None,
    *,
    attempts: int = 1,
    everyone: bool = False,
) -> str | None:
    """`text` in pieces, each tried up to `attempts` times (an answer: its event was
    acknowledged, Slack won't send it again); the first piece's `ts`, which replies
    in its thread name. With `everyone`, the first piece mentions the channel
    (`<!channel>`, Slack's mention of all its members)."""

    async def send(piece: Piece) -> str:
        request = functools.partial(
            client.chat_postMessage,
            channel=channel,
            text=("<!channel> " if everyone and piece.first else "")
            + render_mrkdwn(piece.text, people),
            thread_ts=thread,
            unfurl_links=False,
            unfurl_media=False,
        )
        answer = await sent_with_retries(request, what="slack: an answer", attempts=attempts)
        return str(answer.get("ts"))

    return await send_in_pieces(text, MESSAGE_LIMIT, send)


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
