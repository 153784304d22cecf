"""A reminder's buttons on Slack: Block Kit blocks (a section with the text, an actions
block of buttons per row), and the `block_actions` payload a press of one posts.

Slack posts interaction payloads form-encoded (`payload=<JSON>`) to the app's
Interactivity Request URL, signed as its events are: bolt checks the signature (401 for a
bad one, before anything runs) on the same route handler as the Events API, and in
Socket Mode the payload comes over the app's socket like an event. Slack wants the
answer within 3 s: the press is acknowledged at once and acted on after, then the
message is edited in place (`chat.update`) and the presser alone told the outcome
(`chat.postEphemeral`).

The chat and the presser come from the payload's `channel` and `user`, which Slack's
signature vouches for; the button's value (`ButtonData`) only names the reminder, the
occurrence and what to do. The press's id is the action's `action_ts` with the user: a
payload posted again (a replay within the signature's five minutes) acts once.
Payload shape: https://docs.slack.dev/reference/interaction-payloads/block_actions-payload
"""

from __future__ import annotations

import dataclasses
import functools
import logging
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from groupmate.bot.adapters.base import BotHost, sent_with_retries
from groupmate.bot.adapters.pressing import NOT_A_BUTTON, first_piece, outcome_of
from groupmate.bot.adapters.slack_people import SlackPeople, slack_code
from groupmate.bot.adapters.slack_send import MESSAGE_LIMIT, blocks, render_mrkdwn
from groupmate.bot.presses import ButtonData, Press
from groupmate.storage import Member, OutgoingMessage
from groupmate.storage.outgoing import safe_error

log = logging.getLogger("groupmate.bot.adapters.slack")


def press_of(body: dict[str, Any], presser: Member) -> Press | None:
    """The bot's view of a `block_actions` payload; None when its value is not one of
    the bot's buttons (forged, or an old version's) or it names no message of a channel."""
    action = (body.get("actions") or [{}])[0]
    data = ButtonData.decode(str(action.get("value", "")))
    channel = (body.get("channel") or {}).get("id")
    ts = (body.get("container") or {}).get("message_ts")
    stamp = action.get("action_ts")  # with the user, the press's id: required
    if data is None or not all(isinstance(x, str) and x for x in (channel, ts, stamp)):
        return None
    return Press(
        chat_id=f"sl:{channel}",
        chat_type="private" if str(channel).startswith("D") else "group",
        sender_id=presser.user_id,
        sender_name=presser.name,
        data=data,
        press_id=f"slack:{stamp}:{presser.user_id}",
        message_id=str(ts),
    )


async def answer_press(
    client: AsyncWebClient, bot: BotHost, people: SlackPeople, body: dict[str, Any]
) -> None:
    """Acts on an acknowledged press as its presser; edits the message, answers them."""
    user = str((body.get("user") or {}).get("id", ""))
    channel = str((body.get("channel") or {}).get("id", ""))
    if not user or not channel:
        return  # no one to answer, nowhere: not a press Slack sends
    try:
        presser = Member(f"sl:{user}", await people.name(user))
        people.saw(f"sl:{channel}", presser)  # who presses is in the channel
        press = press_of(body, presser)
        if press is not None and press.chat_type == "group":
            # With the presser's rights, as their message would have (workspace admins).
            press = dataclasses.replace(press, sender_is_admin=await people.is_admin(user))
        outcome = None if press is None else await outcome_of(bot, press)
        if outcome is not None and outcome.repeated:
            return  # the same payload again (a replay): answered the first time
        if outcome is not None and outcome.update is not None and press is not None:
            await _edit(client, channel, str(press.message_id), outcome.update)
        answer = NOT_A_BUTTON if outcome is None else outcome.answer
        if answer:
            thread = (body.get("message") or {}).get("thread_ts")
            tell = functools.partial(
                client.chat_postEphemeral, channel=channel, user=user, text=answer, thread_ts=thread
            )
            await sent_with_retries(tell, what="slack: chat.postEphemeral")
    except Exception as exc:
        log.error("slack: answering a press failed: %s", safe_error(exc, code=slack_code))


async def _edit(client: AsyncWebClient, channel: str, ts: str, update: OutgoingMessage) -> None:
    """The pressed message as `update` reads: its text (the part the message showed, for
    one too long for one) and the buttons that remain."""
    rendered = render_mrkdwn(first_piece(update.text, MESSAGE_LIMIT), update.people)
    edit = functools.partial(
        client.chat_update,
        channel=channel,
        ts=ts,
        text=rendered,
        blocks=blocks(rendered, update.buttons),
    )
    await sent_with_retries(edit, what="slack: chat.update")
