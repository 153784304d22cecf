"""What the Slack adapter reads out of Slack's events: reactions, mentions, which events
are the same message, and how much of a channel the app is allowed to read.

An app may subscribe to `message.*` events (it sees every message of its channels, and
the bot's memory, find, catch-up and digests, with them) or only to `app_mention` (with
the `app_mentions:read` scope: it sees the messages that mention it, which admins prefer
when a bot should not read the channel). With both, Slack sends a `message` and an
`app_mention` event for one mention, with the same channel and `ts`: both go to the bot,
whose router acts on a message id (the `ts`) of a chat (the channel) once, as it does
for Slack's re-sent events. Dropping the second here would lose what the router does
with it when the first one's answer failed to send: it sends the logged answer again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from groupmate.bot.messages import IncomingReaction

# Slack's encoding of a user mention in text: <@U123> or <@U123|name>.
USER_TOKEN = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")
# The scopes without which Slack sends no `message` event of a channel (message.channels,
# message.groups, message.mpim need them); DMs (im:history) are the bot's own chats.
_CHANNEL_HISTORY = frozenset({"channels:history", "groups:history", "mpim:history"})

# How much of its channels the bot reads: "every message" (it may be sent them all),
# "only what it is sent" (mentions, replies in its threads, DMs) or "unknown" (Slack
# did not say the token's scopes, and no channel message came yet).
Reading = Literal["every message", "only what it is sent", "unknown"]
ONLY_WHAT_IT_IS_SENT = (
    "The Slack app may not read its channels' messages (no channels:history scope): "
    "memory features (find, catch-up, digests) see only what the bot is sent: mentions, "
    "replies in its threads and DMs."
)


def reading_of(headers: Mapping[str, Any]) -> Reading:
    """What the token may read, from the `X-OAuth-Scopes` header Slack puts on every Web
    API answer (auth.test's, here): the scopes the workspace granted the app."""
    scopes = next((str(v) for k, v in headers.items() if k.lower() == "x-oauth-scopes"), None)
    if scopes is None:
        return "unknown"
    granted = {scope.strip() for scope in scopes.split(",")}
    return "every message" if granted & _CHANNEL_HISTORY else "only what it is sent"


def reaction_of(event: dict[str, Any], *, me: str) -> IncomingReaction | None:
    """The bot's view of a `reaction_added` / `reaction_removed` event: None for one on
    something other than a message (a file, a file comment), and for the bot's own. The
    event has no `channel_type`: Slack's DM channel ids start with "D"."""
    item = event.get("item")
    if not isinstance(item, dict) or item.get("type") != "message":
        return None
    user, name = event.get("user"), event.get("reaction")
    channel, ts = item.get("channel"), item.get("ts")
    if not (isinstance(user, str) and isinstance(name, str)):
        return None
    if not (isinstance(channel, str) and isinstance(ts, str)) or user == me:
        return None
    return IncomingReaction(
        chat_id=f"sl:{channel}",
        chat_type="private" if channel.startswith("D") else "group",
        sender_id=f"sl:{user}",
        message_id=ts,
        # Slack's name in colons, as people type it; a skin tone stays as Slack names
        # it (":thumbsup::skin-tone-2:"), which any Slack client reads back.
        emoji=f":{name}:",
        added=event.get("type") == "reaction_added",
        timestamp=stamp(event.get("event_ts")),
    )


def stamp(ts: Any) -> datetime | None:
    """A Slack timestamp ("1360782804.083113") as a time; None when it is not one."""
    try:
        return datetime.fromtimestamp(float(ts), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def mentioned_ids(event: dict[str, Any]) -> list[str]:
    """The user ids the message mentions, from its rich-text blocks (the platform's
    mention entities), else from its text's `<@U…>` tokens (Slack's encoding of them)."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "user" and isinstance(node.get("user_id"), str):
                found.append(node["user_id"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(event.get("blocks") or [])
    if not found:
        found = USER_TOKEN.findall(str(event.get("text", "")))
    return list(dict.fromkeys(found))
